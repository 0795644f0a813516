"""Who may act on a document in review, and the version each action writes (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs.contract import DocumentItem, Status
from jobs.errors import DocumentNotFoundError, InvalidTransitionError, ReviewRefusedError
from jobs.review import rules

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
LEASE = timedelta(minutes=30)
ALICE, BOB = "reviewer:alice", "reviewer:bob"


def item(**changes: object) -> DocumentItem:
    base = DocumentItem(
        userId="u1",
        documentId="d1",
        status=Status.REVIEW_REQUIRED,
        createdAt=NOW - timedelta(days=1),
        updatedAt=NOW - timedelta(hours=1),
        rawS3Uri="s3://raw/raw/u1/d1/a.xml",
        rawEtag='"e"',
        version=3,
        updatedBy="ingest:run1",
        reviewReasons=["MISSING_FIELD:vendorName"],
        resultEtag='"r"',
    )
    return base.evolve(**changes)


def test_a_claim_is_a_new_version_by_the_reviewer_with_a_lease() -> None:
    claimed = rules.claimed(item(), ALICE, NOW, LEASE)
    assert (claimed.version, claimed.updatedBy, claimed.leaseOwner) == (4, ALICE, ALICE)
    assert claimed.leaseExpiresAt == NOW + LEASE and claimed.status == Status.REVIEW_REQUIRED


def test_one_reviewer_at_a_time_until_the_claim_expires() -> None:
    held = rules.claimed(item(), ALICE, NOW, LEASE)
    with pytest.raises(ReviewRefusedError, match="claimed by reviewer:alice until"):
        rules.claimed(held, BOB, NOW + LEASE - timedelta(seconds=1), LEASE)
    taken = rules.claimed(held, BOB, NOW + LEASE, LEASE)  # expired: taken over
    assert taken.leaseOwner == BOB and taken.version == held.version + 1
    renewed = rules.claimed(held, ALICE, NOW + timedelta(minutes=20), LEASE)
    assert renewed.leaseExpiresAt == NOW + timedelta(minutes=50)


def test_acting_needs_ones_own_claim_with_time_left() -> None:
    with pytest.raises(ReviewRefusedError, match="not claimed"):
        rules.must_hold(item(), ALICE, NOW)
    held = rules.claimed(item(), ALICE, NOW, LEASE)
    with pytest.raises(ReviewRefusedError, match="claimed by reviewer:alice"):
        rules.must_hold(held, BOB, NOW)
    rules.must_hold(held, ALICE, NOW + LEASE - rules.ACTION_MARGIN)
    with pytest.raises(ReviewRefusedError, match="claim it again"):
        rules.must_hold(held, ALICE, NOW + LEASE - rules.ACTION_MARGIN + timedelta(seconds=1))
    with pytest.raises(ReviewRefusedError, match="not claimed"):
        rules.must_hold(held, ALICE, NOW + LEASE)


def test_only_the_holder_releases() -> None:
    held = rules.claimed(item(), ALICE, NOW, LEASE)
    with pytest.raises(ReviewRefusedError, match="not claimed by reviewer:bob"):
        rules.released(held, BOB, NOW)
    free = rules.released(held, ALICE, NOW)
    assert free.leaseOwner is None and free.leaseExpiresAt is None and free.updatedBy == ALICE


def test_settling_accepts_the_document_and_ends_the_claim() -> None:
    held = rules.claimed(item(), ALICE, NOW, LEASE)
    done = rules.settled(held, ALICE, NOW, '"r2"')
    assert (done.status, done.reviewReasons, done.leaseOwner, done.resultEtag) == (Status.PROCESSED, [], None, '"r2"')
    assert done.to_item()["GSI1PK"] == "STATUS#PROCESSED"  # off the review queue
    with pytest.raises(InvalidTransitionError):
        rules.settled(item(status=Status.FAILED), ALICE, NOW, '"r"')


@pytest.mark.parametrize("status", [s for s in Status if s != Status.REVIEW_REQUIRED])
def test_only_a_document_in_review_is_reviewed(status: Status) -> None:
    with pytest.raises(ReviewRefusedError, match=f"is {status.value}, not in review"):
        rules.in_review(item(status=status), "u1", "d1")


def test_a_document_the_user_does_not_have_is_not_found() -> None:
    with pytest.raises(DocumentNotFoundError, match="user 'u2' has no document 'd1'"):
        rules.in_review(None, "u2", "d1")
