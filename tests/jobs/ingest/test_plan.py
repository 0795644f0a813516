"""The ingest's pure decisions: sharding and what to do with each raw object."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobs.contract import DocumentItem, Status, layout
from jobs.contract.objects import ObjectInfo
from jobs.ingest.plan import Action, Admission, NewestSeen, decide, is_older, newest, released, shard_of

NOW = datetime(2026, 11, 29, 2, 0, tzinfo=UTC)
UPLOADED = datetime(2026, 11, 28, 18, 30, 5, tzinfo=UTC)
RAW = layout.RawKey("alice", "inv-1", "a.xml")
OBJ = ObjectInfo("raw-bucket", RAW.key, '"etag-1"', 100, UPLOADED)
LEASE = timedelta(minutes=15)


def existing(status: Status, **kw: object) -> DocumentItem:
    fields: dict[str, object] = {
        "userId": "alice",
        "documentId": "inv-1",
        "status": status,
        "createdAt": UPLOADED,
        "updatedAt": NOW - timedelta(hours=1),
        "rawS3Uri": OBJ.uri,
        "rawEtag": OBJ.etag,
        "attempts": 1,
        "version": 2,
    }
    fields.update(kw)
    return DocumentItem.model_validate(fields)


def run(item: DocumentItem | None, max_attempts: int = 3):
    return decide(RAW, OBJ, item, now=NOW, owner="me", actor="ingest:test", lease=LEASE, max_attempts=max_attempts)


def test_new_document_is_claimed_with_a_lease_and_upload_time() -> None:
    decision = run(None)
    assert decision.action == Action.CLAIM and decision.expected_version is None
    claim = decision.claim
    assert claim is not None
    assert claim.status == Status.PROCESSING
    assert claim.createdAt == UPLOADED
    assert claim.leaseOwner == "me" and claim.leaseExpiresAt == NOW + LEASE
    assert (claim.attempts, claim.version) == (1, 1)


@pytest.mark.parametrize("status", [Status.PROCESSED, Status.REVIEW_REQUIRED])
def test_done_for_the_same_raw_object_is_skipped(status: Status) -> None:
    assert run(existing(status)).action == Action.SKIP_DONE


def test_reupload_with_a_new_etag_is_claimed_again_from_attempt_one() -> None:
    decision = run(existing(Status.PROCESSED, rawEtag='"old"', attempts=2, version=7))
    assert decision.action == Action.CLAIM and decision.expected_version == 7
    assert decision.claim is not None and (decision.claim.attempts, decision.claim.version) == (1, 8)
    assert decision.claim.rawEtag == OBJ.etag


def test_a_live_lease_is_respected_and_an_expired_one_taken_over() -> None:
    held = existing(Status.PROCESSING, leaseOwner="other", leaseExpiresAt=NOW + timedelta(minutes=1))
    assert run(held).action == Action.SKIP_LEASED
    expired = existing(Status.PROCESSING, leaseOwner="other", leaseExpiresAt=NOW - timedelta(seconds=1))
    decision = run(expired)
    assert decision.action == Action.CLAIM and decision.claim is not None
    assert decision.claim.attempts == 2 and decision.claim.leaseOwner == "me"


@pytest.mark.parametrize("previous", [None, existing(Status.FAILED, failureCode="INTERNAL", attempts=2, version=5)])
def test_a_released_claim_is_claimable_at_once_without_using_up_an_attempt(previous: DocumentItem | None) -> None:
    claim = run(previous).claim
    assert claim is not None
    later = NOW + timedelta(seconds=30)
    handed_back = released(claim, later, refund=True)
    assert handed_back.leaseExpiresAt == later and handed_back.version == claim.version + 1
    assert handed_back.attempts == (previous.attempts if previous else 0)
    assert released(claim, later, refund=False).attempts == claim.attempts  # its own processing failed
    again = decide(
        RAW,
        OBJ,
        handed_back,
        now=later + timedelta(milliseconds=1),
        owner="next",
        actor="ingest:next",
        lease=LEASE,
        max_attempts=3,
    )
    assert again.action == Action.CLAIM and again.expected_version == handed_back.version
    assert again.claim is not None and again.claim.attempts == claim.attempts


def test_retryable_failures_are_retried_up_to_the_maximum_then_dead_lettered() -> None:
    assert run(existing(Status.FAILED, failureCode="INTERNAL", attempts=2)).action == Action.CLAIM
    assert run(existing(Status.FAILED, failureCode="INTERNAL", attempts=3)).action == Action.DEAD_LETTER
    crashed = existing(Status.PROCESSING, attempts=3, leaseExpiresAt=NOW - timedelta(minutes=1))
    assert run(crashed).action == Action.DEAD_LETTER


def test_content_failures_are_not_retried_for_the_same_bytes() -> None:
    assert run(existing(Status.FAILED, failureCode="MALFORMED", attempts=1)).action == Action.DEAD_LETTER
    reupload = existing(Status.FAILED, failureCode="MALFORMED", rawEtag='"old"')
    assert run(reupload).action == Action.CLAIM


def test_a_tombstone_is_done_for_its_own_upload_but_a_newer_upload_of_the_same_bytes_is_a_new_life() -> None:
    """Upload, delete (the ingest writes the tombstone), upload the same file again: same key and
    ETag, but a later upload, so a new document life (issue 27). The tombstoned upload's own
    event, delivered again, still writes nothing.
    """
    tombstone = existing(Status.DELETED, attempts=1, version=3, resultEtag='"r1"')
    assert run(tombstone).action == Action.SKIP_DONE  # the upload the tombstone ended
    again = ObjectInfo(OBJ.bucket, OBJ.key, OBJ.etag, OBJ.size, UPLOADED + timedelta(hours=1))
    decision = decide(RAW, again, tombstone, now=NOW, owner="me", actor="ingest:test", lease=LEASE, max_attempts=3)
    assert decision.action == Action.CLAIM and decision.expected_version == 3
    claim = decision.claim
    assert claim is not None and (claim.attempts, claim.createdAt, claim.resultEtag) == (1, again.last_modified, '"r1"')
    # A listing reads the upload time to the second: a tombstone's own upload listed again is
    # back in the bucket, hence a new life as well.
    listed = ObjectInfo(OBJ.bucket, OBJ.key, OBJ.etag, OBJ.size, UPLOADED.replace(second=0))
    assert (
        decide(RAW, listed, tombstone, now=NOW, owner="me", actor="ingest:test", lease=LEASE, max_attempts=3).action
        == Action.CLAIM
    )


def _at(moment: datetime, etag: str, sequencer: str | None, key: str = RAW.key) -> ObjectInfo:
    return ObjectInfo("raw-bucket", key, etag, 1, moment, sequencer=sequencer)


def test_the_sequencer_orders_uploads_of_one_key_within_the_same_millisecond() -> None:
    # S3 documents the sequencer as the order of one key's events: hex strings of different
    # lengths, compared after left-padding the shorter with zeros.
    first, second = _at(UPLOADED, '"a"', "FF"), _at(UPLOADED, '"b"', "0100")
    assert is_older(first, second) and not is_older(second, first)
    assert newest([second, first]) is second and newest([first, second]) is second
    assert is_older(_at(UPLOADED, '"a"', "00ab"), _at(UPLOADED, '"b"', "AC"))  # case does not matter
    # Without a sequencer (moto, a listing), or across keys, the upload time decides, then the key.
    assert is_older(_at(UPLOADED, '"a"', None), _at(UPLOADED + timedelta(milliseconds=1), '"b"', None))
    other_key = _at(UPLOADED, '"b"', "00", key=layout.raw_key("alice", "inv-1", "b.xml"))
    assert is_older(first, other_key)  # "a.xml" < "b.xml": sequencers of two keys are not compared


def test_newest_seen_tells_a_superseded_upload_from_a_duplicate_of_the_one_decided() -> None:
    seen = NewestSeen()
    ident = ("alice", "inv-1")
    first, second = _at(UPLOADED, '"a"', "0A"), _at(UPLOADED, '"b"', "0B")
    assert seen.admit(ident, second) == Admission.NEW
    assert seen.admit(ident, first) == Admission.SUPERSEDED  # same millisecond: the sequencer says older
    assert seen.admit(ident, _at(UPLOADED, '"b"', "0B")) == Admission.DUPLICATE
    assert seen.admit(ident, _at(UPLOADED, '"c"', "0C")) == Admission.NEW


@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20), st.integers(1, 64))
def test_shard_is_stable_and_in_range(user: str, doc: str, count: int) -> None:
    shard = shard_of(user, doc, count)
    assert 0 <= shard < count
    assert shard == shard_of(user, doc, count)


def test_shards_spread_documents_evenly() -> None:
    counts = Counter(shard_of("u", f"doc-{i}", 4) for i in range(4000))
    assert set(counts) == {0, 1, 2, 3}
    assert min(counts.values()) > 850
