"""A person's actions on one document: the owner's delete and restore, an operator's legal hold.

Each action is the item's next version (jobs.contract.lifecycle decides it, or refuses) plus the
S3 side: delete markers over the document's current objects, their removal, legal holds on every
version. The two are ordered so that a crash between them is completed by running the same
command again, and a half-done state is one reconcile reports:

- delete: the item first (DELETED, its TTL the end of the grace), then the delete markers. A
  rerun finds the item deleted and puts any marker still missing.
- restore: the markers first, then the item. A rerun finds the item still deleted and finishes.
- hold / release: the versions' legal holds first, then the item; a rerun sets them again.

Every item write is conditional on the version read, so a concurrent writer (a run of the
ingest) wins and the action says to try again; nothing is written on a refusal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.contract import DocumentItem, ObjectInfo, RetentionPolicy, layout
from jobs.contract.lifecycle import held, released, restored, user_deleted
from jobs.contract.objects import ObjectVersion
from jobs.errors import DocumentChangedError, DocumentNotFoundError, LifecycleRefusedError
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

# S3 stamps a delete marker with its own clock; the item's deletedAt is ours. Markers this much
# older than the delete still count as the delete's own when a restore removes them.
CLOCK_TOLERANCE = timedelta(minutes=5)


@dataclass(frozen=True)
class ActionOutcome:
    """What one action did: the item as it now is, and how many S3 entries it changed."""

    action: str
    item: DocumentItem
    changed_item: bool
    objects: int

    def summary(self) -> dict[str, object]:
        item = self.item
        return {
            "action": self.action,
            "userId": item.userId,
            "documentId": item.documentId,
            "status": item.status.value,
            "itemChanged": self.changed_item,
            "objectsChanged": self.objects,
            "hardDeleteAt": item.hardDeleteAt and layout.format_ts(item.hardDeleteAt),
            "retainUntil": item.retainUntil and layout.format_ts(item.retainUntil),
            "legalHold": item.held,
            "updatedBy": item.updatedBy,
        }


def markers_of_delete(versions: list[ObjectVersion], deleted_at: datetime) -> list[ObjectVersion]:
    """The delete markers a user's delete put: the current ones, no older than the delete.

    An older current marker hid an object before the delete; a restore leaves it.
    """
    return [v for v in versions if v.delete_marker and v.is_latest and v.last_modified >= deleted_at - CLOCK_TOLERANCE]


class DocumentActions:
    def __init__(
        self,
        table: DocumentTable,
        buckets: Buckets,
        raw_bucket: str,
        processed_bucket: str,
        policy: RetentionPolicy,
        clock: Callable[[], datetime] = layout.utc_now,
    ) -> None:
        self._table = table
        self._buckets = buckets
        self._places = ((raw_bucket, layout.raw_document_prefix), (processed_bucket, layout.result_document_prefix))
        self._policy = policy
        self._clock = clock

    # --- the owner's actions -----------------------------------------------------------------
    def delete(self, user_id: str, document_id: str, actor: str) -> ActionOutcome:
        item = self._item(user_id, document_id)
        deleted = user_deleted(item, self._clock(), actor, self._policy)
        self._put(deleted, item)
        hidden = 0
        for bucket, prefix in self._places:
            keys = [o.key for o in self._current(bucket, prefix(user_id, document_id))]
            self._buckets.hide(bucket, keys)
            hidden += len(keys)
        return ActionOutcome("delete", deleted, deleted is not item, hidden)

    def restore(self, user_id: str, document_id: str, actor: str) -> ActionOutcome:
        item = self._item(user_id, document_id, gone_for_good=True)
        back = restored(item, self._clock(), actor)  # refuses what cannot be restored, first
        assert item.deletedAt is not None
        removed = 0
        for bucket, prefix in self._places:
            markers = markers_of_delete(self._buckets.versions(bucket, prefix(user_id, document_id)), item.deletedAt)
            refused = self._buckets.delete_versions(bucket, markers)
            if refused:
                raise LifecycleRefusedError(f"S3 refused to remove delete markers: {refused}")
            removed += len(markers)
        self._put(back, item)
        return ActionOutcome("restore", back, True, removed)

    # --- an operator's legal hold ------------------------------------------------------------
    def hold(self, user_id: str, document_id: str, actor: str) -> ActionOutcome:
        item = self._item(user_id, document_id)
        locked = held(item, self._clock(), actor)  # refuses a deleted or unfinished document, first
        count = self._set_holds(user_id, document_id, on=True)
        self._put(locked, item)
        return ActionOutcome("hold", locked, locked is not item, count)

    def release(self, user_id: str, document_id: str, actor: str) -> ActionOutcome:
        item = self._item(user_id, document_id)
        count = self._set_holds(user_id, document_id, on=False)
        free = released(item, self._clock(), actor)
        self._put(free, item)
        return ActionOutcome("release", free, free is not item, count)

    # --- helpers ---------------------------------------------------------------------------
    def _item(self, user_id: str, document_id: str, *, gone_for_good: bool = False) -> DocumentItem:
        layout.validate_id(user_id, "userId")
        layout.validate_id(document_id, "documentId")
        item = self._table.get(user_id, document_id)
        if item is None:
            after = " (or it was deleted for good after its grace period)" if gone_for_good else ""
            raise DocumentNotFoundError(f"no document {document_id} of user {user_id}{after}")
        return item

    def _put(self, new: DocumentItem, old: DocumentItem) -> None:
        if new is old:
            return
        if not self._table.put_if_version(new, old.version):
            raise DocumentChangedError(
                f"document {old.documentId} of user {old.userId} changed while this ran (version {old.version} "
                "is no longer current): run the command again"
            )

    def _current(self, bucket: str, prefix: str) -> list[ObjectInfo]:
        return [o for page in self._buckets.list_pages(bucket, prefix) for o in page]

    def _set_holds(self, user_id: str, document_id: str, *, on: bool) -> int:
        """Every version of the document's objects (delete markers cannot carry a hold)."""
        count = 0
        for bucket, prefix in self._places:
            for version in self._buckets.versions(bucket, prefix(user_id, document_id)):
                if not version.delete_marker:
                    self._buckets.set_legal_hold(version, on)
                    count += 1
        return count
