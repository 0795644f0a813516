"""The review job (`python -m jobs review`), as the registry (jobs.registry) lists it."""

from __future__ import annotations

from jobs.runtime.registry import JobSpec

JOB = JobSpec(
    "review",
    "jobs.review.cli",
    "work the review queue: claim, correct, settle or release a document",
    subcommands=("claim", "release", "settle", "correct"),
)
