"""Pure decisions of the ingest: which shard owns a document, and what to do with a raw object.

Given the raw object and the item already stored (if any), `decide` says skip, claim or give up,
and builds the exact item the claim writes. No I/O here, so every rule is a plain unit test.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from jobs.contract import DocumentItem, FailureCode, Status, check_transition, layout
from jobs.contract.objects import ObjectInfo

# Failures that depend on the bytes alone come back identical on a retry of the same ETag, so they
# are dead letters at once (a new upload is processed again); only failures of the run itself (a
# crashed or timed-out extraction worker) are retried, up to max_attempts.
RETRYABLE_FAILURES = frozenset({FailureCode.INTERNAL.value})


class Action(StrEnum):
    CLAIM = "CLAIM"
    SKIP_DONE = "SKIP_DONE"
    SKIP_LEASED = "SKIP_LEASED"
    DEAD_LETTER = "DEAD_LETTER"


@dataclass(frozen=True)
class Decision:
    action: Action
    claim: DocumentItem | None = None
    expected_version: int | None = None


def shard_of(user_id: str, document_id: str, shard_count: int) -> int:
    """Stable across runs, processes and machines (unlike hash())."""
    digest = hashlib.sha256(f"{user_id}\x00{document_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shard_count


def decide(
    raw: layout.RawKey,
    obj: ObjectInfo,
    existing: DocumentItem | None,
    *,
    now: datetime,
    owner: str,
    lease: timedelta,
    max_attempts: int,
) -> Decision:
    same_raw = existing is not None and existing.rawEtag == obj.etag
    if existing is not None and same_raw:
        if existing.status == Status.PROCESSING:
            if existing.leaseExpiresAt is not None and existing.leaseExpiresAt > now:
                return Decision(Action.SKIP_LEASED)
            if existing.attempts >= max_attempts:
                return Decision(Action.DEAD_LETTER)
        elif existing.status == Status.FAILED:
            if existing.failureCode not in RETRYABLE_FAILURES or existing.attempts >= max_attempts:
                return Decision(Action.DEAD_LETTER)
        else:
            return Decision(Action.SKIP_DONE)
    check_transition(existing.status if existing is not None else None, Status.PROCESSING)
    attempts = existing.attempts + 1 if existing is not None and same_raw else 1
    claim = DocumentItem(
        userId=raw.user_id,
        documentId=raw.document_id,
        status=Status.PROCESSING,
        createdAt=obj.last_modified,
        updatedAt=now,
        rawS3Uri=obj.uri,
        rawEtag=obj.etag,
        attempts=attempts,
        version=existing.version + 1 if existing is not None else 1,
        leaseOwner=owner,
        leaseExpiresAt=now + lease,
    )
    return Decision(Action.CLAIM, claim, existing.version if existing is not None else None)


def released(claim: DocumentItem, now: datetime, *, refund: bool) -> DocumentItem:
    """The claim handed back by a run that stops before finishing it.

    The lease ends now, so the next run claims the document at once instead of waiting out the
    lease. The attempt is refunded when the document was never at fault (its processing had not
    started, or was cut off by the stop); a document whose own processing failed keeps the
    attempt, so one that fails every run is dead-lettered after max_attempts.
    """
    return claim.evolve(
        version=claim.version + 1,
        attempts=max(claim.attempts - 1, 0) if refund else claim.attempts,
        updatedAt=now,
        leaseExpiresAt=now,
    )
