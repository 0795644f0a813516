"""The ingest job against the live local stack (DynamoDB Local + moto S3 over HTTP)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from jobs.contract import DocumentItem, ResultDocument, Status, layout
from jobs.contract.objects import ObjectInfo
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.ingest.plan import decide
from jobs.ingest.plans import BackfillPlan, Shard
from jobs.ingest.run import IngestRun
from jobs.ingest.summary import RunSummary
from jobs.observability import CallMetrics
from jobs.store.dynamo import DocumentTable

WRITES = ("s3.PutObject", "dynamodb.TransactWrite", "dynamodb.PutItem")


def ingest(stack, **options: object) -> RunSummary:
    return IngestRun(stack.settings, BackfillPlan(**options)).execute()  # type: ignore[arg-type]


def writes(summary: RunSummary) -> int:
    """Write requests of a run, not counting its own summary report."""
    return sum(v["calls"] for k, v in summary.calls.items() if k.startswith(WRITES) and k != "s3.PutObject.once")


def put_raw(stack, user: str, doc: str, name: str, body: bytes) -> str:
    key = layout.raw_key(user, doc, name)
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=body)
    return key


def result_of(stack, user: str, doc: str) -> ResultDocument:
    body = (
        stack.s3()
        .get_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key(user, doc))["Body"]
        .read()
    )
    return ResultDocument.from_json_bytes(body)


def _upload_corpus(stack, corpus: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Every e-invoice and Textract file of the corpus uploaded: what each (user, doc) should become."""
    expected = json.loads((corpus / "einvoice" / "expected.json").read_text())["invoices"]
    uploads = {}
    for form in ("facturx-pdf", "cii", "ubl"):
        for path in sorted((corpus / "einvoice" / form).iterdir()):
            name = path.name.split(".")[0]
            # several invoices share a number: each upload belongs to its own user
            user, doc = f"{form}-{name}", f"doc-{name}"
            put_raw(stack, user, doc, path.name, path.read_bytes())
            uploads[(user, doc)] = expected[name]
    textract_expected = json.loads((corpus / "textract" / "expected.json").read_text())
    for name, want in textract_expected.items():
        if name.startswith("_"):
            continue
        user, doc = "textract", name.removesuffix(".json")
        put_raw(stack, user, doc, name, (corpus / "textract" / name).read_bytes())
        uploads[(user, doc)] = want
    return uploads


def _assert_item(item: DocumentItem, want: dict[str, Any]) -> None:
    ident = (item.userId, item.documentId)
    assert item.status == Status(want["status"]), ident
    for field in ("invoiceNumber", "currency", "vendorName"):
        if field in want:
            assert getattr(item, field) == want[field], (ident, field)
    if "invoiceDate" in want:
        assert item.invoiceDate is not None and item.invoiceDate.isoformat() == want["invoiceDate"], ident
    if "totalAmount" in want:
        assert item.totalAmount == Decimal(want["totalAmount"]), ident
    assert item.leaseOwner is None and item.attempts == 1 and item.version == 2
    assert item.createdAt <= item.updatedAt


def test_every_corpus_file_lands_as_item_and_result_with_expected_values(stack, corpus: Path) -> None:
    uploads = _upload_corpus(stack, corpus)
    summary = ingest(stack)
    assert summary.outcome == "completed"
    assert summary.processed == len(uploads) == 28
    items = {(i.userId, i.documentId): i for i in stack.items()}
    assert set(items) == set(uploads)
    for ident, want in uploads.items():
        item = items[ident]
        _assert_item(item, want)
        result = result_of(stack, *ident)
        assert item.resultS3Uri == layout.s3_uri(stack.settings.store.processed_bucket, layout.result_key(*ident))
        assert result.source.etag == item.rawEtag and result.validation.status == item.status
        if "lineItems" in want:
            assert result.invoice is not None and len(result.invoice.lineItems) == want["lineItems"], ident


