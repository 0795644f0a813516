"""Document statuses and the transitions the contract allows."""

from __future__ import annotations

from enum import StrEnum

from jobs.errors import InvalidTransitionError


class Status(StrEnum):
    PROCESSING = "PROCESSING"
    PROCESSED = "PROCESSED"
    REVIEW_REQUIRED = "REVIEW_REQUIRED"
    FAILED = "FAILED"


TERMINAL = frozenset({Status.PROCESSED, Status.REVIEW_REQUIRED, Status.FAILED})

# A claim (PROCESSING) ends in one terminal status. A terminal document is claimed again when its
# raw object changes or a FAILED one is retried; reconcile marks a document whose result.json is
# gone for reprocessing by setting it FAILED (retryable); a reviewer may settle REVIEW_REQUIRED
# as PROCESSED.
ALLOWED_TRANSITIONS: dict[Status | None, frozenset[Status]] = {
    None: frozenset({Status.PROCESSING}),
    Status.PROCESSING: TERMINAL | {Status.PROCESSING},
    Status.PROCESSED: frozenset({Status.PROCESSING, Status.FAILED}),
    Status.REVIEW_REQUIRED: frozenset({Status.PROCESSING, Status.PROCESSED, Status.FAILED}),
    Status.FAILED: frozenset({Status.PROCESSING}),
}


def can_transition(old: Status | None, new: Status) -> bool:
    return new in ALLOWED_TRANSITIONS[old]


def check_transition(old: Status | None, new: Status) -> None:
    if not can_transition(old, new):
        raise InvalidTransitionError(f"status change {old} -> {new} is not allowed")
