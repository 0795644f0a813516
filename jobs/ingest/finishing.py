"""The finish of one claimed document, together with the duplicate markers it takes or gives up.

The finished item and its markers (jobs.contract.duplicates) go as one write group through the
batcher, so they land together: a document holds a marker exactly when its item says so. Taking a
marker is optimistic: a new identity costs no read, only the marker's put in the transaction the
finish rides anyway. When another document holds an identity, the group is lost and the marker
it met names the holder; a follow-up (on an I/O thread, never the batcher's) reads the holder:
- it still holds the identity: this document is its duplicate. result.json is written again with
  that verdict (in review, a reason naming the holder), fenced like the first write, and the
  finish is sent again without that marker;
- it does not (a marker left behind by a writer that never gave it up): the marker is taken
  over, on the condition that it still names that holder.
A marker this document held whose release lost its condition is no longer its own: the finish is
sent again without that release. Each round settles at least one identity, so a document needs
a few rounds at most; one that does not settle is left, leased, to the next run.

A holder the run itself finished is known before the first write (jobs.ingest.sightings): the
document reads it, and while it still holds the identity, the document's first result.json
already carries the verdict and its finish leaves that marker out, so nothing is cancelled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime

from jobs.contract import (
    DocumentItem,
    DuplicateKind,
    ObjectInfo,
    ResultDocument,
    RetentionClass,
    RetentionPolicy,
    Status,
    finished_item,
    held_fields,
    held_marker,
    layout,
)
from jobs.contract.duplicates import CLAIMING, is_duplicate_reason, with_duplicates
from jobs.errors import RunStoppedError
from jobs.ingest.futures import flattened, resolved, then
from jobs.ingest.results import DocumentResult
from jobs.ingest.sightings import Sightings
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from jobs.store.table_writes import GroupOutcome, Write, WriteGroup, finish_put, marker_put, marker_release

logger = logging.getLogger(__name__)

MAX_ROUNDS = 6
Submit = Callable[[WriteGroup], "Future[GroupOutcome]"]
FollowUp = Callable[[Callable[[], "Future[DocumentResult]"]], "Future[Future[DocumentResult]]"]


@dataclass
class Finishing:
    """One document between its first result.json write and its finish."""

    raw: layout.RawKey
    obj: ObjectInfo
    claim: DocumentItem
    result: ResultDocument  # as last written
    result_uri: str
    result_etag: str
    digests: dict[DuplicateKind, str]  # the document's identities (jobs.contract.duplicates)
    duplicates: dict[DuplicateKind, str] = field(default_factory=dict)  # kind → the holder it duplicates
    take_over: dict[DuplicateKind, str] = field(default_factory=dict)  # kind → a holder that let go
    not_mine: set[DuplicateKind] = field(default_factory=set)  # held before, taken by another since
    rounds: int = 0

    @property
    def wanted(self) -> dict[DuplicateKind, str]:
        """The identities its outcome claims: a readable outcome claims all it has."""
        return dict(self.digests) if self.result.validation.status in CLAIMING else {}

    @property
    def held(self) -> dict[DuplicateKind, str]:
        return {kind: digest for kind, digest in self.wanted.items() if kind not in self.duplicates}

    @property
    def released(self) -> dict[DuplicateKind, str]:
        return {
            kind: digest
            for kind, digest in self.claim.held_markers.items()
            if self.held.get(kind) != digest and kind not in self.not_mine
        }


class Finisher:
    def __init__(
        self,
        table: DocumentTable,
        buckets: Buckets,
        processed_bucket: str,
        submit: Submit,
        follow_up: FollowUp,
        clock: Callable[[], datetime],
        policy: RetentionPolicy,
    ) -> None:
        self._table = table
        self._buckets = buckets
        self._processed_bucket = processed_bucket
        self._submit = submit
        self._follow_up = follow_up
        self._clock = clock
        self._policy = policy
        self._sightings = Sightings()

    def known_duplicates(
        self, user_id: str, document_id: str, digests: dict[DuplicateKind, str]
    ) -> dict[DuplicateKind, str]:
        """The identities of `digests` that a document this run finished still holds (kind →
        holder), read before the document's first write; one read per holder.
        """
        found: dict[DuplicateKind, str] = {}
        for holder in set(self._sightings.holders(user_id, digests, document_id).values()):
            other = self._table.get(user_id, holder)
            held = {k: d for k, d in digests.items() if other is not None and other.holds(k, d)}
            found.update(dict.fromkeys(held, holder))
            self._sightings.forget(user_id, {k: d for k, d in digests.items() if k not in held}, holder)
        return found

    def finish(self, f: Finishing) -> Future[DocumentResult]:
        """Send the finish with its markers; the future completes once the document is settled."""
        item = self._item(f)
        writes: list[tuple[DuplicateKind | None, Write]] = [(None, finish_put(item, _owner(f.claim), f.claim.version))]
        actor = claim_actor(f.claim)
        for kind, digest in f.held.items():
            writes.append((kind, marker_put(held_marker(item, kind, digest, actor), f.take_over.get(kind))))
        for kind, digest in f.released.items():
            writes.append((kind, marker_release(item.userId, kind, digest, item.documentId)))
        landed = self._submit(WriteGroup(tuple(w for _, w in writes)))
        return flattened(then(landed, lambda outcome: self._after(f, writes, outcome)))

    def _item(self, f: Finishing) -> DocumentItem:
        now, actor = self._clock(), claim_actor(f.claim)
        finished = finished_item(f.claim, f.result, f.result_uri, f.result_etag, now, actor, self._policy)
        return finished.evolve(
            contentDigest=f.digests.get(DuplicateKind.CONTENT),
            invoiceDigest=f.digests.get(DuplicateKind.INVOICE),
            **held_fields(f.held),
        )

    def _after(
        self, f: Finishing, writes: list[tuple[DuplicateKind | None, Write]], outcome: GroupOutcome
    ) -> Future[DocumentResult]:
        if outcome.landed:
            self._sightings.saw(f.raw.user_id, f.held, f.raw.document_id)
            self._sightings.forget(f.raw.user_id, f.released, f.raw.document_id)
            return resolved(_document_result(f, landed=True))
        if 0 in outcome.lost:
            return resolved(_document_result(f, landed=False))  # the claim was taken over
        holders: dict[DuplicateKind, str | None] = {}
        for index, met in outcome.lost.items():
            kind = writes[index][0]
            assert kind is not None
            if kind in f.held:
                holders[kind] = met.get("documentId") if met else None
            else:
                f.not_mine.add(kind)  # a release that lost: the marker is another document's now
        f.rounds += 1
        if f.rounds >= MAX_ROUNDS:
            logger.warning("duplicate markers kept changing; left to the next run", extra={"key": f.obj.key})
            return resolved(_document_result(f, landed=False))
        try:
            return flattened(self._follow_up(lambda: self._resolve(f, holders)))
        except RuntimeError as exc:  # the run is shutting its I/O pool down: hand the claim back
            raise RunStoppedError("stopping before a duplicate could be settled") from exc

    def _resolve(self, f: Finishing, holders: dict[DuplicateKind, str | None]) -> Future[DocumentResult]:
        """On an I/O thread: judge the holders of the markers that were taken, then finish again."""
        found = dict(f.duplicates)
        read: dict[str, DocumentItem | None] = {}  # one read per holder (often both kinds' holder)
        for kind, holder in holders.items():
            f.take_over.pop(kind, None)
            if holder is None:
                continue  # the marker went away meanwhile: simply take it
            if holder not in read:
                read[holder] = self._table.get(f.raw.user_id, holder)
            other = read[holder]
            if other is not None and other.holds(kind, f.wanted[kind]):
                found[kind] = holder
                self._sightings.saw(f.raw.user_id, {kind: f.wanted[kind]}, holder)
            else:
                f.take_over[kind] = holder
        if found != f.duplicates:
            f.duplicates = found
            verdict = with_duplicates(f.result.validation, found)
            rewritten = f.result.model_copy(update={"validation": verdict})
            etag = self._buckets.put_fenced(
                self._processed_bucket,
                layout.result_key(f.raw.user_id, f.raw.document_id),
                rewritten.to_json_bytes(),
                replaces=f.result_etag,
                retention=_retention(f.result),
                still_held=lambda: self._still_held(f.claim),
                legal_hold=f.claim.held,
            )
            if etag is None:
                return resolved(_document_result(f, landed=False))
            f.result, f.result_etag = rewritten, etag
        return self.finish(f)

    def _still_held(self, claim: DocumentItem) -> bool:
        return still_held(self._table, claim)


def still_held(table: DocumentTable, claim: DocumentItem) -> bool:
    """The claim is still the document's current version: no other writer has taken it over."""
    item = table.get(claim.userId, claim.documentId)
    return (
        item is not None
        and item.version == claim.version
        and item.leaseOwner == claim.leaseOwner
        and item.status == Status.PROCESSING
    )


def _document_result(f: Finishing, *, landed: bool) -> DocumentResult:
    raw, obj = f.raw, f.obj
    if not landed:
        # Our lease expired and another worker took the document over; its write wins.
        logger.warning("claim lost before finish", extra={"key": obj.key})
        return DocumentResult(raw.user_id, raw.document_id, obj.key, None)
    validation = f.result.validation
    return DocumentResult(
        raw.user_id,
        raw.document_id,
        obj.key,
        validation.status,
        f.result.source.format,
        validation.errorCode.value if validation.errorCode else None,
        validation.errorMessage,
        duplicate_of=tuple(r for r in validation.reasons if is_duplicate_reason(r)),
    )


def _retention(result: ResultDocument) -> RetentionClass:
    retention = result.retentionClass
    assert retention is not None  # the ingest decides it before the first write
    return retention


def _owner(claim: DocumentItem) -> str:
    return claim.leaseOwner or ""


def claim_actor(claim: DocumentItem) -> str:
    """The run that holds `claim` writes every later version of it under the claim's actor."""
    if claim.updatedBy is None:
        raise ValueError(f"claim of {claim.documentId} names no actor")
    return claim.updatedBy
