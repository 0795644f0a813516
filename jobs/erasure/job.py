"""The erasure job (`python -m jobs erase`) and its task, as the registry (jobs.registry) lists it."""

from __future__ import annotations

from collections.abc import Mapping

from jobs.contract.metrics import Job, Metric
from jobs.erasure.policy import erasure_task_policy
from jobs.runtime.registry import JobSpec, TaskSize, TaskSpec, TaskStack
from jobs.settings import ENV_HOLDINGS


def holdings_environment(stack: TaskStack) -> Mapping[str, str]:
    """What still holds an erased user's data, and how long: the receipt says so."""
    return {ENV_HOLDINGS: stack.holdings.to_env()}


JOB = JobSpec(
    "erase",
    "jobs.erasure.cli",
    "GDPR erasure of one user: every item, version and marker, with a receipt",
    publishes=Job.ERASURE,
    metrics=(Metric.ITEMS_DELETED, Metric.VERSIONS_DELETED, Metric.DOCUMENTS_KEPT),
    tasks=(
        # Streams listings into batched deletes; started by hand (`erase --user U`).
        TaskSpec("erasure", ("erase",), erasure_task_policy, TaskSize(512, 1024), environment=holdings_environment),
    ),
)
