"""The review queue's rules: who may act on a document in review, and the item each action writes.

A reviewer claims a REVIEW_REQUIRED document with a lease (`leaseOwner` is the reviewer's actor,
`leaseExpiresAt` its end): one reviewer at a time, an expired claim may be taken over. Correcting,
settling and releasing need the caller's own claim with at least ACTION_MARGIN left, so the claim
cannot run out, and be taken over, while the action is under way. Every action writes a new
version of the item, named after the reviewer (`updatedBy`), conditional on the version it read
(jobs.store.table_writes.version_put), so a re-upload or a second reviewer in between makes it fail
instead of being overwritten. Pure: no I/O.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from jobs.contract import DocumentItem, Status, check_transition, layout
from jobs.errors import DocumentNotFoundError, ReviewRefusedError

ACTION_MARGIN = timedelta(seconds=30)


def in_review(item: DocumentItem | None, user_id: str, document_id: str) -> DocumentItem:
    """The item, if the user has it and it waits for review; refused (naming why) otherwise."""
    if item is None:
        # Another user's document lives under another partition: not found here either.
        raise DocumentNotFoundError(f"user {user_id!r} has no document {document_id!r}")
    if item.status != Status.REVIEW_REQUIRED:
        raise ReviewRefusedError(f"document {document_id!r} is {item.status.value}, not in review")
    return item


def holder(item: DocumentItem, now: datetime) -> str | None:
    """The reviewer whose claim on the item is still running, if any."""
    if item.leaseOwner and item.leaseExpiresAt is not None and item.leaseExpiresAt > now:
        return item.leaseOwner
    return None


def claimed(item: DocumentItem, actor: str, now: datetime, lease: timedelta) -> DocumentItem:
    """The item claimed by `actor` (a claim of one's own is renewed)."""
    current = holder(item, now)
    if current is not None and current != actor and item.leaseExpiresAt is not None:
        raise ReviewRefusedError(
            f"document {item.documentId!r} is claimed by {current} until {layout.format_ts(item.leaseExpiresAt)}"
        )
    return _next(item, actor, now, leaseOwner=actor, leaseExpiresAt=now + lease)


def must_hold(item: DocumentItem, actor: str, now: datetime) -> None:
    """Refused unless `actor`'s own claim runs for at least ACTION_MARGIN more."""
    current = holder(item, now)
    if current != actor:
        who = f"claimed by {current}" if current else "not claimed"
        raise ReviewRefusedError(f"document {item.documentId!r} is {who}: claim it before acting on it")
    assert item.leaseExpiresAt is not None
    if item.leaseExpiresAt - now < ACTION_MARGIN:
        raise ReviewRefusedError(
            f"your claim on {item.documentId!r} ends at {layout.format_ts(item.leaseExpiresAt)}: claim it again first"
        )


def released(item: DocumentItem, actor: str, now: datetime) -> DocumentItem:
    if item.leaseOwner != actor:
        raise ReviewRefusedError(f"document {item.documentId!r} is not claimed by {actor}: nothing to release")
    return _next(item, actor, now, leaseOwner=None, leaseExpiresAt=None)


def corrected(item: DocumentItem, actor: str, now: datetime, **fields: Any) -> DocumentItem:
    """The item showing the corrected values; still in review, still the reviewer's."""
    return _next(item, actor, now, **fields)


def settled(item: DocumentItem, actor: str, now: datetime, result_etag: str) -> DocumentItem:
    """Accepted as it stands: PROCESSED, the claim ended; result.json keeps the reasons accepted."""
    check_transition(item.status, Status.PROCESSED)
    return _next(
        item,
        actor,
        now,
        status=Status.PROCESSED,
        reviewReasons=[],
        leaseOwner=None,
        leaseExpiresAt=None,
        resultEtag=result_etag,
    )


def _next(item: DocumentItem, actor: str, now: datetime, **changes: Any) -> DocumentItem:
    return item.evolve(version=item.version + 1, updatedAt=now, updatedBy=actor, **changes)
