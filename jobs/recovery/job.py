"""The recovery package's jobs: the restore drill (a quarterly task), `rollback` and `undelete`,
as the registry (jobs.registry) lists them.
"""

from __future__ import annotations

from jobs.contract.alarms import AlarmInputs, AlarmSpec, any_over_zero, drill_overdue
from jobs.contract.metrics import Job, Metric
from jobs.reconcile.job import RECONCILE_SIZE
from jobs.recovery.policy import drill_task_policy
from jobs.runtime.registry import JobSpec, Schedule, TaskSpec

# The drill's schedule, whose quarterly gaps no heartbeat window spans: the nightly reconcile's
# DaysSinceLastDrill is judged against it instead.
DRILL_SCHEDULE = "drill"


def drill_alarms(inputs: AlarmInputs) -> tuple[AlarmSpec, ...]:
    """A drill that failed or missed a target, and one overdue (only where the stack schedules it)."""
    overdue = (drill_overdue(inputs.schedules[DRILL_SCHEDULE]),) if DRILL_SCHEDULE in inputs.schedules else ()
    missed = any_over_zero(
        "drill-targets-missed",
        Job.DRILL,
        Metric.TARGETS_MISSED,
        "The restore drill failed or missed its RPO or RTO target.",
    )
    return (missed, *overdue)


DRILL = JobSpec(
    "drill",
    "jobs.recovery.cli",
    "restore the table into a new table, reconcile it, report RPO and RTO",
    publishes=Job.DRILL,
    metrics=(Metric.RPO, Metric.RTO, Metric.TARGETS_MISSED),
    alarms=drill_alarms,
    tasks=(
        TaskSpec(
            "drill",
            ("drill", "--drop-after"),  # the scheduled drill drops its table once reported
            drill_task_policy,
            RECONCILE_SIZE,  # it reconciles the table it restored
            Schedule(DRILL_SCHEDULE, "cron(0 6 1 1,4,7,10 ? *)"),
        ),
    ),
)

ROLLBACK = JobSpec(
    "rollback",
    "jobs.recovery.rollback_cli",
    "after a bad deploy: put changed items back from a restored table",
    publishes=Job.ROLLBACK,
    metrics=(Metric.ITEMS_ROLLED_BACK, Metric.LEFT_ALONE),
)

UNDELETE = JobSpec(
    "undelete",
    "jobs.recovery.undelete",
    "remove the delete markers a bad role left in a data bucket",
    publishes=Job.UNDELETE,
    metrics=(Metric.MARKERS_REMOVED, Metric.LEFT_ALONE),
)
