"""The erasure's write-ahead count (pure): a pending batch counts what of it is no longer stored."""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.contract import layout
from jobs.contract.erasure import ErasureCounts, ErasureMarker, ErasureState
from jobs.contract.objects import ObjectVersion
from jobs.erasure.journal import items_pending, landed, stored_prints, versions_pending
from jobs.erasure.selection import ItemToDelete

AT = datetime(2026, 12, 1, tzinfo=UTC)


def _version(key: str, vid: str, marker: bool = False) -> ObjectVersion:
    return ObjectVersion("raw", key, vid, AT, True, marker)


def test_a_pending_batch_counts_only_what_is_gone() -> None:
    versions = [_version("raw/u/a/x", "1"), _version("raw/u/a/x", "2"), _version("raw/u/b/y", "3", marker=True)]
    pending = versions_pending(versions)
    assert landed(pending, stored_prints(versions, [])) == ErasureCounts()  # the request never went
    assert landed(pending, stored_prints([], [])) == ErasureCounts(versions=2, deleteMarkers=1)
    # Half landed (a version S3 refused stays): only the gone one counts. A new version of the
    # same key is another fingerprint: not mistaken for the one the batch deleted.
    later = [versions[0], _version("raw/u/b/y", "4")]
    assert landed(pending, stored_prints(later, [])) == ErasureCounts(versions=1, deleteMarkers=1)


def test_items_count_by_their_key() -> None:
    doc = {layout.PK_ATTR: "USER#u", layout.SK_ATTR: "DOC#a"}
    other = {layout.PK_ATTR: "USER#u", layout.SK_ATTR: "DUP#CONTENT#x"}
    batch = [ItemToDelete(doc, 2, item=None), ItemToDelete(other, None)]
    pending = items_pending(batch)
    assert landed(pending, stored_prints([], [other])) == ErasureCounts(items=1)
    assert landed(pending, set()) == ErasureCounts(items=2)


def test_the_marker_keeps_its_pending_batch_through_dynamodb_shape() -> None:
    pending = versions_pending([_version("raw/u/a/x", "1")])
    marker = ErasureMarker(
        userId="u", runId="r", state=ErasureState.RUNNING, startedAt=AT, updatedBy="erasure:r", pending=pending
    )
    again = ErasureMarker.from_item(marker.to_item())
    assert again.pending == pending and len(pending.versions[0]) == 16
    assert "pending" not in marker.model_copy(update={"pending": None}).to_item()
