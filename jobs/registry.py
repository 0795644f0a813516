"""The registry of jobs: one line per `python -m jobs <command>`, each the declaration its package
makes in `jobs/<package>/job.py` (jobs.runtime.registry says what a declaration holds).

Read by `jobs/__main__.py` (the commands and their help), by the Pulumi program
(components/batch_jobs.py: the task definitions, roles, sizes, schedules; components/operations.py:
the alarms and the dashboard's metrics), and by the import contracts (.importlinter), which
place each job package. Two entries are declared here: the dev stack's (`demo`, `local`), which
production code may not import and the image does not carry.
"""

from __future__ import annotations

from jobs.audit import job as audit_job
from jobs.contract.alarms import AlarmInputs, AlarmSpec
from jobs.contract.metrics import Metric
from jobs.documents import job as documents_job
from jobs.erasure import job as erasure_job
from jobs.ingest import job as ingest_job
from jobs.reconcile import job as reconcile_job
from jobs.recovery import job as recovery_job
from jobs.reports import job as reports_job
from jobs.review import job as review_job
from jobs.runtime.registry import JobSpec, TaskSpec

# The dev stack's commands, whose CLIs name their entry here (they sit above the registry).
DEMO = JobSpec(
    "demo", "jobs.demo.cli", "seed a deterministic demo corpus into raw/", subcommands=("seed",), in_image=False
)
LOCAL = JobSpec(
    "local",
    "jobs.local.cli",
    "start, stop or inspect the embedded local AWS stack",
    subcommands=("up", "down", "status", "flush-audit", "export-table", "advance"),
    in_image=False,
)

JOBS: tuple[JobSpec, ...] = (
    ingest_job.JOB,
    reconcile_job.JOB,
    reports_job.JOB,
    recovery_job.DRILL,
    recovery_job.ROLLBACK,
    recovery_job.UNDELETE,
    ingest_job.EXTRACT,
    documents_job.JOB,
    ingest_job.RESTORE_ARCHIVED,
    review_job.JOB,
    erasure_job.JOB,
    audit_job.JOB,
    DEMO,
    LOCAL,
)


def job(name: str, jobs: tuple[JobSpec, ...] = JOBS) -> JobSpec:
    """The entry of `python -m jobs <name>`; KeyError when there is none."""
    for spec in jobs:
        if spec.name == name:
            return spec
    raise KeyError(name)


def tasks(jobs: tuple[JobSpec, ...] = JOBS) -> dict[str, tuple[JobSpec, TaskSpec]]:
    """Every ECS task definition by name, with the job it runs."""
    found = {task.name: (spec, task) for spec in jobs for task in spec.tasks}
    if len(found) != sum(len(spec.tasks) for spec in jobs):
        raise ValueError("two tasks of the registry share a name")
    return found


def schedule_defaults(jobs: tuple[JobSpec, ...] = JOBS) -> dict[str, str]:
    """Every schedule the registry declares, by name, with its default expression (the nightly
    reconcile is one schedule, which starts the reconcile or the repair task).
    """
    return {t.schedule.name: t.schedule.default for _, t in tasks(jobs).values() if t.schedule is not None}


def published(jobs: tuple[JobSpec, ...] = JOBS) -> dict[str, tuple[Metric, ...]]:
    """What each Job dimension's runs publish (JobSpec.published), for the dashboard."""
    return {spec.publishes: spec.published for spec in jobs if spec.publishes is not None}


def declared_alarms(inputs: AlarmInputs, jobs: tuple[JobSpec, ...] = JOBS) -> tuple[AlarmSpec, ...]:
    """The stack's alarms: each job's (JobSpec.declared_alarms) on what the stack decided."""
    found = tuple(alarm for spec in jobs for alarm in spec.declared_alarms(inputs))
    if len({alarm.name for alarm in found}) != len(found):
        raise ValueError("two alarms of the registry share a name")
    return found
