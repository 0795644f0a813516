"""A person's actions on one document: the owner's delete and restore, an operator's legal hold.

Each action is the item's next version (jobs.contract.lifecycle decides it, or refuses) plus the
S3 side: delete markers over the document's current objects, their removal, legal holds on every
version. The two are ordered so that a crash between them is completed by running the same
command again, and a half-done state is one reconcile reports:

- delete: the item first (DELETED, its TTL the end of the grace), then the delete markers. A
  rerun finds the item deleted and puts any marker still missing.
- restore: the markers first, then the item. A rerun finds the item still deleted and finishes.
  When the raw object the restore makes current again is not the one the item names (a re-upload
  the delete hid, whose message the drain let go as an upload older than the delete), it is sent
  to the arrival queue, as its upload's notification was, after the item: the next drain claims
  the document for it instead of leaving a stale result no drain looks at again.
- hold: the item first, then the versions' legal holds; release: the holds off first, then the
  item. The side that protects more goes first, so a half-done hold or release always leaves the
  item saying held (every reader keeps the document whole, reconcile reports LEGAL_HOLD_MISSING)
  and a rerun completes it; a hold whose item write loses has set no hold in S3. Versions held
  with an item that does not say so (a hold by an older release that lost its item write) are
  still kept: the erasure learns them from S3's refusal (jobs.erasure).

Every item write is conditional on the version read, so a concurrent writer (a run of the
ingest) wins and the action says to try again; nothing is written on a refusal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.contract import DocumentItem, DuplicateKind, ObjectInfo, RetentionPolicy, held_fields, held_marker, layout
from jobs.contract.events import requeue_body
from jobs.contract.lifecycle import held, released, restored, user_deleted
from jobs.contract.objects import ObjectVersion
from jobs.errors import DocumentChangedError, DocumentNotFoundError, LifecycleRefusedError, StoreRequestError
from jobs.store.dynamo import DocumentTable
from jobs.store.queue import ArrivalQueue
from jobs.store.s3 import Buckets
from jobs.store.table_writes import Write, marker_put, marker_release

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
    requeued: int = 0  # raw objects sent to the arrival queue (a restore's hidden re-upload)

    def summary(self) -> dict[str, object]:
        item = self.item
        return {
            "action": self.action,
            "userId": item.userId,
            "documentId": item.documentId,
            "status": item.status.value,
            "itemChanged": self.changed_item,
            "objectsChanged": self.objects,
            "requeued": self.requeued,
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
        arrivals: ArrivalQueue | None = None,
    ) -> None:
        """`arrivals`: the queue a restore sends a re-upload its delete hid to (None: not sent)."""
        self._table = table
        self._buckets = buckets
        self._raw_bucket = raw_bucket
        self._arrivals = arrivals
        self._places = ((raw_bucket, layout.raw_document_prefix), (processed_bucket, layout.result_document_prefix))
        self._policy = policy
        self._clock = clock

    # --- the owner's actions -----------------------------------------------------------------
    def delete(self, user_id: str, document_id: str, actor: str) -> ActionOutcome:
        item = self._item(user_id, document_id)
        deleted = user_deleted(item, self._clock(), actor, self._policy)
        # Its duplicate markers go with the delete (the item keeps what it held, for a restore):
        # the next upload of the same invoice is no duplicate of a document its owner deleted.
        releases = {k: marker_release(user_id, k, d, document_id) for k, d in item.held_markers.items()}
        deleted = self._put(deleted, item, releases)
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
        # It takes its markers again, as a finish does; an identity another document took meanwhile
        # stays that document's, and the restored one no longer claims it.
        takes = {k: marker_put(held_marker(back, k, d, actor)) for k, d in back.held_markers.items()}
        back = self._put(back, item, takes, without=_not_holding)
        return ActionOutcome("restore", back, True, removed, self._requeue_newer_upload(back))

    # --- an operator's legal hold ------------------------------------------------------------
    def hold(self, user_id: str, document_id: str, actor: str) -> ActionOutcome:
        item = self._item(user_id, document_id)
        locked = held(item, self._clock(), actor)  # refuses a deleted or unfinished document, first
        locked = self._put(locked, item, _expiring_with(locked, actor))
        # Listed after the item says held: a writer that reads the item from now on writes under
        # the hold itself; what was written before is listed here (a writer that read the old
        # version and writes later loses its item write).
        count = self._set_holds(user_id, document_id, on=True)
        return ActionOutcome("hold", locked, locked is not item, count)

    def release(self, user_id: str, document_id: str, actor: str) -> ActionOutcome:
        item = self._item(user_id, document_id)
        count = self._set_holds(user_id, document_id, on=False)
        free = released(item, self._clock(), actor)
        free = self._put(free, item, _expiring_with(free, actor))
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

    def _put(
        self,
        new: DocumentItem,
        old: DocumentItem,
        markers: Mapping[DuplicateKind, Write],
        without: Callable[[DocumentItem, DuplicateKind], DocumentItem] | None = None,
    ) -> DocumentItem:
        """The item's next version with its duplicate markers' writes, in one transaction."""
        if new is old:
            return old
        landed, _ = self._table.put_with_markers(new, old.version, markers, "dynamodb.TransactWrite.document", without)
        if landed is None:
            raise DocumentChangedError(
                f"document {old.documentId} of user {old.userId} changed while this ran (version {old.version} "
                "is no longer current): run the command again"
            )
        return landed

    def _requeue_newer_upload(self, item: DocumentItem) -> int:
        """Send the document's newest current raw object to the arrival queue when it is not the
        one the item names; how many were sent (0 or 1).
        """
        current = self._current(self._raw_bucket, layout.raw_document_prefix(item.userId, item.documentId))
        newest = max(current, key=lambda o: o.last_modified, default=None)
        if newest is None or newest.same_version(item.rawS3Uri, item.rawEtag):
            return 0
        if self._arrivals is None:
            logger.warning("a restored re-upload is not queued: no arrival queue", extra={"key": newest.key})
            return 0
        if self._arrivals.send([requeue_body(newest)]) != 1:
            # The item is restored already, so a rerun of the restore is refused: say how to finish.
            raise StoreRequestError(
                f"restored, but the arrival queue did not accept its newer upload {newest.uri}: run `ingest backfill`"
            )
        return 1

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


def _expiring_with(item: DocumentItem, actor: str) -> dict[DuplicateKind, Write]:
    """The markers `item` holds, written again with its TTL (a hold takes it away, a release gives
    it back), each only while it still names the document.
    """
    return {
        k: marker_put(held_marker(item, k, d, actor), takes_over_from=item.documentId)
        for k, d in item.held_markers.items()
    }


def _not_holding(item: DocumentItem, kind: DuplicateKind) -> DocumentItem:
    return item.evolve(**held_fields({k: d for k, d in item.held_markers.items() if k != kind}))