def test_second_run_writes_nothing_and_a_changed_raw_object_is_reprocessed(stack) -> None:
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(3, 20, bad_ratio=0.2, seed=3))
    first = ingest(stack)
    assert first.processed == 20 and writes(first) > 0
    assert {i.updatedBy for i in stack.items()} == {f"ingest:{first.runId}"}  # every write names its run
    second = ingest(stack)
    assert second.processed == 0 and writes(second) == 0
    assert second.decisions.get("CLAIM", 0) == 0
    assert second.decisions["SKIP_DONE"] + second.decisions.get("DEAD_LETTER", 0) == 20

    item = next(i for i in stack.items() if i.status == Status.PROCESSED)
    name = layout.parse_s3_uri(item.rawS3Uri)[1].rsplit("/", 1)[1]
    body = next(d.body for d in generate(1, 1, bad_ratio=0, review_ratio=0, seed=99))
    put_raw(stack, item.userId, item.documentId, name, body)
    third = ingest(stack)
    assert third.processed == 1
    after = next(i for i in stack.items() if i.documentId == item.documentId)
    assert after.rawEtag != item.rawEtag and after.attempts == 1 and after.version == item.version + 2
    assert after.updatedBy == f"ingest:{third.runId}"
    assert result_of(stack, item.userId, item.documentId).source.etag == after.rawEtag


def test_malformed_documents_fail_with_reasons_while_the_batch_succeeds(stack) -> None:
    good = next(d for d in generate(1, 10, bad_ratio=0, review_ratio=0, seed=5) if d.kind == "ubl")
    put_raw(stack, "u1", "good", good.filename, good.body)
    put_raw(stack, "u1", "truncated", "a.xml", good.body[:200])
    put_raw(
        stack, "u1", "xxe", "a.xml", b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><Invoice>&e;</Invoice>'
    )
    put_raw(stack, "u1", "empty", "a.pdf", b"")
    put_raw(stack, "u1", "zip", "a.xml", b"PK\x03\x04" + bytes(100))
    bad_key = "raw/u1/nested/dir/a.xml"
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=bad_key, Body=b"x")

    summary = ingest(stack)
    assert summary.outcome == "completed"
    items = {i.documentId: i for i in stack.items()}
    assert items["good"].status == Status.PROCESSED
    codes = {doc: items[doc].failureCode for doc in ("truncated", "xxe", "empty", "zip")}
    assert codes == {"truncated": "MALFORMED", "xxe": "UNSAFE_XML", "empty": "EMPTY", "zip": "UNSUPPORTED_FORMAT"}
    assert all(items[doc].status == Status.FAILED and items[doc].failureMessage for doc in codes)
    assert {f.key.split("/")[2] for f in summary.failures} == set(codes)
    assert summary.invalidKeyCount == 1 and summary.invalidKeys[0].key == bad_key
    assert "INVALID_KEY" in summary.invalidKeys[0].reason
    assert stack.keys(stack.settings.store.raw_bucket, bad_key) == [bad_key]  # left untouched


def test_two_concurrent_runs_process_each_document_once(stack) -> None:
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(4, 60, bad_ratio=0, seed=21))
    results: list[RunSummary] = []
    threads = [threading.Thread(target=lambda: results.append(ingest(stack))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r.processed for r in results) == 60
    claims = Counter(c.sort_key for c in stack.stream_changes() if c.new_status == "PROCESSING")
    assert len(claims) == 60 and set(claims.values()) == {1}
    assert all(i.version == 2 and i.status != Status.PROCESSING for i in stack.items())


def test_shards_together_cover_every_document_exactly_once(stack) -> None:
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(5, 45, bad_ratio=0, seed=8))
    per_shard = [ingest(stack, shard=Shard(index=i, count=3)).processed for i in range(3)]
    assert sum(per_shard) == 45 and all(n > 0 for n in per_shard)
    assert len(stack.items()) == 45
    assert ingest(stack).processed == 0


