"""Document statuses and the transitions the contract allows."""

from __future__ import annotations

from enum import StrEnum

from jobs.errors import InvalidTransitionError


class Status(StrEnum):
    PROCESSING = "PROCESSING"
    PROCESSED = "PROCESSED"
    REVIEW_REQUIRED = "REVIEW_REQUIRED"
    FAILED = "FAILED"
    DELETED = "DELETED"


# The outcomes of an extraction: what a finished claim says about its raw object.
TERMINAL = frozenset({Status.PROCESSED, Status.REVIEW_REQUIRED, Status.FAILED})

# A claim (PROCESSING) ends in one terminal status. A terminal document is claimed again when its
# raw object changes or a FAILED one is retried; reconcile marks a document whose result.json is
# gone for reprocessing by setting it FAILED (retryable); a reviewer may settle REVIEW_REQUIRED
# as PROCESSED.
#
# DELETED is the tombstone of a document whose raw object is gone: set by the ingest when the
# object disappears under its claim, and by reconcile's repair for a finished document whose raw
# object was deleted later. The item and its result.json stay until retention expires them; a
# new upload under the same documentId is claimed again. DELETED is also a user's delete
# (jobs.contract.lifecycle), which records the status a restore within the grace period puts
# back: those two moves are the lifecycle's own, checked there, not by this table.
ALLOWED_TRANSITIONS: dict[Status | None, frozenset[Status]] = {
    None: frozenset({Status.PROCESSING}),
    Status.PROCESSING: TERMINAL | {Status.PROCESSING, Status.DELETED},
    Status.PROCESSED: frozenset({Status.PROCESSING, Status.FAILED, Status.DELETED}),
    Status.REVIEW_REQUIRED: frozenset({Status.PROCESSING, Status.PROCESSED, Status.FAILED, Status.DELETED}),
    Status.FAILED: frozenset({Status.PROCESSING, Status.DELETED}),
    Status.DELETED: frozenset({Status.PROCESSING}),
}


def can_transition(old: Status | None, new: Status) -> bool:
    return new in ALLOWED_TRANSITIONS[old]


def check_transition(old: Status | None, new: Status) -> None:
    if not can_transition(old, new):
        raise InvalidTransitionError(f"status change {old} -> {new} is not allowed")
