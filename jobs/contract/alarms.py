"""The declared alarms: what a bad night looks like in the metrics, in one spec.

The Pulumi components declare a CloudWatch alarm from each spec, and the local stand-in
(jobs.local.standins.alarms) evaluates the same specs against the metrics in moto's CloudWatch,
so "which alarms are in ALARM now?" has one answer in both places. Every spec names its runbook
entry in docs/operations.md.

The windows follow how CloudWatch evaluates an alarm: every minute, over the `evaluation_periods`
periods ending then, ALARM when `datapoints_to_alarm` of them breach (a period without data
counting as `missing` says). A heartbeat is stamped when a run ends, so its window is hourly
periods spanning more than a day (HEARTBEAT_HOURS): a run ending up to two hours later than the
night before, or a DST fall-back night an hour later in UTC, still has one heartbeat in window,
and a night that did not run alarms HEARTBEAT_HOURS after the last run ended (CloudWatch takes at
most seven days in a window, one day for periods under an hour). The per-night alarms read a
window of NIGHT_SPAN, longer than one night's runs and far shorter than a day: a bad night goes
into ALARM and back to OK before the next night, so CloudWatch, which notifies on state changes
only, notifies again for the next bad night.

A job that runs less often than a window can span (the quarterly restore drill) is watched
through a figure the nightly reconcile publishes, its age in days (DAYS_SINCE_DRILL), judged
against the job's own schedule: its longest gap between firings (jobs.contract.cron) plus
DRILL_MARGIN_DAYS. A stack that schedules no drill declares no such alarm.

The specs are built here; which a stack has is each job's to declare (JobSpec.alarms, read by
jobs.registry.declared_alarms with the stack's `AlarmInputs`), and every job a nightly schedule
starts has its heartbeat's (`heartbeat`).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from jobs.contract import layout
from jobs.contract.cron import longest_gap_days
from jobs.contract.metrics import (
    JOB,
    MIN_DOCUMENTS_FOR_RATIO,
    Job,
    Metric,
    dimensions,
    namespace,
)

DAY = 86_400
HOUR = 3600
# A night's run may end up to LATE_HOURS earlier or later than its usual end (a big night, a slow
# drain), and a DST fall-back night runs an hour later in UTC: the most between two heartbeats is
# a day, twice the lateness and the hour, plus an hour's margin for CloudWatch's own delay.
LATE_HOURS = 2
HEARTBEAT_HOURS = 24 + 2 * LATE_HOURS + 1 + 1
# Every run of one night ends within this span of its first (the drain's bound is 165 min), and
# the next night's runs start at least a day minus the lateness later.
NIGHT_SPAN = 6 * HOUR
RUNBOOK = "docs/operations.md"
# The alarms the dashboard draws a line for at their threshold.
DRILL_OVERDUE, ARRIVALS_STALLED = "drill-overdue", "arrivals-stalled"
SQS_NAMESPACE = "AWS/SQS"  # the arrival queue's own metrics, which only AWS produces
OLDEST_MESSAGE_AGE = "ApproximateAgeOfOldestMessage"
QUEUE_NAME = "QueueName"
# Arrivals wait for the nightly drain up to a day by design; past a day and two hours one was missed.
OLDEST_MESSAGE_SECONDS = 26 * 3600
# The reconcile's finding code for a version missing from the change log (jobs.reconcile.rules.findings
# Code.AUDIT_GAP; a test holds them equal), here for the alarm, which does not import the reconcile.
AUDIT_GAP = "AUDIT_GAP"
# A drill past its schedule's longest gap by this much is overdue: the days a failed drill takes to
# be fixed and run again by hand, Scheduler's own retries, and the nightly reconcile reading the
# age once a day (up to a day late).
DRILL_MARGIN_DAYS = 7


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


class Ratio(BaseModel):
    """A ratio judged by metric math over counts summed across every task of a night (CloudWatch:
    `IF(t0 >= tasks AND d >= minimum, n / d, 0)` with n, d and t0 the sums of their metrics), not
    one task's ratio. `finished`/`tasks` gate it on the night being whole: CloudWatch evaluates
    every minute, so without the gate the first of four tasks to publish is judged alone.
    """

    model_config = ConfigDict(frozen=True)

    numerator: tuple[Metric, ...]
    denominator: tuple[Metric, ...]
    minimum: int  # below this many in the denominator the night is not judged (0)
    finished: Metric | None = None  # one per task that finished (its heartbeat)
    tasks: int = Field(default=1, ge=1)  # judged once this many `finished` are in the period

    def value(self, sums: dict[str, float]) -> float | None:
        """The ratio from each metric's Sum in one period (None: no metric had data)."""
        if not any(m.value in sums for m in (*self.numerator, *self.denominator)):
            return None
        n = sum(sums.get(m.value, 0.0) for m in self.numerator)
        d = sum(sums.get(m.value, 0.0) for m in self.denominator)
        whole = self.finished is None or sums.get(self.finished.value, 0.0) >= self.tasks
        return n / d if whole and d >= self.minimum and d > 0 else 0.0

    def ids(self) -> dict[str, Metric]:
        """The metric math ids of the metrics (n0…, d0…, t0), in CloudWatch's lower-case id form."""
        counts = {f"n{i}": m for i, m in enumerate(self.numerator)} | {
            f"d{i}": m for i, m in enumerate(self.denominator)
        }
        return counts | ({"t0": self.finished} if self.finished is not None else {})

    def expression(self) -> str:
        ids = self.ids()
        n = " + ".join(k for k in ids if k.startswith("n"))
        d = " + ".join(k for k in ids if k.startswith("d"))
        whole = f"t0 >= {self.tasks} AND " if self.finished is not None else ""
        return f"IF({whole}({d}) >= {self.minimum}, ({n}) / ({d}), 0)"


class AlarmSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str  # the alarm's name after the stage: `docuflow-<stage>-<name>`
    metric: str  # for a ratio, the name of what it judges (the label of its expression)
    # The jobs' namespace (DocuFlow/<stage>) unless named: AWS/SQS for the queue's age.
    namespace: str | None = None
    dimensions: dict[str, str] = Field(default_factory=dict)  # beyond Stage, in the jobs' namespace
    statistic: Statistic
    period: int  # seconds
    evaluation_periods: int = 1
    datapoints_to_alarm: int | None = None  # M of N; None: every period (N of N)
    ratio: Ratio | None = None  # metric math over counts instead of `metric` itself
    threshold: float
    comparison: Comparison
    missing: Missing
    runbook: str  # the anchor of the entry in docs/operations.md
    description: str
    # False: judged by the local stand-in only, because the stack already has the alarm on AWS's
    # own metric (the arrival DLQ's depth, components.alerts.queue_depth_alarm).
    deployed: bool = True

    @property
    def datapoints(self) -> int:
        return self.datapoints_to_alarm or self.evaluation_periods

    @property
    def window(self) -> int:
        """The seconds the alarm reads at each evaluation: its periods, ending then."""
        return self.period * self.evaluation_periods

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
        return dimensions(self.dimensions[JOB], stage, breakdown)


class AlarmInputs(BaseModel):
    """What the stack decides about its alarms, which each job's declaration reads."""

    model_config = ConfigDict(frozen=True)

    failed_ratio_threshold: float  # JobSettings.ingest.failed_ratio_threshold
    oldest_message_seconds: int = OLDEST_MESSAGE_SECONDS  # docuflow:arrivalsMaxAgeSeconds
    # The schedules the stack starts, by name (docuflow:schedules, else the registry's defaults).
    schedules: Mapping[str, str] = Field(default_factory=dict)
    ingest_tasks: int = Field(default=1, ge=1)  # docuflow:ingestTasks


def nightly(expression: str) -> bool:
    """Whether a schedule fires at least once a day, so a heartbeat window can span its gaps."""
    return longest_gap_days(expression) <= 1


def heartbeat(job: str) -> AlarmSpec:
    """No scheduled run ended in the last HEARTBEAT_HOURS hours: every hourly period breaches (one
    heartbeat in the window is one period not breaching, so M is N: a heartbeat a night leaves
    every other period empty, and M below N would alarm on every good night).
    """
    return AlarmSpec(
        name=f"{job}-heartbeat",
        metric=Metric.HEARTBEAT,
        dimensions={JOB: str(job)},
        statistic=Statistic.SUM,
        period=HOUR,
        evaluation_periods=HEARTBEAT_HOURS,
        datapoints_to_alarm=HEARTBEAT_HOURS,
        threshold=1,
        comparison=Comparison.LESS,
        missing=Missing.BREACHING,
        runbook=f"{job}-heartbeat",
        description=f"No scheduled {job} run completed in the last {HEARTBEAT_HOURS} hours: a night that "
        "did not run (a manual run is no heartbeat).",
    )


