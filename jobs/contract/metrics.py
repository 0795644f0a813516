"""The jobs' CloudWatch metrics: namespace, dimensions and names, in one place.

The emitter (jobs.runtime.run_metrics), the declared alarms (jobs.contract.alarms), the
alarms' local stand-in and the stack's dashboard all read these names, so a metric renamed here
is renamed everywhere. One namespace per stage (`DocuFlow/<stage>`); every datum carries the
dimensions Job and Stage, and a breakdown (findings by Severity, by Code) adds one more.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

NAMESPACE_ROOT = "DocuFlow"
JOB, STAGE, SEVERITY, CODE, ACTION = "Job", "Stage", "Severity", "Code", "Action"  # dimension names
# Below this many finished documents a night's failed ratio says little (three uploads, two of
# them broken): neither the exit code nor the alarm judge it.
MIN_DOCUMENTS_FOR_RATIO = 5
# The reconcile's finding severities (jobs.reconcile.rules.findings.Severity; a test holds them equal),
# here for the alarm and the dashboard, which do not import the reconcile.
SEVERITIES = ("error", "warning")


def namespace(stage: str) -> str:
    return f"{NAMESPACE_ROOT}/{stage}"


class Job(StrEnum):
    """The Job dimension of the jobs this tree declares (each declaration says which it publishes,
    and what: JobSpec.publishes, JobSpec.metrics); the alarms and the dashboard's own widgets name
    theirs through these. The dimension is a string: a new job may publish under its own.
    """

    INGEST = "ingest"
    RECONCILE = "reconcile"
    DRILL = "drill"
    ERASURE = "erasure"
    DOCUMENTS = "documents"
    ROLLBACK = "rollback"
    UNDELETE = "undelete"


class Metric(StrEnum):
    HEARTBEAT = "Heartbeat"  # 1 per scheduled run that reached its end (a missing one: a night that did not run)
    # 1 per run a person started (no DOCUFLOW_SCHEDULED_TIME) that reached its end: drawn, never a
    # heartbeat, so a manual backfill or reconcile cannot hide a night the schedule missed
    MANUAL_RUNS = "ManualRuns"
    DURATION = "DurationSeconds"
    # ingest
    RECEIVED = "DocumentsReceived"  # decided this run: claimed, skipped or dead-lettered
    PROCESSED = "Processed"
    SENT_TO_REVIEW = "SentToReview"
    FAILED = "Failed"
    FAILED_RATIO = "FailedRatio"  # Failed / finished; published from MIN_DOCUMENTS_FOR_RATIO on
    DEAD_LETTERED = "DeadLettered"
    SKIPPED = "Skipped"
    QUEUE_DEPTH = "QueueDepth"  # left waiting in the arrival queue when the drain stopped
    DEAD_LETTER_DEPTH = "DeadLetterQueueDepth"
    TEXTRACT_PAGES = "TextractPages"
    ESTIMATED_COST = "EstimatedCostUsd"  # the run's AWS cost at list prices (jobs.ingest.costs)
    # reconcile
    FINDINGS = "Findings"  # open tonight, with Severity (every severity, zeros included) or Code
    # first seen tonight (the ledger's state "new"), by Severity (zeros included) and by Code: what
    # the findings alarms judge, so a long-open known finding cannot mask the next new one
    NEW_FINDINGS = "NewFindings"
    ITEMS_JUDGED = "ItemsJudged"
    # days since the newest restore drill report (or, before the first, since the stack's first
    # reconcile report): the drill's heartbeat, which no alarm window could span (jobs.contract.alarms)
    DAYS_SINCE_DRILL = "DaysSinceLastDrill"
    # restore drill: the recovery point's age and the restore's duration it measured, and 1 when
    # the drill failed or missed either target (0 on a good drill: a clean night is not missing data)
    RPO = "RpoSeconds"
    RTO = "RtoSeconds"
    TARGETS_MISSED = "TargetsMissed"
    # erasure: what it deleted for good, and the documents a legal hold kept
    ITEMS_DELETED = "ItemsDeleted"
    VERSIONS_DELETED = "ObjectVersionsDeleted"  # versions and delete markers
    DOCUMENTS_KEPT = "DocumentsKeptForHold"
    # a document's owner or operator action: 1 per run, with the Action (delete, restore, hold,
    # release), and whether it changed the item (0: nothing to change, a rerun)
    DOCUMENT_ACTIONS = "DocumentActions"
    ITEMS_CHANGED = "ItemsChanged"
    # rollback and undelete: what they put back, and the documents a person's decision kept as they are
    ITEMS_ROLLED_BACK = "ItemsRolledBack"
    MARKERS_REMOVED = "DeleteMarkersRemoved"
    LEFT_ALONE = "LeftAlone"


class Unit(StrEnum):
    COUNT = "Count"
    SECONDS = "Seconds"
    NONE = "None"


class Datum(BaseModel):
    """One value of one metric of a run; `breakdown` adds dimensions beyond Job and Stage."""

    model_config = ConfigDict(frozen=True)

    metric: Metric
    value: float
    unit: Unit = Unit.COUNT
    breakdown: dict[str, str] = Field(default_factory=dict)


class RunMetrics(BaseModel):
    """What one run of one job publishes at its end."""

    model_config = ConfigDict(frozen=True)

    job: str  # the Job dimension: JobSpec.publishes
    data: tuple[Datum, ...]


# A level rather than a count: several tasks each publish the same level (four drains read one
# queue's depth; a ratio is per task), so a sum across them means nothing. A dashboard or an alarm
# takes their Maximum, or metric math over the counts; every other metric is a count, summed.
LEVELS: frozenset[Metric] = frozenset(
    {
        Metric.DURATION,
        Metric.FAILED_RATIO,
        Metric.QUEUE_DEPTH,
        Metric.DEAD_LETTER_DEPTH,
        Metric.FINDINGS,
        Metric.NEW_FINDINGS,
        Metric.DAYS_SINCE_DRILL,
        Metric.RPO,
        Metric.RTO,
        Metric.TARGETS_MISSED,
    }
)


def statistic_of(metric: str) -> str:
    """The statistic that adds a metric up across tasks and runs: Maximum for a level, else Sum."""
    return "Maximum" if metric in LEVELS else "Sum"


def dimensions(job: str, stage: str, breakdown: dict[str, str] | None = None) -> dict[str, str]:
    return {JOB: str(job), STAGE: stage, **(breakdown or {})}
