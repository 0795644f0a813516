"""Data integrity under races, poison values and odd uploads (issue 13, the ingest's cases).

Each test reproduces one way an independent review broke the ingest, against the live local
stack: a stale writer, two files under one documentId, the same bytes under a new name, a raw
object deleted under its claim, a value DynamoDB cannot store, an attribute outside the contract.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta

import pytest

from jobs.contract import DocumentItem, ExtractionOutcome, ResultDocument, Status, layout
from jobs.contract.objects import ObjectInfo
from jobs.documents.queries import list_documents
from jobs.extract import ExtractionSettings, extract_document
from jobs.ingest import run as ingest_run
from jobs.ingest.claims import Claims
from jobs.ingest.plan import Action, decide
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.process import DocumentProcessor, DocumentResult
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.store import s3 as s3_adapter
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from jobs.store.table_writes import GroupOutcome, WriteGroup

INVOICE = {
    "invoiceNumber": "N-1",
    "vendorName": "Acme GmbH",
    "invoiceDate": "2026-03-01",
    "currency": "EUR",
    "totalAmount": "119.00",
    "subtotal": "100.00",
    "tax": "19.00",
}


def invoice(number: str, total: str = "119.00") -> bytes:
    return json.dumps({**INVOICE, "invoiceNumber": number, "totalAmount": total}).encode()


def put_raw(stack, user: str, doc: str, name: str, body: bytes) -> ObjectInfo:
    key = layout.raw_key(user, doc, name)
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=body)
    head = stack.s3().head_object(Bucket=stack.settings.store.raw_bucket, Key=key)
    return ObjectInfo(stack.settings.store.raw_bucket, key, head["ETag"], head["ContentLength"], head["LastModified"])


def backfill(stack) -> object:
    return IngestRun(stack.settings, BackfillPlan()).execute()


def item_of(stack, user: str, doc: str) -> DocumentItem:
    return next(i for i in stack.items() if (i.userId, i.documentId) == (user, doc))


def result_of(stack, user: str, doc: str) -> tuple[ResultDocument, str]:
    response = stack.s3().get_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key(user, doc))
    return ResultDocument.from_json_bytes(response["Body"].read()), response["ETag"]


class Worker:
    """One ingest worker's claim and processing, with its extraction held until `resume()`:
    what a run paused by SIGSTOP (or a long GC pause) looks like to everybody else.
    """

    def __init__(self, stack, owner: str, lease: timedelta) -> None:
        metrics = CallMetrics()
        self.table = DocumentTable(
            stack.dynamodb(), stack.settings.store.table_name, stack.settings.store.index_name, metrics
        )
        self.buckets = Buckets(stack.s3(), metrics)
        self.owner, self.lease, self.stack = owner, lease, stack
        self.gate = threading.Event()
        self._pool = ThreadPoolExecutor(1)
        self.processor = DocumentProcessor(
            self.buckets,
            self.table,
            stack.settings.store.processed_bucket,
            self._extract,
            self._finish,
            10_000_000,
            30,
            stack.settings.store.retention,
        )

    def _extract(self, data: bytes, name: str) -> Future[ExtractionOutcome]:
        def held() -> ExtractionOutcome:
            self.gate.wait(30)
            return extract_document(data, name, ExtractionSettings())

        return self._pool.submit(held)

    def _finish(self, group: WriteGroup) -> Future[GroupOutcome]:
        done: Future[GroupOutcome] = Future()
        done.set_result(self.table.write_all([group], "finish")[0])
        return done

    def claim(self, obj: ObjectInfo):
        raw = layout.parse_raw_key(obj.key)
        existing = self.table.get(raw.user_id, raw.document_id)
        decision = decide(
            raw,
            obj,
            existing,
            now=layout.utc_now(),
            owner=self.owner,
            actor="ingest:stale-writer",
            lease=self.lease,
            max_attempts=3,
        )
        assert decision.action == Action.CLAIM, decision.action
        assert Claims(self.table).claim([(decision.claim, decision.expected_version)]) == [True]
        return raw, decision

    def start(self, obj: ObjectInfo) -> Future[DocumentResult]:
        raw, decision = self.claim(obj)
        started: Future[DocumentResult] = Future()

        def go() -> None:
            started.set_result(self.processor.run(raw, obj, decision).result(30))

        threading.Thread(target=go, daemon=True).start()
        return started


@pytest.mark.parametrize("takeover", ["lease expired while paused", "re-upload while the claim was live"])
def test_a_stale_writer_never_replaces_the_newer_result(stack, takeover: str) -> None:
    first = put_raw(stack, "alice", "doc-1", "a.json", invoice("OLD-1"))
    stale = Worker(stack, "stale", timedelta(seconds=1))
    paused = stale.start(first)  # claimed, bytes read, extraction held
    time.sleep(1.2)
    current = first if takeover.startswith("lease") else put_raw(stack, "alice", "doc-1", "a.json", invoice("NEW-2"))
    fresh = Worker(stack, "fresh", timedelta(minutes=5))
    fresh.gate.set()
    done = fresh.start(current).result(30)
    assert done.status == Status.PROCESSED

    stale.gate.set()  # the paused run wakes up and tries to write its result and finish
    assert paused.result(30).status is None  # it learns it lost the claim and writes nothing

    item = item_of(stack, "alice", "doc-1")
    result, etag = result_of(stack, "alice", "doc-1")
    assert item.status == Status.PROCESSED and item.leaseOwner is None
    assert item.resultEtag == etag  # the item points at exactly the result.json that is current
    assert result.source.etag == item.rawEtag == current.etag
    versions = stack.s3().list_object_versions(
        Bucket=stack.settings.store.processed_bucket, Prefix=layout.result_key("alice", "doc-1")
    )["Versions"]
    assert len(versions) == 1  # the loser's bytes never became a version at all


def test_the_newest_of_two_files_under_one_document_wins_across_listing_pages(stack, monkeypatch) -> None:
    monkeypatch.setattr(ingest_run, "FIRST_PAGE_SIZE", 1)
    monkeypatch.setattr(s3_adapter, "LIST_PAGE_SIZE", 1)
    put_raw(stack, "bob", "doc-9", "b.json", invoice("OLDER"))
    time.sleep(1.1)  # S3 times have second resolution: make the upload order unambiguous
    newer = put_raw(stack, "bob", "doc-9", "a.json", invoice("NEWER"))  # listed first, uploaded last

    summaries = [backfill(stack) for _ in range(3)]

    item = item_of(stack, "bob", "doc-9")
    assert item.rawS3Uri == newer.uri and item.invoiceNumber == "NEWER"
    assert item.version == 2  # claimed and finished once; later runs write nothing
    assert [s.decisions.get("SKIP_SUPERSEDED", 0) for s in summaries] == [1, 1, 1]
    assert all(s.processed == (1 if n == 0 else 0) for n, s in enumerate(summaries))
    assert all(s.superseded[0].key.endswith("b.json") for s in summaries)


def test_the_same_bytes_under_a_new_filename_are_a_new_upload(stack) -> None:
    body = invoice("SAME-1")
    old = put_raw(stack, "carol", "doc-3", "invoice.json", body)
    backfill(stack)
    stack.s3().delete_object(Bucket=stack.settings.store.raw_bucket, Key=old.key)
    time.sleep(1.1)
    renamed = put_raw(stack, "carol", "doc-3", "invoice (1).json", body)
    assert renamed.etag == old.etag

    again = backfill(stack)

    assert again.processed == 1
    item = item_of(stack, "carol", "doc-3")
    assert item.rawS3Uri == renamed.uri and item.status == Status.PROCESSED
    assert result_of(stack, "carol", "doc-3")[0].source.key == renamed.key
    assert backfill(stack).processed == 0  # and it stays settled


def test_a_raw_object_deleted_under_its_claim_ends_deleted_and_stays_settled(stack) -> None:
    obj = put_raw(stack, "dave", "doc-4", "x.json", invoice("GONE"))
    worker = Worker(stack, "w", timedelta(minutes=5))
    raw, decision = worker.claim(obj)
    stack.s3().delete_object(Bucket=stack.settings.store.raw_bucket, Key=obj.key)

    result = worker.processor.run(raw, obj, decision).result(30)

    assert result.status == Status.DELETED and result.stale
    item = item_of(stack, "dave", "doc-4")
    assert item.status == Status.DELETED and item.leaseOwner is None
    summary = backfill(stack)
    assert summary.processed == 0 and item_of(stack, "dave", "doc-4").version == item.version
    put_raw(stack, "dave", "doc-4", "x.json", invoice("BACK"))  # uploaded again: a document again
    assert backfill(stack).processed == 1 and item_of(stack, "dave", "doc-4").status == Status.PROCESSED


@pytest.mark.parametrize("total", ["1E+200", "1" * 39, "1E+400"])
def test_a_total_dynamodb_cannot_store_fails_that_document_only(stack, total: str) -> None:
    for n in range(30):  # more than one transaction of finishes: neighbours share the poison's batch
        put_raw(stack, "erin", f"doc-{n:02d}", "i.json", invoice(f"N-{n}", total if n == 13 else "119.00"))

    summary = backfill(stack)

    assert summary.outcome == "completed" and summary.processed == 30
    items = {i.documentId: i for i in stack.items()}
    poison = items.pop("doc-13")
    assert poison.status == Status.FAILED and poison.failureCode == "MALFORMED"
    assert "totalAmount" in (poison.failureMessage or "")
    assert {i.status for i in items.values()} == {Status.PROCESSED}
    assert backfill(stack).processed == 0  # a dead letter for that ETag, not a retry loop


def test_an_attribute_outside_the_contract_is_kept_and_never_fatal(stack) -> None:
    obj = put_raw(stack, "frank", "doc-5", "i.json", invoice("KEEP"))
    backfill(stack)
    key = item_of(stack, "frank", "doc-5").key()
    stack.dynamodb().update_item(
        TableName=stack.settings.store.table_name,
        Key={k: {"S": v} for k, v in key.items()},
        UpdateExpression="SET reviewedBy = :who",
        ExpressionAttributeValues={":who": {"S": "alice@example.com"}},
    )
    assert backfill(stack).outcome == "completed"
    page = list_documents(stack.settings, user_id="frank", status=None)
    assert [i.documentId for i in page.items] == ["doc-5"]

    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=obj.key, Body=invoice("KEEP-2"))  # re-upload
    assert backfill(stack).processed == 1
    raw = stack.dynamodb().get_item(
        TableName=stack.settings.store.table_name, Key={k: {"S": v} for k, v in key.items()}
    )
    assert raw["Item"]["reviewedBy"] == {"S": "alice@example.com"}
    assert raw["Item"]["invoiceNumber"] == {"S": "KEEP-2"}
