"""The declared alarms: what a bad night looks like in the metrics, in one spec.

The Pulumi components declare a CloudWatch alarm from each spec, and the local stand-in
(jobs.local.standins.alarms) evaluates the same specs against the metrics in moto's CloudWatch,
so "which alarms are in ALARM now?" has one answer in both places. Every spec names its runbook
entry in docs/operations.md.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from jobs.contract import layout
from jobs.contract.metrics import CODE, JOB, SEVERITIES, SEVERITY, Job, Metric, dimensions, namespace

DAY = 86_400
RUNBOOK = "docs/operations.md"
SQS_NAMESPACE = "AWS/SQS"  # the arrival queue's own metrics, which only AWS produces
OLDEST_MESSAGE_AGE = "ApproximateAgeOfOldestMessage"
QUEUE_NAME = "QueueName"
# Arrivals wait for the nightly drain up to a day by design; past a day and two hours one was missed.
OLDEST_MESSAGE_SECONDS = 26 * 3600
# The reconcile's finding code for a version missing from the change log (jobs.reconcile.findings
# Code.AUDIT_GAP; a test holds them equal), here for the alarm, which does not import the reconcile.
AUDIT_GAP = "AUDIT_GAP"


class Comparison(StrEnum):
    GREATER = "GreaterThanThreshold"
    LESS = "LessThanThreshold"


class Missing(StrEnum):
    """CloudWatch's TreatMissingData (the stand-in knows the two the specs use)."""

    BREACHING = "breaching"  # a metric that stops arriving is itself the alarm (a heartbeat)
    NOT_BREACHING = "notBreaching"


class Statistic(StrEnum):
    SUM = "Sum"
    MAXIMUM = "Maximum"


class AlarmSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str  # the alarm's name after the stage: `docuflow-<stage>-<name>`
    metric: str
    # The jobs' namespace (DocuFlow/<stage>) unless named: AWS/SQS for the queue's age.
    namespace: str | None = None
    dimensions: dict[str, str] = Field(default_factory=dict)  # beyond Stage, in the jobs' namespace
    statistic: Statistic
    period: int  # seconds
    evaluation_periods: int = 1
    threshold: float
    comparison: Comparison
    missing: Missing
    runbook: str  # the anchor of the entry in docs/operations.md
    description: str
    # False: judged by the local stand-in only, because the stack already has the alarm on AWS's
    # own metric (the arrival DLQ's depth, components.alerts.queue_depth_alarm).
    deployed: bool = True

    def breaches(self, value: float) -> bool:
        if self.comparison is Comparison.GREATER:
            return value > self.threshold
        return value < self.threshold

    @property
    def runbook_url(self) -> str:
        return f"{RUNBOOK}#{self.runbook}"

    def metric_namespace(self, stage: str) -> str:
        return self.namespace or namespace(stage)

    def metric_dimensions(self, stage: str) -> dict[str, str]:
        """The alarm's metric dimensions: the arrival queue's name on AWS/SQS, else the jobs' (Job,
        Stage, the breakdown, in the order the emitter writes them: moto matches a query's
        dimensions as an ordered list, where CloudWatch takes them as a set).
        """
        if self.namespace == SQS_NAMESPACE:
            return {QUEUE_NAME: layout.arrivals_queue_name(stage)}
        breakdown = {k: v for k, v in self.dimensions.items() if k != JOB}
        return dimensions(Job(self.dimensions[JOB]), stage, breakdown)


def _heartbeat(job: Job) -> AlarmSpec:
    return AlarmSpec(
        name=f"{job.value}-heartbeat",
        metric=Metric.HEARTBEAT,
        dimensions={JOB: job.value},
        statistic=Statistic.SUM,
        period=DAY,
        threshold=1,
        comparison=Comparison.LESS,
        missing=Missing.BREACHING,
        runbook=f"{job.value}-heartbeat",
        description=f"No {job.value} run completed in the last 24 hours: a night that did not run.",
    )


def _any_over_zero(name: str, job: Job, metric: Metric, description: str, **breakdown: str) -> AlarmSpec:
    """A count a good night keeps at 0 (published as 0, so a missing night is the heartbeat's)."""
    return AlarmSpec(
        name=name,
        metric=metric,
        dimensions={JOB: job.value, **breakdown},
        statistic=Statistic.MAXIMUM,
        period=DAY,
        threshold=0,
        comparison=Comparison.GREATER,
        missing=Missing.NOT_BREACHING,
        runbook=name,
        description=description,
    )


def _arrivals_stalled(seconds: int) -> AlarmSpec:
    """The arrival queue's oldest message past the bound, three 5-minute periods running."""
    return AlarmSpec(
        name="arrivals-stalled",
        metric=OLDEST_MESSAGE_AGE,
        namespace=SQS_NAMESPACE,
        statistic=Statistic.MAXIMUM,
        period=300,
        evaluation_periods=3,
        threshold=seconds,
        comparison=Comparison.GREATER,
        missing=Missing.NOT_BREACHING,
        runbook="arrivals-stalled",
        description=f"An arrival has waited over {seconds} s: the drain stalled or did not run.",
    )


def declared_alarms(
    failed_ratio_threshold: float, oldest_message_seconds: int = OLDEST_MESSAGE_SECONDS
) -> tuple[AlarmSpec, ...]:
    """The stack's alarms; the thresholds are stack settings (JobSettings.failed_ratio_threshold,
    StackSettings.arrivals_max_age_seconds).
    """
    return (
        _heartbeat(Job.INGEST),
        _heartbeat(Job.RECONCILE),
        AlarmSpec(
            name="ingest-failed-ratio",
            metric=Metric.FAILED_RATIO,
            dimensions={JOB: Job.INGEST.value},
            statistic=Statistic.MAXIMUM,
            period=DAY,
            threshold=failed_ratio_threshold,
            comparison=Comparison.GREATER,
            missing=Missing.NOT_BREACHING,  # published only from MIN_DOCUMENTS_FOR_RATIO on
            runbook="ingest-failed-ratio",
            description=f"More than {failed_ratio_threshold:.0%} of a night's documents FAILED.",
        ),
        # Judged locally only: on AWS the alarm on the DLQ's own depth covers it.
        _any_over_zero(
            "ingest-dead-letters",
            Job.INGEST,
            Metric.DEAD_LETTER_DEPTH,
            "Messages wait in the arrival queue's dead-letter queue for a person.",
        ).model_copy(update={"deployed": False}),
        _any_over_zero(
            "reconcile-error-findings",
            Job.RECONCILE,
            Metric.FINDINGS,
            "The night's reconcile found error findings: the table and the buckets disagree.",
            **{SEVERITY: SEVERITIES[0]},
        ),
        # An error finding too, alarmed on its own: its cause and runbook are the change log's
        # delivery, not the table and the buckets.
        _any_over_zero(
            "reconcile-audit-gap",
            Job.RECONCILE,
            Metric.FINDINGS,
            "Versions of documents have no record in the change log: the audit trail has a gap.",
            **{CODE: AUDIT_GAP},
        ),
        _any_over_zero(
            "drill-targets-missed",
            Job.DRILL,
            Metric.TARGETS_MISSED,
            "The restore drill failed or missed its RPO or RTO target.",
        ),
        _arrivals_stalled(oldest_message_seconds),
    )
