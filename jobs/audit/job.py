"""The audit job (`python -m jobs audit`), as the registry (jobs.registry) lists it."""

from __future__ import annotations

from jobs.runtime.registry import JobSpec

JOB = JobSpec(
    "audit",
    "jobs.audit.cli",
    "the audit trail: a document's history, what an actor changed",
    subcommands=("history", "actor"),
)
