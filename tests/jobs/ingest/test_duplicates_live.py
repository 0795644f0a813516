"""Duplicates, never silently: the same bytes or the same invoice twice within a user, on the live stack."""

from __future__ import annotations

import json
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from jobs.contract import DuplicateKind, DuplicateMarker, ResultDocument, Status, layout
from jobs.contract.duplicates import content_digest, duplicate_reason
from jobs.documents.actions import DocumentActions
from jobs.documents.queries import list_documents
from jobs.ingest.plans import DrainPlan
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.review.desk import ReviewDesk
from jobs.store.clients import dynamodb_client
from jobs.store.dynamo import DocumentTable
from jobs.store.dynamo_wire import to_wire
from jobs.store.s3 import Buckets

INVOICE = {
    "invoiceNumber": "INV-7",
    "vendorName": "Acme GmbH",
    "invoiceDate": "2026-03-01",
    "currency": "EUR",
    "subtotal": "100.00",
    "tax": "19.00",
    "totalAmount": "119.00",
}


def body(**fields: object) -> bytes:
    return json.dumps({**INVOICE, **fields}).encode()


def upload(stack, user: str, doc: str, data: bytes, name: str = "invoice.json") -> str:
    key = layout.raw_key(user, doc, name)
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=data)
    return key


def drain(stack):
    return IngestRun(stack.settings, DrainPlan(idle_seconds=1)).execute()


def items(stack, user: str = "u1") -> dict[str, object]:
    return {i.documentId: i for i in stack.items() if i.userId == user}


def result_of(stack, user: str, doc: str) -> ResultDocument:
    got = stack.s3().get_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key(user, doc))
    return ResultDocument.from_json_bytes(got["Body"].read())


def marker_holders(stack, user: str = "u1") -> dict[tuple[DuplicateKind, str], str]:
    """(kind, digest) → the document whose marker it is."""
    return {(m.kind, m.digest): m.documentId for m in stack.markers() if m.userId == user}


def test_a_hundred_uploads_of_one_file_are_one_document_and_99_flagged_duplicates(stack) -> None:
    data = body()
    for n in range(100):
        upload(stack, "u1", f"copy-{n:03d}", data)
    # Near-duplicates: the same number from other vendors, and the same bytes of another user.
    for n in range(5):
        upload(stack, "u1", f"other-{n}", body(vendorName=f"Vendor {n} SA"))
    upload(stack, "u2", "copy-000", data)
    summary = drain(stack)
    assert summary.processed == 106 and summary.duplicateCount == 99, summary.statuses

    docs = items(stack)
    holders = marker_holders(stack)
    original = holders[(DuplicateKind.CONTENT, content_digest(data))]
    assert holders[(DuplicateKind.INVOICE, docs["copy-000"].invoiceDigest)] == original
    assert docs[original].status == Status.PROCESSED and set(docs[original].held_markers) == set(DuplicateKind)
    flagged = {d for d, i in docs.items() if any(r.startswith("DUPLICATE_") for r in i.reviewReasons)}
    assert flagged == {f"copy-{n:03d}" for n in range(100)} - {original}
    for doc in flagged:
        item = docs[doc]
        expected = [duplicate_reason(k, original) for k in DuplicateKind]
        assert item.status == Status.REVIEW_REQUIRED and item.reviewReasons == expected, item
        assert item.held_markers == {} and item.contentDigest == content_digest(data)
        result = result_of(stack, "u1", doc)  # result.json tells the same as the item
        assert result.validation.status == Status.REVIEW_REQUIRED and result.validation.reasons == expected
    # 0 near-duplicates flagged; another user's copy is that user's own first.
    assert all(docs[f"other-{n}"].status == Status.PROCESSED for n in range(5))
    assert items(stack, "u2")["copy-000"].status == Status.PROCESSED
    # Markers: one per identity of each holder; never in the documents' reads.
    assert Counter(m.userId for m in stack.markers()) == {"u1": 2 + 2 * 5, "u2": 2}
    listed = list_documents(stack.settings, user_id="u1", status=None, limit=1000).items
    assert len(listed) == 105 and all(i.documentId in docs for i in listed)
    queue = list_documents(stack.settings, user_id=None, status=Status.REVIEW_REQUIRED, limit=1000).items
    assert {i.documentId for i in queue} == flagged
    assert drain(stack).processed == 0  # a rerun writes nothing


