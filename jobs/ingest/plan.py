"""Pure decisions of the ingest: which shard owns a document, and what to do with a raw object.

Given the raw object (from a listing or an arrival event) and the item already stored (if any),
`decide` says skip, claim or give up, and builds the exact item the claim writes. No I/O here,
so every rule is a plain unit test.

Identity is the raw key *and* its ETag: the same bytes under a new filename are a new upload.
One documentId has one current raw object, the newest upload (S3's sequencer for one key's
events, else upload time, then key: `is_older`); an older file under the same documentId is
SUPERSEDED and reported, never claimed over the newer one. A DELETED tombstone ends one upload:
a later upload of the same bytes is a new document life.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import reduce
from typing import Any

from jobs.contract import DocumentItem, FailureCode, ObjectInfo, Status, check_transition, held_fields, layout

# Failures that depend on the bytes alone come back identical on a retry of the same ETag, so they
# are dead letters at once (a new upload is processed again); only failures of the run itself (a
# crashed or timed-out extraction worker) are retried, up to max_attempts, and a raw object that
# was archived (it is read once restored; waiting for a restore costs no attempt).
RETRYABLE_FAILURES = frozenset({FailureCode.INTERNAL.value, FailureCode.ARCHIVED.value})
UNCOUNTED_FAILURES = frozenset({FailureCode.ARCHIVED.value})


class Action(StrEnum):
    CLAIM = "CLAIM"
    SKIP_DONE = "SKIP_DONE"
    SKIP_LEASED = "SKIP_LEASED"
    SKIP_SUPERSEDED = "SKIP_SUPERSEDED"
    DEAD_LETTER = "DEAD_LETTER"


@dataclass(frozen=True)
class Decision:
    action: Action
    claim: DocumentItem | None = None
    expected_version: int | None = None
    previous: DocumentItem | None = None  # the item the claim replaces (restored if the claim proves stale)


def shard_of(user_id: str, document_id: str, shard_count: int) -> int:
    """Stable across runs, processes and machines (unlike hash())."""
    digest = hashlib.sha256(f"{user_id}\x00{document_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shard_count


def is_older(a: ObjectInfo, b: ObjectInfo) -> bool:
    """True when upload `a` was made before upload `b` (of one documentId).

    Two events of one key are ordered by S3's `sequencer`: S3 documents it as the order of that
    key's events, as hex strings of varying length compared after left-padding the shorter with
    zeros (two uploads within one millisecond have the same event time). Without both sequencers
    (a listing, moto's events) or across keys: the later upload time, then the larger key, so
    the choice is the same in every run and on every listing page.
    """
    if a.uri == b.uri and a.sequencer and b.sequencer:
        width = max(len(a.sequencer), len(b.sequencer))
        return a.sequencer.upper().rjust(width, "0") < b.sequencer.upper().rjust(width, "0")
    return (a.last_modified, a.uri) < (b.last_modified, b.uri)


def newest(objects: list[ObjectInfo]) -> ObjectInfo:
    return reduce(lambda best, obj: obj if is_older(best, obj) else best, objects)


class Admission(StrEnum):
    NEW = "NEW"  # decide it
    SUPERSEDED = "SUPERSEDED"  # a newer upload of the document was decided in this run
    DUPLICATE = "DUPLICATE"  # this very upload was decided in this run already


class NewestSeen:
    """The newest upload this run has decided per documentId, for the last `capacity` documents.

    Two files under one documentId sit side by side in a listing (one prefix), so a window
    across a page boundary is enough for the sweep to skip the older file whichever page holds
    it, before the batched read could show the newer one's claim. Bounded, so memory stays flat.
    """

    def __init__(self, capacity: int = 10_000) -> None:
        self._capacity = capacity
        self._seen: OrderedDict[tuple[str, str], ObjectInfo] = OrderedDict()

    def admit(self, ident: tuple[str, str], obj: ObjectInfo) -> Admission:
        known = self._seen.get(ident)
        if known is not None and is_older(obj, known):
            return Admission.SUPERSEDED
        if known == obj:
            return Admission.DUPLICATE
        self._seen[ident] = obj
        self._seen.move_to_end(ident)
        if len(self._seen) > self._capacity:
            self._seen.popitem(last=False)
        return Admission.NEW


def same_upload(obj: ObjectInfo, item: DocumentItem) -> bool:
    """True when `obj` is the very upload `item` recorded: its key, its bytes and its upload time.

    A DELETED tombstone ended one upload; the same bytes uploaded again under the same key are a
    new document life, which only the upload time tells apart (a listing reads it to the second,
    an event to the millisecond, so a listed object never passes for the event's upload: being
    listed, it is back in the bucket, a new life too).
    """
    return obj.same_version(item.rawS3Uri, item.rawEtag) and obj.last_modified == item.createdAt


def decide(
    raw: layout.RawKey,
    obj: ObjectInfo,
    existing: DocumentItem | None,
    *,
    now: datetime,
    owner: str,
    actor: str,
    lease: timedelta,
    max_attempts: int,
) -> Decision:
    skip = _skip(obj, existing, now, max_attempts) if existing is not None else None
    if skip is not None:
        return Decision(skip)
    check_transition(existing.status if existing is not None else None, Status.PROCESSING)
    attempts = _attempt(existing) if existing is not None and _same_life(obj, existing) else 1
    claim = DocumentItem(
        userId=raw.user_id,
        documentId=raw.document_id,
        status=Status.PROCESSING,
        createdAt=obj.last_modified,
        updatedAt=now,
        updatedBy=actor,
        rawS3Uri=obj.uri,
        rawEtag=obj.etag,
        attempts=attempts,
        version=existing.version + 1 if existing is not None else 1,
        leaseOwner=owner,
        leaseExpiresAt=now + lease,
        # The result.json this claim may replace: its write is fenced on this ETag.
        resultEtag=existing.resultEtag if existing is not None else None,
        **_kept_by_claims(existing, obj),
    )
    if existing is not None:
        claim = existing.evolve(**dict(claim))  # fresh, but carrying attributes a tool or person added
    return Decision(Action.CLAIM, claim, existing.version if existing is not None else None, existing)


def _same_life(obj: ObjectInfo, existing: DocumentItem) -> bool:
    """`obj` is the raw object `existing` records, in the same life of the document: the same
    bytes uploaded again after the tombstone are a new document life.
    """
    if not obj.same_version(existing.rawS3Uri, existing.rawEtag):
        return False
    return existing.status != Status.DELETED or same_upload(obj, existing)


def _skip(obj: ObjectInfo, existing: DocumentItem, now: datetime, max_attempts: int) -> Action | None:
    """Why `obj` is not claimed over `existing`, or None to claim it."""
    if existing.deletedAt is not None and obj.last_modified <= existing.deletedAt:
        # Uploaded before its owner deleted the document: hidden by that delete (or by a delete
        # still to be completed by running it again), never a new life of the document.
        return Action.SKIP_DONE
    if _same_life(obj, existing):
        return _skip_same_object(existing, now, max_attempts)
    if existing.status != Status.DELETED and (obj.last_modified, obj.uri) < (existing.createdAt, existing.rawS3Uri):
        # An older upload than the document's current one (a stale event, or a second file
        # under the documentId): the newer upload is the document.
        return Action.SKIP_SUPERSEDED
    return None


def _skip_same_object(existing: DocumentItem, now: datetime, max_attempts: int) -> Action | None:
    """The object the item already records: claimed again only after a lapsed lease or a
    retryable failure, within the attempts.
    """
    if existing.status == Status.PROCESSING:
        if existing.leaseExpiresAt is not None and existing.leaseExpiresAt > now:
            return Action.SKIP_LEASED
        return Action.DEAD_LETTER if existing.attempts >= max_attempts else None
    if existing.status == Status.FAILED:
        return None if _retryable(existing, max_attempts) else Action.DEAD_LETTER
    return Action.SKIP_DONE  # finished, or a tombstone of this very object


def _retryable(failed: DocumentItem, max_attempts: int) -> bool:
    """A failure worth another claim of the same upload: a retryable one, attempts left (an
    archived raw object is retried however many attempts were spent: it was never at fault).
    """
    if failed.failureCode in UNCOUNTED_FAILURES:
        return True
    return failed.failureCode in RETRYABLE_FAILURES and failed.attempts < max_attempts


def _attempt(existing: DocumentItem) -> int:
    """The attempt a claim of the same upload makes: the next, unless the last was uncounted."""
    uncounted = existing.status == Status.FAILED and existing.failureCode in UNCOUNTED_FAILURES
    return existing.attempts + (0 if uncounted else 1)


def _kept_by_claims(existing: DocumentItem | None, obj: ObjectInfo) -> dict[str, Any]:
    """What every version keeps: the class decided when the document first finished (a new
    upload restarts its retention, counted from createdAt, not the choice; its end is decided
    when it finishes, and until then the claim has none, nor a TTL), a legal hold, and the
    duplicate markers the document holds.
    """
    if existing is None:
        return {}
    same = obj.same_version(existing.rawS3Uri, existing.rawEtag)
    return {
        "retentionClass": existing.retentionClass,
        "retainUntil": existing.retainUntil if same else None,
        "legalHoldAt": existing.legalHoldAt,
        "legalHoldBy": existing.legalHoldBy,
        # The duplicate markers the document holds stay its own until its finish moves them (a
        # deleted document holds none: its delete gave them up).
        "contentDigest": existing.contentDigest,
        "invoiceDigest": existing.invoiceDigest,
        **held_fields(existing.held_markers if existing.status != Status.DELETED else {}),
    }


def released(claim: DocumentItem, now: datetime, *, refund: bool) -> DocumentItem:
    """The claim handed back by a run that stops before finishing it.

    The lease ends now, so the next run claims the document at once instead of waiting out the
    lease. The attempt is refunded when the document was never at fault (its processing had not
    started, or was cut off by the stop); a document whose own processing failed keeps the
    attempt, so one that fails every run is dead-lettered after max_attempts.
    """
    return claim.evolve(
        version=claim.version + 1,
        updatedBy=claim.updatedBy,  # the run that made the claim hands it back
        attempts=max(claim.attempts - 1, 0) if refund else claim.attempts,
        updatedAt=now,
        leaseExpiresAt=now,
    )


def restored(previous: DocumentItem, claim: DocumentItem, now: datetime) -> DocumentItem:
    """The item as it was before a claim that proved stale (its raw object had been replaced or
    deleted in the meantime), written over the claim so the newer state is not lost.
    """
    return previous.evolve(version=claim.version + 1, updatedAt=now, updatedBy=claim.updatedBy)


def drain_deadline(started: datetime, scheduled: datetime | None, max_seconds: float | None) -> datetime | None:
    """When a run bounded by `max_seconds` stops taking work: counted from the time the schedule
    meant it to start when it says so (EventBridge Scheduler may start a task late, up to the
    schedule's maximum event age, and the bound exists to end the drain before the reconcile),
    from the run's own start otherwise (a manual run). None: no bound.
    """
    if max_seconds is None:
        return None
    return (scheduled or started) + timedelta(seconds=max_seconds)
