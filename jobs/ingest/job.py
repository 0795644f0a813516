"""The ingest package's jobs: `ingest` (the nightly drain, its backfill and redrive) and
`restore-archived`, as the registry (jobs.registry) lists them.
"""

from __future__ import annotations

from collections.abc import Mapping

from jobs.contract.alarms import AlarmInputs, AlarmSpec, any_over_zero, arrivals_stalled, failed_ratio
from jobs.contract.metrics import Job, Metric
from jobs.ingest.policy import ingest_task_policy
from jobs.runtime.registry import JobSpec, Schedule, TaskSize, TaskSpec, TaskStack
from jobs.settings import ENV_OCR_ENGINE, ENV_TEXTRACT_MAX_PAGES, env_name

ENV_TEXTRACT_FALLBACK = env_name("textract_fallback")


def drain_command(command: tuple[str, ...], stack: TaskStack) -> tuple[str, ...]:
    """The scheduled drain stops taking work after the stack's drain minutes, in time for the
    reconcile; without them it runs until the queue is empty.
    """
    return command if stack.drain_minutes is None else (*command, "--max-minutes", str(stack.drain_minutes))


def reading_environment(stack: TaskStack) -> Mapping[str, str]:
    """The ingest's reading settings: its engine, the night's Textract page cap, the second opinion."""
    extra = {ENV_OCR_ENGINE: stack.ocr_engine} if stack.ocr_engine is not None else {}
    if stack.textract_max_pages:
        extra[ENV_TEXTRACT_MAX_PAGES] = str(stack.textract_max_pages)
    if stack.textract_fallback:
        extra[ENV_TEXTRACT_FALLBACK] = "true"
    return extra


def ingest_alarms(inputs: AlarmInputs) -> tuple[AlarmSpec, ...]:
    """A night with too many FAILED documents, arrivals left waiting, messages dead-lettered."""
    return (
        failed_ratio(inputs.failed_ratio_threshold, inputs.ingest_tasks),
        # Judged locally only: on AWS the alarm on the DLQ's own depth covers it.
        any_over_zero(
            "ingest-dead-letters",
            Job.INGEST,
            Metric.DEAD_LETTER_DEPTH,
            "Messages wait in the arrival queue's dead-letter queue for a person.",
        ).model_copy(update={"deployed": False}),
        arrivals_stalled(inputs.oldest_message_seconds),
    )


JOB = JobSpec(
    "ingest",
    "jobs.ingest.cli",
    "drain the arrival queue (or sweep raw/: ingest backfill; the DLQ back: ingest redrive)",
    subcommands=("drain", "backfill", "redrive"),
    publishes=Job.INGEST,
    metrics=(
        Metric.RECEIVED,
        Metric.PROCESSED,
        Metric.SENT_TO_REVIEW,
        Metric.FAILED,
        Metric.FAILED_RATIO,
        Metric.DEAD_LETTERED,
        Metric.SKIPPED,
        Metric.QUEUE_DEPTH,
        Metric.DEAD_LETTER_DEPTH,
        Metric.TEXTRACT_PAGES,
        Metric.ESTIMATED_COST,
    ),
    alarms=ingest_alarms,
    tasks=(
        # Scheduled nightly; the stack may start several, which drain the one queue together.
        TaskSpec(
            "ingest",
            ("ingest", "drain"),
            ingest_task_policy,
            TaskSize(1024, 2048),
            Schedule("ingest", "cron(0 1 * * ? *)"),
            command_for=drain_command,
            environment=reading_environment,
        ),
    ),
)

# The ingest's reading of local files, for debugging: no stack, no task.
EXTRACT = JobSpec("extract", "jobs.ingest.extract_cli", "extract and validate local files (debugging)")

RESTORE_ARCHIVED = JobSpec(
    "restore-archived",
    "jobs.ingest.restore_archived",
    "restore a document's archived objects (GLACIER), then re-queue it for the next drain",
)