def test_a_reupload_moves_the_markers_and_a_deleted_upload_gives_them_up(stack) -> None:
    upload(stack, "u1", "d1", body())
    drain(stack)
    first = items(stack)["d1"]
    upload(stack, "u1", "d1", body(invoiceNumber="INV-8"))  # new bytes, a new invoice number
    drain(stack)
    moved = items(stack)["d1"]
    assert moved.contentDigest != first.contentDigest and moved.invoiceDigest != first.invoiceDigest
    assert {(m.kind, m.digest) for m in stack.markers()} == {
        (DuplicateKind.CONTENT, moved.contentDigest),
        (DuplicateKind.INVOICE, moved.invoiceDigest),
    }
    upload(stack, "u1", "d2", body())  # the first bytes again: their identity was given up
    drain(stack)
    assert items(stack)["d2"].status == Status.PROCESSED

    key = upload(stack, "u1", "d2", body(invoiceNumber="INV-9"))  # re-uploaded, then deleted unread
    stack.s3().delete_object(Bucket=stack.settings.store.raw_bucket, Key=key)
    drain(stack)
    assert items(stack)["d2"].status == Status.DELETED
    assert {m.documentId for m in stack.markers()} == {"d1"}
    upload(stack, "u1", "d3", body())  # the tombstone holds nothing: d3 is nobody's duplicate
    drain(stack)
    assert items(stack)["d3"].status == Status.PROCESSED


def test_a_marker_left_behind_is_taken_over_not_believed(stack) -> None:
    data = body()
    left = DuplicateMarker(
        userId="u1",
        kind=DuplicateKind.CONTENT,
        digest=content_digest(data),
        documentId="gone",
        createdAt=datetime(2026, 1, 1, tzinfo=UTC),
        updatedBy="ingest:old",
    )
    stack.dynamodb().put_item(TableName=stack.settings.store.table_name, Item=to_wire(left.to_item()))
    upload(stack, "u1", "d1", data)
    drain(stack)
    assert items(stack)["d1"].status == Status.PROCESSED
    assert marker_holders(stack)[(DuplicateKind.CONTENT, content_digest(data))] == "d1"


def test_a_reviewer_settles_a_duplicate_as_not_one_and_the_original_keeps_its_markers(stack) -> None:
    upload(stack, "u1", "a", body())
    drain(stack)
    upload(stack, "u1", "b", body())
    drain(stack)
    assert items(stack)["b"].reviewReasons == [duplicate_reason(k, "a") for k in DuplicateKind]
    desk = ReviewDesk.from_settings(stack.settings)
    desk.claim("u1", "b", "alice")
    desk.correct("u1", "b", "alice", ["date=2026-03-02"])  # not its identity: still a duplicate of a
    assert items(stack)["b"].reviewReasons == [duplicate_reason(k, "a") for k in DuplicateKind]
    desk.settle("u1", "b", "alice")
    settled = items(stack)["b"]
    assert settled.status == Status.PROCESSED and settled.held_markers == {}
    assert result_of(stack, "u1", "b").review.settled.acceptedReasons == [
        duplicate_reason(k, "a") for k in DuplicateKind
    ]
    assert set(marker_holders(stack).values()) == {"a"}


def test_a_correction_to_another_documents_invoice_flags_it_and_moves_its_marker(stack) -> None:
    upload(stack, "u1", "a", body())
    upload(stack, "u1", "b", body(invoiceNumber="INV-X", vendorName=None))  # in review: no vendor
    drain(stack)
    desk = ReviewDesk.from_settings(stack.settings)
    desk.claim("u1", "b", "alice")
    desk.correct("u1", "b", "alice", ["vendor=Acme GmbH"])  # its own identity now: it takes it
    b = items(stack)["b"]
    assert DuplicateKind.INVOICE in b.held_markers and b.reviewReasons == []
    desk.correct("u1", "b", "alice", ["number=inv-7"])  # the number of a's invoice, written alike
    b = items(stack)["b"]
    assert b.reviewReasons == [duplicate_reason(DuplicateKind.INVOICE, "a")]
    assert list(b.held_markers) == [DuplicateKind.CONTENT] and b.invoiceDigest == items(stack)["a"].invoiceDigest
    invoice_markers = [m for m in stack.markers() if m.kind is DuplicateKind.INVOICE]
    assert [m.documentId for m in invoice_markers] == ["a"]  # b's former identity was given up


