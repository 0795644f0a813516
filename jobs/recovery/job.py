"""The recovery package's jobs: the restore drill (a quarterly task), `rollback` and `undelete`,
as the registry (jobs.registry) lists them.
"""

from __future__ import annotations

from jobs.contract.metrics import Job
from jobs.reconcile.job import RECONCILE_SIZE
from jobs.recovery.policy import drill_task_policy
from jobs.runtime.registry import JobSpec, Schedule, TaskSpec

DRILL = JobSpec(
    "drill",
    "jobs.recovery.cli",
    "restore the table into a new table, reconcile it, report RPO and RTO",
    publishes=Job.DRILL,
    tasks=(
        TaskSpec(
            "drill",
            ("drill", "--drop-after"),  # the scheduled drill drops its table once reported
            drill_task_policy,
            RECONCILE_SIZE,  # it reconciles the table it restored
            Schedule("drill", "cron(0 6 1 1,4,7,10 ? *)"),
        ),
    ),
)

ROLLBACK = JobSpec(
    "rollback",
    "jobs.recovery.rollback_cli",
    "after a bad deploy: put changed items back from a restored table",
    publishes=Job.ROLLBACK,
)

UNDELETE = JobSpec(
    "undelete",
    "jobs.recovery.undelete",
    "remove the delete markers a bad role left in a data bucket",
    publishes=Job.UNDELETE,
)
