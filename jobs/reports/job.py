"""The reports job (`python -m jobs reports`), as the registry (jobs.registry) lists it."""

from __future__ import annotations

from jobs.runtime.registry import JobSpec

JOB = JobSpec(
    "reports",
    "jobs.reports.cli",
    "verify the chain of signed reconcile reports; pack a month's evidence",
    subcommands=("verify", "pack", "verify-pack"),
)
