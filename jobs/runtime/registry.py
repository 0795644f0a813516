"""The registry of jobs: one entry per `python -m jobs <command>`, read by `jobs/__main__.py` (the
commands and their help) and by `components/batch_jobs.py` (the ECS task definitions, their roles,
sizes and schedules), so the CLI and the stack cannot drift apart (tests/jobs/runtime proves it).

An entry names its CLI module (a `main(argv) -> int`, imported only when the command runs), its
subcommands, whether the job image carries it (the dev stack's `local` and `demo` do not), the
metrics it publishes (jobs.contract.metrics.PUBLISHED, by its `Job`), and the task definitions it
runs as on ECS. A task names its IAM policy builder as `module.function` under `components/`:
this package is below the Pulumi program and imports neither it nor pulumi; the component
resolves the name. Pure: no boto3, no pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobs.contract.metrics import PUBLISHED, Job, Metric


@dataclass(frozen=True)
class TaskSize:
    """Fargate CPU units and memory (MiB); `setting`: the stack settings `<setting>Cpu` and
    `<setting>Memory` (components.settings: `<setting>_cpu`, `<setting>_memory`) that override it.
    """

    cpu: int
    memory: int
    setting: str | None = None


@dataclass(frozen=True)
class Schedule:
    """When EventBridge Scheduler starts the task: the expression is the stack setting `setting`
    (components.settings.StackSettings, BatchJobsArgs), `default` unless configured. `when`: a
    boolean stack setting and the value it must have for this task to be the one scheduled (the
    nightly reconcile is the repair task, or the read-only audit). `task_count`: the setting
    naming how many tasks a start runs (the ingest's tasks drain one queue together), else one.
    """

    name: str
    setting: str
    default: str
    when: tuple[str, bool] | None = None
    task_count: str | None = None


@dataclass(frozen=True)
class TaskSpec:
    """One ECS task definition (with its task role and log group) a job runs as."""

    name: str
    command: tuple[str, ...]  # after the entrypoint `python -m jobs`
    policy: str  # the task role's policy builder: `policies.x` or `recovery_policies.x` in components/
    size: TaskSize
    schedule: Schedule | None = None


@dataclass(frozen=True)
class JobSpec:
    name: str  # the command: `python -m jobs <name>`
    module: str  # its CLI module, with `main(argv: list[str]) -> int`
    help: str  # one line, for `python -m jobs --help`
    subcommands: tuple[str, ...] = ()  # its modes and actions, argparse subcommands of the CLI
    in_image: bool = True  # False: the dev stack's, which the job image does not carry
    publishes: Job | None = None  # the metrics it publishes through its run context
    tasks: tuple[TaskSpec, ...] = ()

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return PUBLISHED[self.publishes] if self.publishes is not None else ()


ONE_DOCUMENT = TaskSize(256, 512)  # an action on one document: a few reads and conditional writes
RECONCILE_SIZE = TaskSize(1024, 4096, setting="reconcile")
NIGHTLY_RECONCILE = ("reconcile", "reconcile_schedule", "cron(0 5 * * ? *)")

JOBS: tuple[JobSpec, ...] = (
    JobSpec(
        "ingest",
        "jobs.ingest.cli",
        "drain the arrival queue (or sweep raw/: ingest backfill; the DLQ back: ingest redrive)",
        subcommands=("drain", "backfill", "redrive"),
        publishes=Job.INGEST,
        tasks=(
            TaskSpec(
                "ingest",
                ("ingest", "drain"),
                "policies.ingest_task_policy",
                TaskSize(1024, 2048, setting="ingest"),
                Schedule("ingest", "ingest_schedule", "cron(0 1 * * ? *)", task_count="ingest_tasks"),
            ),
        ),
    ),
    JobSpec(
        "reconcile",
        "jobs.reconcile.cli",
        "check DynamoDB against S3 and write an audit report",
        # The run modes (jobs.reconcile.plans), and a person's acknowledgement of a finding.
        subcommands=("live", "files", "nightly", "athena", "acknowledge"),
        publishes=Job.RECONCILE,
        tasks=(
            # The nightly chain (jobs/reconcile/nightly.py); components.batch_jobs.job_command
            # adds the change-log check (polars) or runs it as `athena --nightly` instead.
            TaskSpec(
                "reconcile",
                ("reconcile", "nightly"),
                "policies.reconcile_task_policy",
                RECONCILE_SIZE,
                Schedule(*NIGHTLY_RECONCILE, when=("nightly_repair", False)),
            ),
            TaskSpec(
                "repair",
                ("reconcile", "nightly", "--repair"),
                "policies.repair_task_policy",
                RECONCILE_SIZE,  # the reconcile plus a few conditional puts
                Schedule(*NIGHTLY_RECONCILE, when=("nightly_repair", True)),
            ),
        ),
    ),
    JobSpec(
        "reports",
        "jobs.reports.cli",
        "verify the chain of signed reconcile reports; pack a month's evidence",
        subcommands=("verify", "pack", "verify-pack"),
    ),
    JobSpec(
        "drill",
        "jobs.recovery.cli",
        "restore the table into a new table, reconcile it, report RPO and RTO",
        publishes=Job.DRILL,
        tasks=(
            TaskSpec(
                "drill",
                ("drill", "--drop-after"),  # the scheduled drill drops its table once reported
                "recovery_policies.drill_task_policy",
                RECONCILE_SIZE,  # it reconciles the table it restored
                Schedule("drill", "drill_schedule", "cron(0 6 1 1,4,7,10 ? *)"),
            ),
        ),
    ),
    JobSpec(
        "rollback",
        "jobs.recovery.rollback_cli",
        "after a bad deploy: put changed items back from a restored table",
        publishes=Job.ROLLBACK,
    ),
    JobSpec(
        "undelete",
        "jobs.recovery.undelete",
        "remove the delete markers a bad role left in a data bucket",
        publishes=Job.UNDELETE,
    ),
    JobSpec("extract", "jobs.extract.cli", "extract and validate local files (debugging)"),
    JobSpec(
        "documents",
        "jobs.documents.cli",
        "a user's documents, a status queue; delete, restore, legal hold; a presigned URL of result.json",
        subcommands=("list", "delete", "restore", "hold", "url"),
        publishes=Job.DOCUMENTS,
        tasks=(
            # Started by hand with a command override naming the action, user and document.
            TaskSpec("documents", ("documents",), "policies.documents_task_policy", ONE_DOCUMENT),
            TaskSpec("legal-hold", ("documents", "hold"), "policies.legal_hold_task_policy", ONE_DOCUMENT),
        ),
    ),
    JobSpec(
        "restore-archived",
        "jobs.ingest.restore_archived",
        "restore a document's archived objects (GLACIER), then re-queue it for the next drain",
    ),
    JobSpec(
        "review",
        "jobs.review.cli",
        "work the review queue: claim, correct, settle or release a document",
        subcommands=("claim", "release", "settle", "correct"),
    ),
    JobSpec(
        "erase",
        "jobs.erasure.cli",
        "GDPR erasure of one user: every item, version and marker, with a receipt",
        publishes=Job.ERASURE,
        tasks=(
            # Streams listings into batched deletes; started by hand (`erase --user U`).
            TaskSpec("erasure", ("erase",), "policies.erasure_task_policy", TaskSize(512, 1024)),
        ),
    ),
    JobSpec(
        "audit",
        "jobs.audit.cli",
        "the audit trail: a document's history, what an actor changed",
        subcommands=("history", "actor"),
    ),
    JobSpec(
        "demo", "jobs.demo.cli", "seed a deterministic demo corpus into raw/", subcommands=("seed",), in_image=False
    ),
    JobSpec(
        "local",
        "jobs.local.cli",
        "start, stop or inspect the embedded local AWS stack",
        subcommands=("up", "down", "status", "flush-audit", "export-table", "advance"),
        in_image=False,
    ),
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
