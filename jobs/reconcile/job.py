"""The reconcile job (`python -m jobs reconcile`) and its two nightly tasks, the read-only audit
and the audit with its repairs, as the registry (jobs.registry) lists them.
"""

from __future__ import annotations

from collections.abc import Mapping

from jobs.contract.alarms import AUDIT_GAP, AlarmInputs, AlarmSpec, any_over_zero
from jobs.contract.engines import ReconcileEngine
from jobs.contract.metrics import CODE, SEVERITIES, SEVERITY, Job, Metric
from jobs.reconcile.policy import reconcile_task_policy, repair_task_policy
from jobs.runtime.registry import JobSpec, Schedule, TaskSize, TaskSpec, TaskStack
from jobs.settings import ENV_IMAGE_DIGEST, ENV_REPORT_SIGNING_KEY, ENV_REPORTS_TOPIC_ARN, ENV_TABLE_ARN

# The reconcile's size; the drill's too, which reconciles the table it restored.
RECONCILE_SIZE = TaskSize(1024, 4096)
NIGHTLY = "cron(0 5 * * ? *)"
# The polars engine's nightly also checks the change log, reading the last days' deliveries
# (earlier days were checked by earlier nights; docs/audit.md). The athena engine does not.
AUDIT_LOG_ARGS = ("--audit-log", "--audit-window", "3d")


def nightly_command(command: tuple[str, ...], stack: TaskStack) -> tuple[str, ...]:
    """The nightly chain (jobs/reconcile/nightly.py) on the stack's engine: with polars it checks
    the change log too; with athena it runs over the kept Iceberg table, in the workgroup.
    """
    if stack.reconcile_engine == ReconcileEngine.ATHENA:
        return ("reconcile", "athena", "--nightly", *command[2:])
    return (*command, *AUDIT_LOG_ARGS)


def nightly_environment(stack: TaskStack) -> Mapping[str, str]:
    """The table's ARN (the chain exports it) and the chain's days; the reports are signed with
    the stack's key (its ARN: an alias is no identity), name the image that wrote them, and are
    announced on the stack's alert topic.
    """
    if not stack.table_arn:
        raise ValueError("the nightly reconcile needs the table's ARN to export it")
    extra = {ENV_TABLE_ARN: stack.table_arn, **{name: str(days) for name, days in stack.chain.items()}}
    if stack.signing_key_arn:
        extra[ENV_REPORT_SIGNING_KEY] = stack.signing_key_arn
    extra[ENV_IMAGE_DIGEST] = stack.image.rpartition("@")[2]
    if stack.reports_topic_arn:
        extra[ENV_REPORTS_TOPIC_ARN] = stack.reports_topic_arn
    return extra


def reconcile_alarms(inputs: AlarmInputs) -> tuple[AlarmSpec, ...]:
    """What is new tonight: an error open for weeks (drawn on the dashboard, listed in the report)
    would keep an alarm on every open error in ALARM, and the next one would send nothing.
    """
    return (
        any_over_zero(
            "reconcile-error-findings",
            Job.RECONCILE,
            Metric.NEW_FINDINGS,
            "The night's reconcile found new error findings: the table and the buckets disagree.",
            **{SEVERITY: SEVERITIES[0]},
        ),
        # An error finding too, alarmed on its own: its cause and runbook are the change log's
        # delivery, not the table and the buckets.
        any_over_zero(
            "reconcile-audit-gap",
            Job.RECONCILE,
            Metric.NEW_FINDINGS,
            "Versions of documents have no record in the change log: the audit trail has a gap.",
            **{CODE: AUDIT_GAP},
        ),
    )


JOB = JobSpec(
    "reconcile",
    "jobs.reconcile.cli",
    "check DynamoDB against S3 and write an audit report",
    # The run modes (jobs.reconcile.plans), and a person's acknowledgement of a finding.
    subcommands=("live", "files", "nightly", "athena", "acknowledge"),
    publishes=Job.RECONCILE,
    metrics=(Metric.FINDINGS, Metric.NEW_FINDINGS, Metric.ITEMS_JUDGED, Metric.DAYS_SINCE_DRILL),
    alarms=reconcile_alarms,
    tasks=(
        # One nightly schedule starts one of the two: the repair, unless the stack only audits.
        TaskSpec(
            "reconcile",
            ("reconcile", "nightly"),
            reconcile_task_policy,
            RECONCILE_SIZE,
            Schedule("reconcile", NIGHTLY, enabled=False),
            command_for=nightly_command,
            environment=nightly_environment,
        ),
        TaskSpec(
            "repair",
            ("reconcile", "nightly", "--repair"),
            repair_task_policy,
            RECONCILE_SIZE,  # the reconcile plus a few conditional puts
            Schedule("reconcile", NIGHTLY),
            command_for=nightly_command,
            environment=nightly_environment,
        ),
    ),
)
