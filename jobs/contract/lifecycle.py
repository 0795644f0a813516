"""The item side of a document's life after it finished: delete, restore, legal hold and release.

Pure: each function takes the stored item and returns the next version of it, or raises
`LifecycleRefusedError` with the one line a person reads (the CLI exits 2 on it, nothing
changed). The S3 side of each step (delete markers, their removal, legal holds on every version)
is done by jobs.documents, in the order that keeps a crash between the two steps repairable by
running the same command again.

- delete: a finished document (or the tombstone of one whose upload vanished) becomes DELETED at
  once; the item records who and when, the status a restore puts back, and the end of the grace
  period, which becomes its TTL (the lifecycle rules delete its hidden versions at the same time).
- restore: within the grace, the item as it was before the delete (status, retention, TTL).
- hold / release: a held item has no TTL and cannot be deleted or erased; releasing gives it back
  to its retention schedule (a deleted document cannot be held: restore it first).
"""

from __future__ import annotations

from datetime import datetime

from jobs.contract.item import DocumentItem
from jobs.contract.retention import RetentionPolicy
from jobs.contract.status import Status
from jobs.errors import LifecycleRefusedError


def _describe(item: DocumentItem) -> str:
    return f"document {item.documentId} of user {item.userId}"


def check_deletable(item: DocumentItem) -> None:
    """Refuse a delete the document's state does not allow (held, or being processed)."""
    if item.held:
        raise LifecycleRefusedError(f"{_describe(item)} is under a legal hold: it cannot be deleted until released")
    if item.status == Status.PROCESSING:
        raise LifecycleRefusedError(f"{_describe(item)} is being processed: delete it once the run has finished it")


def user_deleted(item: DocumentItem, now: datetime, actor: str, policy: RetentionPolicy) -> DocumentItem:
    """The DELETED version of `item`; a document the user already deleted is returned unchanged
    (the command is safe to run again, and completes the hiding of its objects).
    """
    check_deletable(item)
    if item.user_deleted:
        return item
    return item.evolve(
        status=Status.DELETED,
        version=item.version + 1,
        updatedAt=now,
        updatedBy=actor,
        deletedAt=now,
        deletedBy=actor,
        restoreStatus=item.status,
        hardDeleteAt=policy.hard_delete_at(now),
    )


def check_restorable(item: DocumentItem, now: datetime) -> None:
    if not item.user_deleted:
        raise LifecycleRefusedError(f"{_describe(item)} is not deleted: nothing to restore")
    assert item.hardDeleteAt is not None
    if item.hardDeleteAt <= now:
        raise LifecycleRefusedError(
            f"{_describe(item)} was deleted for good on {item.hardDeleteAt:%Y-%m-%d} (its grace period ended): "
            "it cannot be restored"
        )


def restored(item: DocumentItem, now: datetime, actor: str) -> DocumentItem:
    """The item as it was before its delete: its status, retention and TTL back."""
    check_restorable(item, now)
    assert item.restoreStatus is not None
    return item.evolve(
        status=item.restoreStatus,
        version=item.version + 1,
        updatedAt=now,
        updatedBy=actor,
        deletedAt=None,
        deletedBy=None,
        restoreStatus=None,
        hardDeleteAt=None,
    )


def held(item: DocumentItem, now: datetime, actor: str) -> DocumentItem:
    """The item under a legal hold (no TTL); an item already held is returned unchanged."""
    if item.user_deleted:
        raise LifecycleRefusedError(
            f"{_describe(item)} is deleted (gone for good on {item.hardDeleteAt:%Y-%m-%d}): restore it before a hold"
        )
    if item.status == Status.PROCESSING:
        raise LifecycleRefusedError(f"{_describe(item)} is being processed: hold it once the run has finished it")
    if item.held:
        return item
    return item.evolve(version=item.version + 1, updatedAt=now, updatedBy=actor, legalHoldAt=now, legalHoldBy=actor)


def released(item: DocumentItem, now: datetime, actor: str) -> DocumentItem:
    """The item back on its schedule (its TTL returns); an item not held is returned unchanged."""
    if not item.held:
        return item
    return item.evolve(version=item.version + 1, updatedAt=now, updatedBy=actor, legalHoldAt=None, legalHoldBy=None)
