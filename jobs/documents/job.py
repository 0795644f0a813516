"""The documents job (`python -m jobs documents`) and its two tasks, an owner's action and an
operator's legal hold, as the registry (jobs.registry) lists them.
"""

from __future__ import annotations

from jobs.contract.metrics import Job, Metric
from jobs.documents.policy import documents_task_policy, legal_hold_task_policy
from jobs.runtime.registry import JobSpec, TaskSize, TaskSpec

ONE_DOCUMENT = TaskSize(256, 512)  # an action on one document: a few reads and conditional writes

JOB = JobSpec(
    "documents",
    "jobs.documents.cli",
    "a user's documents, a status queue; delete, restore, legal hold; a presigned URL of result.json",
    subcommands=("list", "delete", "restore", "hold", "url"),
    publishes=Job.DOCUMENTS,
    metrics=(Metric.DOCUMENT_ACTIONS, Metric.ITEMS_CHANGED),
    tasks=(
        # Started by hand with a command override naming the action, user and document.
        TaskSpec("documents", ("documents",), documents_task_policy, ONE_DOCUMENT),
        TaskSpec("legal-hold", ("documents", "hold"), legal_hold_task_policy, ONE_DOCUMENT),
    ),
)
