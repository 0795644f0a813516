"""The review actions on one document, as a CLI or an API calls them: claim, release, correct, settle.

Each action reads the item (strongly consistent), applies the pure rules (jobs.review.rules,
jobs.review.corrections), and writes the next version conditional on the one it read. Actions that
change what the document says (correct, settle) write result.json first, as the ingest does:
over the version the item names (S3 If-Match on `resultEtag`, Buckets.put_fenced), keeping the
machine's reading and adding the review record beside it; then the item with the new ETag. If
the item write loses (a re-upload or another reviewer got there first), the bytes just written
are put back over themselves (If-Match on their own ETag, so a newer writer's are never touched)
and the caller is told: nothing of the action is kept. result.json is always read as the item
knows it (Buckets.get_version), so bytes a losing writer could not take back are never built on.

A correction that changes the invoice's identity (vendor, number, currency, total) moves its
duplicate marker in the same transaction as the item (jobs.contract.duplicates): the old one is
given up, the new one taken, or, when another live document holds it, the document keeps a reason
naming that one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.contract import (
    DocumentItem,
    DuplicateKind,
    Invoice,
    ResultDocument,
    RetentionClass,
    ReviewRecord,
    Settlement,
    Status,
    held_marker,
    layout,
)
from jobs.contract.actors import ActorKind, actor
from jobs.contract.duplicates import duplicates_named, invoice_digest, is_duplicate_reason, with_duplicates
from jobs.errors import ReviewConflictError, ReviewRefusedError, StoreError
from jobs.extract.settings import ExtractionSettings
from jobs.observability import CallMetrics
from jobs.review import corrections, rules
from jobs.runtime.stores import buckets, document_table
from jobs.settings import JobSettings
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from jobs.store.table_writes import Write, WriteGroup, marker_put, marker_release, version_put


@dataclass(frozen=True)
class ReviewOutcome:
    item: DocumentItem
    result: ResultDocument | None = None  # the result.json written, for the actions that write one


class ReviewDesk:
    def __init__(
        self,
        settings: JobSettings,
        table: DocumentTable,
        buckets: Buckets,
        clock: Callable[[], datetime] = layout.utc_now,
    ) -> None:
        self._settings = settings
        self._table = table
        self._buckets = buckets
        self._clock = clock
        self._extraction = ExtractionSettings.of(settings.extraction)

    @classmethod
    def from_settings(
        cls, settings: JobSettings, table: DocumentTable | None = None, calls: CallMetrics | None = None
    ) -> ReviewDesk:
        """The desk on the stack the settings name (clients from boto3's own configuration)."""
        calls = calls or CallMetrics()
        return cls(settings, table or document_table(settings, calls), buckets(settings, calls))

    # --- the actions ---------------------------------------------------------------------------
    def claim(self, user_id: str, document_id: str, reviewer: str) -> ReviewOutcome:
        """Take the document for review (or renew one's own claim)."""
        who, item = self._read(user_id, document_id, reviewer)
        lease = timedelta(seconds=self._settings.review.review_lease_seconds)
        return ReviewOutcome(self._write(item, rules.claimed(item, who, self._clock(), lease)))

    def release(self, user_id: str, document_id: str, reviewer: str) -> ReviewOutcome:
        """Give one's claim up: another reviewer may take the document at once."""
        who, item = self._read(user_id, document_id, reviewer)
        return ReviewOutcome(self._write(item, rules.released(item, who, self._clock())))

    def correct(self, user_id: str, document_id: str, reviewer: str, pairs: list[str]) -> ReviewOutcome:
        """Set header fields (`field=value`), normalized and validated like an extraction."""
        changes = corrections.parse(pairs)
        who, item = self._read(user_id, document_id, reviewer)
        now = self._clock()
        rules.must_hold(item, who, now)
        data, result = self._result(item)
        review = result.review or ReviewRecord()
        reasons = result.current_validation.reasons
        fixed = corrections.apply(
            result.current_invoice,
            [r for r in reasons if not is_duplicate_reason(r)],
            changes,
            settings=self._extraction,
            actor=who,
            now=now,
        )
        if not fixed.corrections:
            return ReviewOutcome(item, result)  # the values are already these: nothing to write
        identity = self._invoice_identity(item, fixed.invoice)
        # Duplicates of its bytes stay so; of its invoice, as the corrected identity stands.
        duplicates = duplicates_named(reasons)
        if identity.digest != item.invoiceDigest:
            duplicates.pop(DuplicateKind.INVOICE, None)
            if identity.holder:
                duplicates[DuplicateKind.INVOICE] = identity.holder
        validation = with_duplicates(fixed.validation, duplicates)
        written = result.model_copy(
            update={
                "review": review.model_copy(
                    update={
                        "corrections": [*review.corrections, *fixed.corrections],
                        "invoice": fixed.invoice,
                        "validation": validation,
                    }
                )
            }
        )
        etag = self._put_result(item, written)
        summary = {name: getattr(fixed.invoice, name) for name in corrections.FIELDS.values()}
        nxt = rules.corrected(
            item,
            who,
            now,
            **summary,
            reviewReasons=validation.reasons,
            resultEtag=etag,
            invoiceDigest=identity.digest,
            invoiceMarker=identity.digest if identity.held else None,
        )
        return ReviewOutcome(self._write(item, nxt, identity.writes(item, who, now), rollback=(etag, data)), written)

    def settle(self, user_id: str, document_id: str, reviewer: str) -> ReviewOutcome:
        """Accept the document as it stands (a duplicate: as not a duplicate): PROCESSED."""
        who, item = self._read(user_id, document_id, reviewer)
        now = self._clock()
        rules.must_hold(item, who, now)
        data, result = self._result(item)
        review = result.review or ReviewRecord()
        settlement = Settlement(by=who, at=now, status=Status.PROCESSED, acceptedReasons=item.reviewReasons)
        written = result.model_copy(update={"review": review.model_copy(update={"settled": settlement})})
        etag = self._put_result(item, written)
        return ReviewOutcome(self._write(item, rules.settled(item, who, now, etag), rollback=(etag, data)), written)

    # --- reads and writes ----------------------------------------------------------------------
    def _read(self, user_id: str, document_id: str, reviewer: str) -> tuple[str, DocumentItem]:
        try:
            who = actor(ActorKind.REVIEWER, reviewer)
        except ValueError as exc:
            raise ReviewRefusedError(f"reviewer {reviewer!r}: {exc}") from exc
        return who, rules.in_review(self._table.get(user_id, document_id), user_id, document_id)

    def _result(self, item: DocumentItem) -> tuple[bytes, ResultDocument]:
        """result.json as the item knows it (its bytes, and the document they hold)."""
        if not item.resultEtag:
            raise ReviewRefusedError(f"document {item.documentId!r} has no result.json to review")
        key = layout.result_key(item.userId, item.documentId)
        data = self._buckets.get_version(self._settings.store.processed_bucket, key, item.resultEtag)
        return data, ResultDocument.from_json_bytes(data)

    def _put_result(self, item: DocumentItem, result: ResultDocument) -> str:
        etag = self._buckets.put_fenced(
            self._settings.store.processed_bucket,
            layout.result_key(item.userId, item.documentId),
            result.to_json_bytes(),
            replaces=item.resultEtag,
            retention=self._retention(item),
            still_held=lambda: self._unchanged(item),
            legal_hold=item.held,
        )
        if etag is None:
            raise _conflict(item)
        return etag

    def _retention(self, item: DocumentItem) -> RetentionClass:
        """The tag result.json keeps: its document's class (one written before retention was
        recorded gets the class of a document of no known type, as a tombstone would).
        """
        return item.retentionClass or self._settings.store.retention.class_of(None)

    def _unchanged(self, item: DocumentItem) -> bool:
        current = self._table.get(item.userId, item.documentId)
        return current is not None and current.version == item.version

    def _write(
        self,
        item: DocumentItem,
        nxt: DocumentItem,
        markers: tuple[Write, ...] = (),
        rollback: tuple[str, bytes] | None = None,
    ) -> DocumentItem:
        """The next version, over the one read, with its marker writes; on a lost race, the
        result.json just written is taken back and the caller told.
        """
        outcome = self._table.write_all([WriteGroup((version_put(nxt, item.version), *markers))], "dynamodb.review")[0]
        if outcome.landed:
            return nxt
        if rollback is not None:
            etag, data = rollback
            key = layout.result_key(item.userId, item.documentId)
            # A newer writer's bytes may be there already (the put is refused), or the store may
            # be down: the next writer's fence copes with what is left either way.
            with contextlib.suppress(StoreError):
                self._buckets.put_json(
                    self._settings.store.processed_bucket,
                    key,
                    data,
                    replaces=etag,
                    retention=self._retention(item),
                    legal_hold=item.held,
                )
        if 0 in outcome.lost:
            raise _conflict(item)
        raise ReviewConflictError(
            f"the invoice identity of {item.documentId!r} was taken by another document meanwhile: nothing was "
            "changed, correct it again"
        )

    def _invoice_identity(self, item: DocumentItem, invoice: Invoice) -> _Identity:
        """Where the corrected invoice's identity stands: held by this document, by another live
        one (a duplicate), or free (taken in the item's transaction).
        """
        digest = invoice_digest(invoice.vendorName, invoice.invoiceNumber, invoice.currency, invoice.totalAmount)
        if digest == item.invoiceDigest:
            return _Identity(digest, None, None, held=item.invoiceMarker is not None)
        if digest is None:
            return _Identity(None, None, None, held=False)
        marker = self._table.get_marker(item.userId, DuplicateKind.INVOICE, digest)
        if marker is None or marker.documentId == item.documentId:
            return _Identity(digest, None, None, held=True)
        other = self._table.get(item.userId, marker.documentId)
        if other is not None and other.holds(DuplicateKind.INVOICE, digest):
            return _Identity(digest, marker.documentId, None, held=False)
        return _Identity(digest, None, marker.documentId, held=True)


@dataclass(frozen=True)
class _Identity:
    """The invoice identity a corrected document ends with."""

    digest: str | None
    holder: str | None  # another live document that holds it: this one is its duplicate
    left_by: str | None  # a document that no longer holds the marker it left: taken over
    held: bool  # this document holds its marker

    def writes(self, item: DocumentItem, actor_: str, now: datetime) -> tuple[Write, ...]:
        out: list[Write] = []
        before = item.invoiceMarker
        after = self.digest if self.held else None
        if before is not None and before != after:
            out.append(marker_release(item.userId, DuplicateKind.INVOICE, before, item.documentId))
        if after is not None and after != before:
            marker = held_marker(item.evolve(updatedAt=now), DuplicateKind.INVOICE, after, actor_)
            out.append(marker_put(marker, self.left_by))
        return tuple(out)


def _conflict(item: DocumentItem) -> ReviewConflictError:
    return ReviewConflictError(
        f"document {item.documentId!r} changed since it was read (a re-upload, or another reviewer): "
        "nothing was changed, read it again"
    )
