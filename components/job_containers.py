"""The job tasks' containers: one hardened container per task definition, running the command and
reading the environment its registry entry (jobs.registry) shapes from the stack's values.

Pure (no Pulumi): BatchJobs calls `container_definition` once a task definition's Outputs resolve.
The containers run as a non-root user on a read-only root filesystem with a scratch volume at
/tmp and receive only non-secret names (jobs.settings.JOB_ENV_VARS) in their environment, plus
what their own job reads (TaskSpec.environment).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jobs import registry
from jobs.contract.engines import ReconcileEngine
from jobs.runtime.registry import TaskSpec, TaskStack
from jobs.settings import JOB_ENV_VARS, env_name

CONTAINER_NAME = "job"
SCRATCH_VOLUME = "scratch"
SCRATCH_PATH = "/tmp"
# Numeric, so ECS can check it is not root without reading the image's /etc/passwd.
JOB_USER = "10001:10001"
STOP_TIMEOUT_SECONDS = 120
ENTRYPOINT = ["python", "-m", "jobs"]
# What a stack runs its nightly reconcile on (the files engine's DuckDB is a person's choice).
RECONCILE_ENGINES = (ReconcileEngine.POLARS, ReconcileEngine.ATHENA)
ENV_SCHEDULE_TIMEZONE = env_name("schedule_timezone")
ENV_SCHEDULED_TIME = env_name("scheduled_time")
# EventBridge Scheduler replaces this keyword in a target's Input with the time the schedule meant
# the invocation for (a retry keeps it): the job's drain bound and its "scheduled, not manual".
SCHEDULED_TIME_ATTRIBUTE = "<aws.scheduler.scheduled-time>"


def registered_tasks() -> dict[str, TaskSpec]:
    """One task definition, role and log group per task of the registry (jobs.registry.JOBS, read
    when called). The scheduled ones run as they are: the drain (stopping in time for the
    reconcile), the reconcile and its repair (the nightly chain, jobs/reconcile/nightly.py), the
    restore drill (dropping its table once reported); the others are started by hand with a command
    override that names the user and document (`erase --user U`, `documents delete --user U --doc D`).
    """
    return {name: task for name, (_, task) in registry.tasks(registry.JOBS).items()}


def scheduled_input() -> str:
    """The schedules' target Input: for an ECS RunTask target, Scheduler passes it as the task's
    overrides (TaskOverride), so the job container gets DOCUFLOW_SCHEDULED_TIME set to the
    scheduled time, beside the task definition's environment. Set only here: a task started by
    hand has none, and knows itself as manual.
    """
    return json.dumps(
        {
            "containerOverrides": [
                {
                    "name": CONTAINER_NAME,
                    "environment": [{"name": ENV_SCHEDULED_TIME, "value": SCHEDULED_TIME_ATTRIBUTE}],
                }
            ]
        }
    )


def check_reconcile_engine(engine: str) -> None:
    if engine not in RECONCILE_ENGINES:
        raise ValueError(f"reconcile engine must be one of {', '.join(RECONCILE_ENGINES)}, not {engine!r}")


def job_command(
    job: str, reconcile_engine: str = ReconcileEngine.POLARS, drain_minutes: int | None = None
) -> list[str]:
    """The command of the registry's task `job` on a stack with this engine and drain bound."""
    check_reconcile_engine(reconcile_engine)
    stack = TaskStack(image="", table_arn="", reconcile_engine=reconcile_engine, drain_minutes=drain_minutes)
    return list(registered_tasks()[job].container_command(stack))


def job_environment(values: Mapping[str, str]) -> list[dict[str, str]]:
    """The container environment: exactly JOB_ENV_VARS (names, never secrets), in their order."""
    missing = set(JOB_ENV_VARS) - set(values)
    extra = set(values) - set(JOB_ENV_VARS)
    if missing or extra:
        raise ValueError(f"job environment must be JOB_ENV_VARS: missing {missing}, extra {extra}")
    return [{"name": name, "value": values[name]} for name in JOB_ENV_VARS]


def container_definition(
    *,
    job: str,
    log_group: str,
    region: str,
    environment: Mapping[str, str],
    stack: TaskStack,
    schedule_timezone: str = "UTC",
) -> dict[str, Any]:
    """One job container, hardened: non-root, read-only root fs, no privileges, awslogs.

    Beside JOB_ENV_VARS, the schedule's zone (every job's nights are dates in it: a page cap's
    night, a report's night) and the non-secret settings only the task's own job reads.
    """
    task = registered_tasks()[job]
    check_reconcile_engine(stack.reconcile_engine)
    extra = {ENV_SCHEDULE_TIMEZONE: schedule_timezone, **task.container_environment(stack)}
    return {
        "name": CONTAINER_NAME,
        "image": stack.image,
        "essential": True,
        "entryPoint": ENTRYPOINT,
        "command": list(task.container_command(stack)),
        "user": JOB_USER,
        "readonlyRootFilesystem": True,
        "privileged": False,
        # SIGTERM to SIGKILL: Fargate's most (the default is 30 s). A job stops at its next clean
        # point (docs/operations.md, Exit codes): an erasure's batch, a drill's restore wait.
        "stopTimeout": STOP_TIMEOUT_SECONDS,
        "linuxParameters": {"initProcessEnabled": True, "capabilities": {"drop": ["ALL"]}},
        # Extraction and polars spill to /tmp: a task-local volume, since the root fs is read-only.
        "mountPoints": [{"sourceVolume": SCRATCH_VOLUME, "containerPath": SCRATCH_PATH, "readOnly": False}],
        "environment": job_environment(environment) + [{"name": n, "value": v} for n, v in extra.items()],
        "logConfiguration": log_configuration(log_group, region, job),
    }


def log_configuration(log_group: str, region: str, job: str) -> dict[str, Any]:
    """awslogs, non-blocking: a slow log stream never stalls the job."""
    return {
        "logDriver": "awslogs",
        "options": {
            "awslogs-group": log_group,
            "awslogs-region": region,
            "awslogs-stream-prefix": job,
            "mode": "non-blocking",
            "max-buffer-size": "4m",
        },
    }