def test_stream_carries_every_status_transition(stack) -> None:
    doc = next(d for d in generate(1, 10, bad_ratio=0, review_ratio=0, seed=4) if d.kind == "cii")
    put_raw(stack, "u1", "d1", doc.filename, doc.body)
    ingest(stack)
    put_raw(stack, "u1", "d1", doc.filename, doc.body + b"\n")  # re-upload: new ETag
    ingest(stack)
    transitions = [(c.event, c.old_status, c.new_status) for c in stack.stream_changes()]
    assert transitions == [
        ("INSERT", None, "PROCESSING"),
        ("MODIFY", "PROCESSING", "PROCESSED"),
        ("MODIFY", "PROCESSED", "PROCESSING"),
        ("MODIFY", "PROCESSING", "PROCESSED"),
    ]
    item = stack.items()[0]
    assert item.to_item()["GSI1PK"] == layout.status_pk("PROCESSED")


def test_an_expired_lease_is_taken_over(stack) -> None:
    doc = next(d for d in generate(1, 10, bad_ratio=0, review_ratio=0, seed=4) if d.kind == "ubl")
    put_raw(stack, "u1", "d1", doc.filename, doc.body)
    raw = layout.RawKey("u1", "d1", doc.filename)
    head = stack.s3().head_object(Bucket=stack.settings.store.raw_bucket, Key=raw.key)
    obj = ObjectInfo(
        stack.settings.store.raw_bucket, raw.key, head["ETag"], head["ContentLength"], head["LastModified"]
    )
    # a worker that claimed the document an hour ago and died
    claim = decide(
        raw,
        obj,
        None,
        now=layout.utc_now() - timedelta(hours=1),
        owner="dead-worker",
        actor="ingest:dead-worker",
        lease=timedelta(minutes=15),
        max_attempts=3,
    ).claim
    table = DocumentTable(
        stack.dynamodb(), stack.settings.store.table_name, stack.settings.store.index_name, CallMetrics()
    )
    assert claim is not None and table.put_if_version(claim, None)
    summary = ingest(stack)
    assert summary.processed == 1
    item = stack.items()[0]
    assert item.status == Status.PROCESSED and item.attempts == 2 and item.leaseOwner is None


def test_dry_run_and_run_summary_report(stack) -> None:
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(2, 6, bad_ratio=0, seed=2))
    dry = ingest(stack, dry_run=True)
    assert dry.decisions == {"CLAIM": 6} and writes(dry) == 0 and stack.items() == []
    assert stack.keys(stack.settings.store.reports_bucket) == []
    real = ingest(stack, max_docs=4)
    assert real.processed == 4
    reports = stack.keys(stack.settings.store.reports_bucket, layout.INGEST_RUNS_PREFIX)
    assert reports == [layout.ingest_run_key(f"{real.startedAt:%Y-%m-%d}", real.runId)]
    stored = json.loads(
        stack.s3().get_object(Bucket=stack.settings.store.reports_bucket, Key=reports[0])["Body"].read()
    )
    assert stored["processed"] == 4 and stored["outcome"] == "completed"


def test_cli_exits_non_zero_when_the_infrastructure_is_unreachable(stack) -> None:
    env = {**os.environ, "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:9", "DOCUFLOW_RETRY_ATTEMPTS": "2"}
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(1, 2, bad_ratio=0, seed=2))
    done = subprocess.run(
        [sys.executable, "-m", "jobs", "ingest", "backfill"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3, done.stderr[-1000:]
    assert "ingest aborted" in done.stderr
    ok = subprocess.run(
        [sys.executable, "-m", "jobs", "ingest", "backfill"], capture_output=True, text=True, timeout=120
    )
    assert ok.returncode == 0, ok.stderr[-1000:]
    assert json.loads(ok.stdout)["processed"] == 2