def any_over_zero(name: str, job: str, metric: Metric, description: str, **breakdown: str) -> AlarmSpec:
    """A count a good night keeps at 0 (published as 0, so a missing night is the heartbeat's),
    the Maximum of any task's in the night's span.
    """
    return AlarmSpec(
        name=name,
        metric=metric,
        dimensions={JOB: str(job), **breakdown},
        statistic=Statistic.MAXIMUM,
        period=NIGHT_SPAN,
        threshold=0,
        comparison=Comparison.GREATER,
        missing=Missing.NOT_BREACHING,
        runbook=name,
        description=description,
    )


def arrivals_stalled(seconds: int) -> AlarmSpec:
    """The arrival queue's oldest message past the bound, three 5-minute periods running."""
    return AlarmSpec(
        name=ARRIVALS_STALLED,
        metric=OLDEST_MESSAGE_AGE,
        namespace=SQS_NAMESPACE,
        statistic=Statistic.MAXIMUM,
        period=300,
        evaluation_periods=3,
        threshold=seconds,
        comparison=Comparison.GREATER,
        missing=Missing.NOT_BREACHING,
        runbook=ARRIVALS_STALLED,
        description=f"An arrival has waited over {seconds} s: the drain stalled or did not run.",
    )


def failed_ratio(threshold: float, tasks: int) -> AlarmSpec:
    """More than `threshold` of a night's documents FAILED, across every ingest task, judged once
    all `tasks` scheduled tasks of the night have finished (their heartbeats).
    """
    return AlarmSpec(
        name="ingest-failed-ratio",
        metric=Metric.FAILED_RATIO,
        dimensions={JOB: Job.INGEST.value},
        statistic=Statistic.SUM,
        period=NIGHT_SPAN,
        # The night's, across every task: Failed over the documents finished, each summed (a
        # task's own FailedRatio is drawn, never summed).
        ratio=Ratio(
            numerator=(Metric.FAILED,),
            denominator=(Metric.PROCESSED, Metric.SENT_TO_REVIEW, Metric.FAILED),
            minimum=MIN_DOCUMENTS_FOR_RATIO,
            finished=Metric.HEARTBEAT,
            tasks=tasks,
        ),
        threshold=threshold,
        comparison=Comparison.GREATER,
        missing=Missing.NOT_BREACHING,  # a night that did not run is the heartbeat's
        runbook="ingest-failed-ratio",
        description=f"More than {threshold:.0%} of a night's documents FAILED (across its tasks).",
    )


def drill_overdue_days(drill_schedule: str) -> int:
    """The age in days past which the last drill is overdue: its schedule's period and the margin."""
    return longest_gap_days(drill_schedule) + DRILL_MARGIN_DAYS


def drill_overdue(drill_schedule: str) -> AlarmSpec:
    """The nightly reconcile's DaysSinceLastDrill over the bound. Hourly periods over
    HEARTBEAT_HOURS, one breaching enough: one figure a night keeps it in ALARM from night to
    night while the drill stays overdue (one notification, not one a day), through a night that
    ends late. Missing data is not breaching: a silent reconcile is its heartbeat's alarm.
    """
    bound = drill_overdue_days(drill_schedule)
    return AlarmSpec(
        name=DRILL_OVERDUE,
        metric=Metric.DAYS_SINCE_DRILL,
        dimensions={JOB: Job.RECONCILE.value},
        statistic=Statistic.MAXIMUM,
        period=HOUR,
        evaluation_periods=HEARTBEAT_HOURS,
        datapoints_to_alarm=1,
        threshold=bound,
        comparison=Comparison.GREATER,
        missing=Missing.NOT_BREACHING,
        runbook=DRILL_OVERDUE,
        description=f"No restore drill has reported in over {bound} days (its schedule {drill_schedule} "
        f"plus {DRILL_MARGIN_DAYS} days): the drill did not run, or failed before its report.",
    )