def test_three_drains_at_once_over_copies_of_one_file_agree_on_one_holder(stack) -> None:
    data = body()
    for n in range(30):
        upload(stack, "u1", f"copy-{n:02d}", data)
    settings = stack.settings.changed(extract_workers=1)
    with ThreadPoolExecutor(3) as pool:
        runs = list(pool.map(lambda _: IngestRun(settings, DrainPlan(idle_seconds=2)).execute(), range(3)))
    assert sum(r.processed for r in runs) == 30 and sum(r.duplicateCount for r in runs) == 29
    holders = {m.documentId for m in stack.markers()}
    assert len(holders) == 1 and len(stack.markers()) == 2
    (holder,) = holders
    flagged = {d for d, i in items(stack).items() if i.reviewReasons}
    assert flagged == {f"copy-{n:02d}" for n in range(30)} - {holder}


def _during_one_run(stack, *steps) -> object:
    """One drain that goes on while `steps` run: each step waits for the previous uploads to
    be settled in the table before acting, so the run meets their holders it finished itself.
    """
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(IngestRun(stack.settings, DrainPlan(idle_seconds=5)).execute)
        for step in steps:
            step()
        return run.result(timeout=120)


def _settled(stack, doc: str) -> None:
    deadline = time.monotonic() + 60
    while items(stack).get(doc) is None or items(stack)[doc].status == Status.PROCESSING:
        assert time.monotonic() < deadline, f"{doc} not settled"
        time.sleep(0.1)


def test_a_duplicate_of_a_document_the_run_finished_is_written_once_and_cancels_nothing(stack) -> None:
    data = body()
    summary = _during_one_run(
        stack,
        lambda: upload(stack, "u1", "first", data),
        lambda: _settled(stack, "first"),
        lambda: upload(stack, "u1", "again", data),
    )
    assert summary.processed == 2 and summary.duplicateCount == 1, summary.statuses
    expected = [duplicate_reason(k, "first") for k in DuplicateKind]
    again = items(stack)["again"]
    assert again.status == Status.REVIEW_REQUIRED and again.reviewReasons == expected and again.held_markers == {}
    assert result_of(stack, "u1", "again").validation.reasons == expected
    # Known before its first write: one result.json per document, no finish lost a condition.
    assert summary.calls["s3.PutObject"]["calls"] == 2
    assert summary.calls["dynamodb.TransactWrite.finish"]["conditional_check_failures"] == 0
    assert set(marker_holders(stack).values()) == {"first"}


def test_a_holder_the_run_finished_and_its_owner_deleted_since_is_no_ones_original(stack) -> None:
    data = body()
    metrics = CallMetrics()
    actions = DocumentActions(
        DocumentTable(
            dynamodb_client(stack.settings), stack.settings.store.table_name, stack.settings.store.index_name, metrics
        ),
        Buckets(stack.s3(), metrics),
        stack.settings.store.raw_bucket,
        stack.settings.store.processed_bucket,
        stack.settings.store.retention,
    )
    summary = _during_one_run(
        stack,
        lambda: upload(stack, "u1", "first", data),
        lambda: _settled(stack, "first"),
        lambda: actions.delete("u1", "first", "user:u1"),
        lambda: upload(stack, "u1", "again", data),
    )
    assert summary.processed == 2 and summary.duplicateCount == 0, summary.statuses
    again = items(stack)["again"]
    assert again.status == Status.PROCESSED and again.reviewReasons == []
    assert set(again.held_markers) == set(DuplicateKind) and set(marker_holders(stack).values()) == {"again"}
