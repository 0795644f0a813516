"""Scenarios that drive each job through its paths on the live local stack, for the IAM test.

Each scenario seeds its own stage (the `stack` fixture), opens a `call_recording.recording()`
around the job runs only (seeding and checks use the test's own clients, which are not
recorded), and returns the calls the job's clients made. The scenarios assert the outcome they
exist to exercise, so a scenario that stopped reaching a path fails instead of recording less.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import polars as pl
import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.httpsession import URLLib3Session
from botocore.stub import Stubber

from jobs.contract import ResultDocument, Status, layout, queue_spec
from jobs.contract.duplicates import marker_key
from jobs.contract.erasure import ErasureMarker, ErasureState
from jobs.demo.corpus import generate, pdf
from jobs.demo.seed import upload
from jobs.documents import cli as documents_cli
from jobs.documents.url import result_url
from jobs.erasure import cli as erasure_cli
from jobs.errors import (
    DocumentNotFoundError,
    ReconcileQueryError,
    ReviewConflictError,
    ReviewRefusedError,
    S3ObjectMissingError,
)
from jobs.ingest import job as ingest_job
from jobs.ingest.cli import redrive_dead_letters
from jobs.ingest.plans import BackfillPlan, DrainPlan
from jobs.ingest.run import IngestRun
from jobs.local.standins import exports as export_standin
from jobs.local.standins import inventory as inventory_standin
from jobs.local.writers import export_line, write_export, write_inventory
from jobs.observability import CallMetrics
from jobs.reconcile.plans import AuditCheck, FilesPlan, LivePlan, NightlyPlan, Plan
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.run import ReconcileRun
from jobs.review.desk import ReviewDesk
from jobs.runtime.context import RunContext
from jobs.settings import JobSettings
from jobs.store import call_recording
from jobs.store.athena import AthenaQueries
from jobs.store.call_recording import Call
from jobs.store.clients import athena_client, botocore_config, dynamodb_client, s3_client, sqs_client, textract_client
from jobs.store.dynamo import DocumentTable
from jobs.store.dynamo_wire import to_wire
from jobs.store.polling import Polling
from jobs.store.redrive import BY_HAND, MOVE_TASK
from jobs.store.s3 import Buckets
from jobs.store.table_export import TableExports

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def ingest_calls(stack: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    """The backfill sweep: new documents (good and failing), a rerun that skips them all, a
    re-upload, a dry run, and scans through Textract (stubbed: there is no emulator); then the
    nightly drain of the arrival queue (see `_drain`).
    """
    s3, raw = stack.s3(), stack.settings.store.raw_bucket
    docs = list(generate(2, 8, bad_ratio=0.25, seed=21))
    upload(s3, raw, docs)
    s3.put_object(Bucket=raw, Key="raw/u1/nested/dir/a.xml", Body=b"x")  # outside the layout

    # One extraction worker: the calls do not depend on the pool's size, the start-up time does.
    quick = stack.settings.changed(extract_workers=1)

    def sweep(**options: Any) -> Any:
        context = RunContext.of(quick, ingest_job.JOB)  # publishes its metrics when flushed, as run_job does
        try:
            return IngestRun(quick, BackfillPlan(**options), context=context).execute()
        finally:
            context.flush()

    # A result.json that no finished item points at (a stale writer's, or one written before
    # writes were fenced): the claimant's first write is refused, it heads the object, reads its
    # item to learn that it still holds the claim, and writes over exactly that version.
    stray = docs[1]
    s3.put_object(
        Bucket=stack.settings.store.processed_bucket,
        Key=layout.result_key(stray.user_id, stray.document_id),
        Body=b"{}",
    )
    with call_recording.recording() as calls:
        first = sweep()
        assert first.processed == 8 and first.statuses.get("FAILED", 0) >= 1, first.statuses
        assert sweep().decisions.get("CLAIM", 0) == 0  # everything done: skipped
        # A processed document re-uploaded with other bytes gives its content marker up (a Delete).
        processed = {i.documentId for i in stack.items() if i.status == Status.PROCESSED}
        again = next(d for d in docs if d.document_id in processed)
        # Its result.json is gone when the re-upload is processed: the write fenced on the old
        # ETag meets a missing key, and the head that follows must see a 404, not a 403.
        s3.delete_object(
            Bucket=stack.settings.store.processed_bucket, Key=layout.result_key(again.user_id, again.document_id)
        )
        s3.put_object(
            Bucket=raw, Key=layout.raw_key(again.user_id, again.document_id, again.filename), Body=again.body + b" "
        )
        assert sweep().processed == 1  # the re-upload
        sweep(dry_run=True)
        _summary_response_lost(stack, quick)

        _scans_through_textract(stack, quick, corpus, monkeypatch)
        _drain(stack, quick)
        _redrive(stack, quick)
    assert {"HeadObject", "GetItem"} <= {c.operation for c in calls}  # the fenced write above
    drained = {c.operation for c in calls if c.service == "sqs"}
    assert drained == {
        "ReceiveMessage",
        "DeleteMessageBatch",
        "ChangeMessageVisibilityBatch",
        "GetQueueAttributes",
        "GetQueueUrl",
        "SendMessageBatch",
        "StartMessageMoveTask",
        "ListMessageMoveTasks",
    }
    return calls + _held_reupload(stack, quick, docs)


def _held_reupload(stack: Any, settings: Any, docs: list[Any]) -> list[Call]:
    """A held document's re-upload: its new result.json is written under the legal hold."""
    processed = {i.documentId for i in stack.items() if i.status == Status.PROCESSED and i.legalHoldAt is None}
    doc = next(d for d in docs if d.document_id in processed)
    _cli(documents_cli, "hold", "--user", doc.user_id, "--doc", doc.document_id, "--operator", "legal")
    raw = stack.settings.store.raw_bucket
    with call_recording.recording() as calls:
        stack.s3().put_object(
            Bucket=raw, Key=layout.raw_key(doc.user_id, doc.document_id, doc.filename), Body=doc.body + b"  "
        )
        assert IngestRun(settings, BackfillPlan()).execute().processed == 1
    assert any(c.operation == "PutObject" and c.params.get("ObjectLockLegalHoldStatus") == "ON" for c in calls)
    return calls


def _scans_through_textract(stack: Any, quick: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scans go to Textract: an image (AnalyzeExpense), then an image-only PDF (the async API),
    one run each so the stubbed answers come in a known order.
    """
    s3, raw = stack.s3(), stack.settings.store.raw_bucket
    monkeypatch.setenv("AWS_ENDPOINT_URL_TEXTRACT", "http://127.0.0.1:9")  # never reached: stubbed
    settings = quick.changed(ocr_engine="textract", textract_max_pages=100)  # the night's counter
    client = textract_client(settings)

    def sweep() -> Any:
        return IngestRun(settings, BackfillPlan(), textract=client).execute()

    response = json.loads((corpus / "textract" / "invoice-expense-response.json").read_text())
    with Stubber(client) as stub:
        s3.put_object(Bucket=raw, Key=layout.raw_key("u3", "scan1", "scan.png"), Body=PNG)
        stub.add_response("analyze_expense", response)
        assert sweep().processed == 1
        s3.put_object(Bucket=raw, Key=layout.raw_key("u3", "scan2", "scan.pdf"), Body=pdf(None))
        stub.add_response("start_expense_analysis", {"JobId": "job-1"})
        stub.add_response(
            "get_expense_analysis", {"JobStatus": "SUCCEEDED", "ExpenseDocuments": response["ExpenseDocuments"]}
        )
        assert sweep().processed == 1
        stub.assert_no_pending_responses()


def _redrive(stack: Any, settings: Any) -> None:
    """`ingest redrive` both ways: by hand on moto (receive, send, delete), and SQS's move
    task, stubbed (moto's server answers neither StartMessageMoveTask nor ListMessageMoveTasks).
    """
    test_client = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    spec = queue_spec(settings.stage)
    dead_letters = test_client.get_queue_url(QueueName=spec.dead_letter_name)["QueueUrl"]
    test_client.send_message(QueueUrl=dead_letters, MessageBody="{not json")
    moved = redrive_dead_letters(settings.changed(sqs_move_tasks=False))
    assert (moved.moved, moved.method) == (1, BY_HAND)

    client = sqs_client(settings)
    account, region = "123456789012", client.meta.region_name
    arn = f"arn:aws:sqs:{region}:{account}:{{}}".format
    policy = json.dumps({"deadLetterTargetArn": arn(spec.dead_letter_name), "maxReceiveCount": spec.max_receive_count})
    task = {"Status": "COMPLETED", "ApproximateNumberOfMessagesMoved": 1, "ApproximateNumberOfMessagesToMove": 1}
    with Stubber(client) as stub:
        stub.add_response("get_queue_attributes", {"Attributes": {"RedrivePolicy": policy}})
        stub.add_response("get_queue_url", {"QueueUrl": dead_letters})
        stub.add_response(
            "get_queue_attributes",
            {"Attributes": {"ApproximateNumberOfMessages": "1", "ApproximateNumberOfMessagesNotVisible": "0"}},
        )
        stub.add_response("get_queue_attributes", {"Attributes": {"QueueArn": arn(spec.dead_letter_name)}})
        stub.add_response("get_queue_attributes", {"Attributes": {"QueueArn": arn(spec.name)}})
        stub.add_response("start_message_move_task", {"TaskHandle": "h"})
        stub.add_response("list_message_move_tasks", {"Results": [task]})
        moved = redrive_dead_letters(settings.changed(sqs_move_tasks=True), sqs=client)
        stub.assert_no_pending_responses()
    assert (moved.moved, moved.method) == (1, MOVE_TASK)


def _summary_response_lost(stack: Any, settings: Any) -> None:
    """The run summary's write-once put is applied but its response lost: the resend is refused
    (412) and the job reads the summary back to see its own bytes.
    """
    s3 = call_recording.attach(boto3.client("s3", config=botocore_config(settings)))
    session, lost = URLLib3Session(), []

    def lose_once(request: Any, **_: Any) -> None:
        if not lost and f"/{layout.INGEST_RUNS_PREFIX}" in request.url:
            lost.append(request.url)
            session.send(request)
            raise ReadTimeoutError(endpoint_url=request.url)

    s3.meta.events.register("before-send.s3.PutObject", lose_once)
    summary = IngestRun(settings, BackfillPlan(), s3=s3).execute()
    assert lost and lost[0].endswith(layout.ingest_run_key(f"{summary.startedAt:%Y-%m-%d}", summary.runId))


def _drain(stack: Any, settings: Any) -> None:
    """The drain, on what S3 itself queued: messages for objects the sweeps already did (skipped
    and deleted), new uploads, an upload deleted before the drain reads it (a 404), one erased
    with its user (its claim is removed), a malformed message, and a run stopped at --max-docs
    that hands its unread messages back.
    """
    s3, raw = stack.s3(), stack.settings.store.raw_bucket
    upload(s3, raw, generate(2, 6, bad_ratio=0, seed=23))
    gone = layout.raw_key("u4", "gone", "invoice.xml")
    s3.put_object(Bucket=raw, Key=gone, Body=b"<Invoice/>")
    s3.delete_object(Bucket=raw, Key=gone)
    erased = layout.raw_key("u5", "erased", "invoice.xml")
    s3.put_object(Bucket=raw, Key=erased, Body=b"<Invoice/>")
    s3.delete_object(Bucket=raw, Key=erased)
    now = layout.utc_now()
    marker = ErasureMarker(userId="u5", runId="r1", state=ErasureState.DONE, startedAt=now, updatedBy="erasure:r1")
    stack.dynamodb().put_item(TableName=settings.store.table_name, Item=to_wire(marker.to_item()))
    boto3.client("sqs", endpoint_url=stack.endpoints.sqs).send_message(
        QueueUrl=settings.store.arrivals_queue_url, MessageBody="{not json"
    )

    def drain(**options: Any) -> Any:
        return IngestRun(settings, DrainPlan(idle_seconds=1, **options)).execute()

    first = drain(max_docs=2)
    # Two claims: processed, unless one was the erased upload (its claim removed, not counted).
    assert first.mode == "drain" and first.processed in (1, 2)
    rest = drain()
    # The six new uploads and the deleted one (settled as a DELETED tombstone); the erased one
    # leaves nothing (its claim removed); the rest skipped.
    assert first.processed + rest.processed == 7 and rest.statuses.get("DELETED") == 1, (rest.statuses, rest.messages)
    assert "erased" not in {i.documentId for i in stack.items()}


def _seed_for_reconcile(stack: Any) -> dict[str, Any]:
    """Ingested documents, then one discrepancy for each repair handler and a few it leaves."""
    s3, s = stack.s3(), stack.settings
    docs = list(generate(2, 8, bad_ratio=0, review_ratio=0, seed=22))
    upload(s3, s.store.raw_bucket, docs)
    IngestRun(s, BackfillPlan()).execute()
    items = {i.documentId: i for i in stack.items()}
    first, second, third, fourth, fifth = (items[d.document_id] for d in docs[:5])
    table = stack.dynamodb()

    def put(item: dict[str, Any]) -> None:
        table.put_item(TableName=s.store.table_name, Item=to_wire(item))

    # ORPHAN_RESULT: a result.json (and its raw object) with no item.
    body = s3.get_object(Bucket=s.store.processed_bucket, Key=layout.result_key(first.userId, first.documentId))[
        "Body"
    ].read()
    orphan = ResultDocument.from_json_bytes(body)
    orphan_raw = layout.raw_key("u9", "orphan", "invoice.xml")
    s3.put_object(
        Bucket=s.store.raw_bucket,
        Key=orphan_raw,
        Body=s3.get_object(Bucket=s.store.raw_bucket, Key=layout.parse_s3_uri(first.rawS3Uri)[1])["Body"].read(),
    )
    etag = s3.head_object(Bucket=s.store.raw_bucket, Key=orphan_raw)["ETag"]
    orphan = orphan.model_copy(
        update={
            "userId": "u9",
            "documentId": "orphan",
            "source": orphan.source.model_copy(update={"key": orphan_raw, "etag": etag}),
        }
    )
    s3.put_object(Bucket=s.store.processed_bucket, Key=layout.result_key("u9", "orphan"), Body=orphan.to_json_bytes())
    # MISSING_RESULT, STUCK_PROCESSING, INDEX_DRIFT, and an upload no run has seen.
    s3.delete_object(Bucket=s.store.processed_bucket, Key=layout.result_key(second.userId, second.documentId))
    put(
        third.evolve(
            status=Status.PROCESSING,
            leaseOwner="gone:1:run",
            leaseExpiresAt=layout.utc_now() - timedelta(days=1),
            version=third.version + 1,
            updatedBy="ingest:gone",
        ).to_item()
    )
    put({**fourth.to_item(), layout.GSI1_PK_ATTR: layout.status_pk(Status.FAILED)})
    s3.put_object(Bucket=s.store.raw_bucket, Key=layout.raw_key("u1", "unseen", "invoice.xml"), Body=b"<Invoice/>")
    # MISSING_RAW: a processed document's upload deleted; its tombstone gives its markers up.
    assert fifth.held_markers, "the document holds its duplicate markers"
    s3.delete_object(Bucket=s.store.raw_bucket, Key=layout.parse_s3_uri(fifth.rawS3Uri)[1])
    # A document's life: one held (its versions' holds are read), one deleted long ago whose
    # versions outlived their grace (NOT_HARD_DELETED).
    sixth, seventh = (items[d.document_id] for d in docs[5:7])
    assert documents_cli.main(["hold", "--user", sixth.userId, "--doc", sixth.documentId, "--operator", "x"]) == 0
    long_ago = layout.utc_now() - timedelta(days=400)
    gone = seventh.evolve(
        status=Status.DELETED,
        deletedAt=long_ago,
        deletedBy=f"user:{seventh.userId}",
        restoreStatus=seventh.status,
        hardDeleteAt=long_ago + timedelta(days=30),
        version=seventh.version + 1,
        updatedBy=f"user:{seventh.userId}",
    )
    # Its TTL has not run yet (AWS allows days): without the attribute, DynamoDB Local's own TTL
    # sweep cannot remove the item between the audit runs and the repair.
    put({k: v for k, v in gone.to_item().items() if k != layout.TTL_ATTR})
    for kind, digest in seventh.held_markers.items():  # the delete's transaction gave them up
        table.delete_item(TableName=s.store.table_name, Key=to_wire(marker_key(seventh.userId, kind, digest)))
    return {"items": items}


def _export_files(stack: Any, root: Path) -> tuple[str, tuple[str, ...]]:
    """The live table and buckets as a DynamoDB export and S3 Inventory reports on local disk."""
    s, s3 = stack.settings, stack.s3()
    lines = [
        export_line(item)
        for page in stack.dynamodb().get_paginator("scan").paginate(TableName=s.store.table_name)
        for item in page.get("Items", [])
    ]
    table_arn = f"arn:aws:dynamodb:local:000000000000:table/{s.store.table_name}"
    export = write_export(root / "exports", table_arn, layout.utc_now(), ["".join(lines).encode()])
    manifests = []
    for bucket in (s.store.raw_bucket, s.store.processed_bucket):
        listed = [
            o for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket) for o in page.get("Contents", [])
        ]
        frame = pl.DataFrame(
            {
                "bucket": [bucket] * len(listed),
                "key": [o["Key"] for o in listed],
                "size": [o["Size"] for o in listed],
                "lastModified": [o["LastModified"] for o in listed],
                "etag": [o["ETag"] for o in listed],
            },
            schema_overrides={"size": pl.Int64, "lastModified": pl.Datetime("ms", "UTC")},
        )
        manifests.append(str(write_inventory(root / "inventory", bucket, layout.utc_now(), [frame], "Parquet")))
    return str(export), tuple(manifests)


class _Nights:
    """The nightly chain on the local stack: the table's exports answered by the stand-in
    (DynamoDB Local has none), its clock a day further each night, and the night's S3 Inventory
    reports delivered by their stand-in, as AWS would (neither stand-in's own calls are recorded:
    they use clients of their own).
    """

    def __init__(self, stack: Any) -> None:
        self.settings = JobSettings.from_env()  # the stack's env: the table's ARN, the stand-in
        self.start, self.night = layout.utc_now(), 0

    def run(self, **options: Any) -> Any:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(export_standin, "clock", lambda: self.start + self.night * timedelta(days=1))
            inventory_standin.deliver(self.settings, export_standin.clock())
            outcome = ReconcileRun(self.settings, NightlyPlan(**options)).execute()
        self.night += 1
        return outcome


def reconcile_calls(stack: Any, tmp_path: Path) -> tuple[list[Call], list[Call]]:
    """Reconcile live (with its report and the history of earlier ones), --deep, from files, the
    nightly chain (anchored, then brought forward), and --repair live and nightly; returns (audit
    calls, repair calls): the two run under different roles.
    """
    _seed_for_reconcile(stack)
    # Each written report is announced on the stack's alert topic.
    topic = boto3.client("sns").create_topic(Name=f"{stack.settings.stage}-alerts")["TopicArn"]
    stack.settings = stack.settings.changed(reports_topic_arn=topic)
    export, manifests = _export_files(stack, tmp_path)
    nights = _Nights(stack)

    def reconcile(plan: type[Plan] = LivePlan, **options: Any) -> Any:
        return ReconcileRun(stack.settings, plan(grace=timedelta(0), **options)).execute()

    with call_recording.recording() as audit:
        first = reconcile()
        assert first.findings.height >= 5
        assert {"NOT_HARD_DELETED"} <= set(first.findings.get_column("code").to_list())
        reconcile()  # a second report reads the first one's summary (the history chart)
        deep = reconcile(deep=True, write_report=False)
        assert deep.findings.height >= first.findings.height
        from_files = reconcile(FilesPlan, dynamodb_export=export, s3_inventories=manifests)
        assert from_files.findings.height >= 5
        # --audit-log (the polars engine's nightly): the change log and a record Firehose refused.
        stack.audit_pipe.firehose.put_record_batch([b"{not a stream record"])
        stack.audit_flush()
        checked = reconcile(audit=AuditCheck(), write_report=False)
        assert {"AUDIT_UNDELIVERED"} <= set(checked.findings.get_column("code").to_list())
        # The schedule's command: the nightly chain with the change log's last days checked.
        scheduled = {"audit": AuditCheck(window=timedelta(days=3))}
        assert nights.run(**scheduled).summary.engineStats["night"]["anchor"]  # a full export
        assert nights.run(**scheduled).summary.engineStats["night"]["changes"]  # an incremental one
    with call_recording.recording() as repair:
        # The nightly repair checks the change log too; deep: the retention tags are read as well.
        repaired = reconcile(repair=True, audit=AuditCheck(), deep=True)
        applied = {r.code for r in repaired.summary.repairs if r.outcome == "applied"}
        assert applied == {
            Code.MISSING_RAW,
            Code.ORPHAN_RESULT,
            Code.MISSING_RESULT,
            Code.STUCK_PROCESSING,
            Code.INDEX_DRIFT,
            Code.UNPROCESSED_RAW,
            Code.DELETED_RAW_EXISTS,  # the owner's delete whose objects were never hidden: re-queued
        }, repaired.summary.repairs
        # The nightly repair: the chain brought forward again, its findings' repairs (the live
        # run settled them: each is skipped or applied against the version the state saw).
        assert nights.run(repair=True, audit=AuditCheck()).summary.engineStats["night"]["changes"]
    return audit, repair


def review_calls(stack: Any) -> list[Call]:
    """The review API's functions on documents in review: claims (one refused), corrections that
    take, move and give up an invoice identity, a correction over bytes a losing writer left on
    top of result.json (read by version), a race lost and its bytes taken back, settling,
    releasing, a document whose result.json is gone (a 404), and presigned result.json URLs.
    """
    s3, s = stack.s3(), stack.settings
    docs = {f"r{n}": {**_REVIEW_INVOICE, "invoiceNumber": f"R-{n}"} for n in range(4)}
    docs["twin"] = {**_REVIEW_INVOICE, "invoiceNumber": "T-1", "vendorName": "Twin GmbH"}
    for doc, fields in docs.items():
        s3.put_object(
            Bucket=s.store.raw_bucket, Key=layout.raw_key("u1", doc, "i.json"), Body=json.dumps(fields).encode()
        )
    IngestRun(s, BackfillPlan()).execute()
    _cli(documents_cli, "hold", "--user", "u1", "--doc", "r1", "--operator", "legal")
    with call_recording.recording() as calls:
        desk = ReviewDesk.from_settings(s)
        desk.claim("u1", "r0", "alice")
        with pytest.raises(ReviewRefusedError):
            ReviewDesk.from_settings(s).claim("u1", "r0", "bob")
        desk.correct("u1", "r0", "alice", ["vendor=Acme"])  # takes its invoice identity
        desk.correct("u1", "r0", "alice", ["vendor=Twin GmbH", "number=T-1"])  # the twin's: gives its own up
        _left_on_top(stack, "r0")
        desk.correct("u1", "r0", "alice", ["date=2026-03-02"])  # read by version, written over the loser's
        desk.settle("u1", "r0", "alice")
        desk.claim("u1", "r1", "alice")
        desk.correct("u1", "r1", "alice", ["vendor=Held GmbH"])  # held: written under the hold
        desk.release("u1", "r1", "alice")
        _lost_race(stack, desk)
        desk.claim("u1", "r3", "alice")
        s3.delete_object(Bucket=s.store.processed_bucket, Key=layout.result_key("u1", "r3"))
        with pytest.raises(S3ObjectMissingError):
            desk.settle("u1", "r3", "alice")
        assert result_url(s, "u1", "r0").url.startswith(stack.endpoints.s3)
        with pytest.raises(DocumentNotFoundError):
            result_url(s, "u2", "r0")
    assert {c.operation for c in calls if c.service == "s3"} >= {"ListObjectVersions", "GetObject", "PutObject"}
    assert any(c.params.get("ObjectLockLegalHoldStatus") == "ON" for c in calls)
    return calls


_REVIEW_INVOICE = {
    "invoiceDate": "2026-03-01",
    "currency": "EUR",
    "subtotal": "100.00",
    "tax": "19.00",
    "totalAmount": "119.00",
}


def _left_on_top(stack: Any, doc: str) -> None:
    """Bytes a writer that lost could not take back, on top of the version the item names."""
    key = layout.result_key("u1", doc)
    s3 = stack.s3()
    data = s3.get_object(Bucket=stack.settings.store.processed_bucket, Key=key)["Body"].read()
    s3.put_object(Bucket=stack.settings.store.processed_bucket, Key=key, Body=data + b" ")


def _lost_race(stack: Any, desk: Any) -> None:
    """A correction whose item write loses to a newer version: its result.json is taken back."""
    desk.claim("u1", "r2", "alice")
    s = stack.settings
    item = next(i for i in stack.items() if i.documentId == "r2")
    newer = item.evolve(version=item.version + 1, updatedBy="reviewer:alice")

    class ThenNewer(Buckets):  # the newer version lands between the correction's two writes
        def put_fenced(self, *args: Any, **kwargs: Any) -> str | None:
            etag = super().put_fenced(*args, **kwargs)
            stack.dynamodb().put_item(TableName=s.store.table_name, Item=to_wire(newer.to_item()))
            return etag

    metrics = CallMetrics()
    racing = ReviewDesk(
        s,
        DocumentTable(dynamodb_client(s), s.store.table_name, s.store.index_name, metrics),
        ThenNewer(s3_client(s), metrics),
    )
    with pytest.raises(ReviewConflictError):
        racing.correct("u1", "r2", "alice", ["vendor=Lost"])


# --- a document's life: the owner's actions, an operator's hold, an erasure ------------------------
def _seed_documents(stack: Any, users: int = 1, docs: int = 4) -> list[Any]:
    seeded = list(generate(users, docs, bad_ratio=0, review_ratio=0, seed=24))
    upload(stack.s3(), stack.settings.store.raw_bucket, seeded)
    IngestRun(stack.settings, BackfillPlan()).execute()
    return seeded


def _cli(module: Any, *args: str) -> None:
    assert module.main(list(args)) == 0, args


def documents_calls(stack: Any) -> list[Call]:
    """The owner's list, delete (markers over current objects), a rerun, and restore (markers removed)."""
    cli = documents_cli
    seeded = _seed_documents(stack)
    doc = seeded[0]
    user, ident = doc.user_id, doc.document_id
    with call_recording.recording() as calls:
        _cli(cli, "list", "--user", user)
        _cli(cli, "list", "--status", "PROCESSED")
        _cli(cli, "delete", "--user", user, "--doc", ident)
        _cli(cli, "delete", "--user", user, "--doc", ident)  # again: completes, changes nothing
        _cli(cli, "restore", "--user", user, "--doc", ident)
    (item,) = [i for i in stack.items() if i.documentId == ident]
    assert item.status == Status.PROCESSED and item.version == 4
    return calls + _restore_requeues(stack, seeded[1])


def _restore_requeues(stack: Any, doc: Any) -> list[Call]:
    """A re-upload that the owner's delete hid before the drain read it: the restore sends it to
    the arrival queue (the drain had let its message go as the document's, deleted).
    """
    s = stack.settings
    stack.s3().put_object(
        Bucket=s.store.raw_bucket, Key=layout.raw_key(doc.user_id, doc.document_id, doc.filename), Body=doc.body + b" "
    )
    _cli(documents_cli, "delete", "--user", doc.user_id, "--doc", doc.document_id)
    IngestRun(s, DrainPlan()).execute()  # the drain: the hidden re-upload is not processed
    with call_recording.recording() as calls:
        _cli(documents_cli, "restore", "--user", doc.user_id, "--doc", doc.document_id)
    assert [c.operation for c in calls if c.service == "sqs"] == ["SendMessageBatch"]  # sqs:SendMessage
    return calls


def legal_hold_calls(stack: Any) -> list[Call]:
    """An operator's hold on every version, and its release."""
    cli = documents_cli
    doc = _seed_documents(stack)[0]
    with call_recording.recording() as calls:
        _cli(cli, "hold", "--user", doc.user_id, "--doc", doc.document_id, "--operator", "legal")
        _cli(cli, "hold", "--user", doc.user_id, "--doc", doc.document_id, "--operator", "legal", "--release")
    assert {c.operation for c in calls} >= {"PutObjectLegalHold", "ListObjectVersions"}
    return calls


def erasure_calls(stack: Any) -> list[Call]:
    """A dry run, an erasure of a user with a deleted and a held document, and a rerun."""
    documents, cli = documents_cli, erasure_cli
    seeded = _seed_documents(stack, users=1, docs=4)
    user = seeded[0].user_id
    _cli(documents, "delete", "--user", user, "--doc", seeded[1].document_id)
    _cli(documents, "hold", "--user", user, "--doc", seeded[2].document_id, "--operator", "legal")
    # A hold that set S3's holds but lost its item write (the item says nothing of it).
    half = seeded[3]
    s3 = stack.s3()
    places = (
        (stack.settings.store.raw_bucket, layout.raw_document_prefix),
        (stack.settings.store.processed_bucket, layout.result_document_prefix),
    )
    for bucket, prefix in places:
        for version in s3.list_object_versions(Bucket=bucket, Prefix=prefix(user, half.document_id))["Versions"]:
            s3.put_object_legal_hold(
                Bucket=bucket, Key=version["Key"], VersionId=version["VersionId"], LegalHold={"Status": "ON"}
            )
    with call_recording.recording() as calls:
        _cli(cli, "--user", user, "--dry-run")
        _cli(cli, "--user", user)
        _cli(cli, "--user", user)  # nothing left
    assert sorted(i.documentId for i in stack.items()) == sorted([seeded[2].document_id, half.document_id])
    assert "GetObjectLegalHold" in {c.operation for c in calls}
    return calls


def athena_calls(settings: Any, table_arn: str) -> list[Call]:
    """The athena engine's AWS calls, through its adapters with botocore's Stubber: no emulator
    answers Athena or DynamoDB table exports (the engine itself runs against DuckDB playing
    Athena in tests/jobs/reconcile/test_athena.py). A query that succeeds and is read, one
    stopped at its timeout, and the run's table export started and awaited, with this stage's
    names, so the roles are held to these calls like to the recorded ones.
    """
    now = layout.utc_now()
    no_wait = Polling(every_s=1, timeout_s=1, sleep=lambda _: None)
    export_arn = f"{table_arn}/export/01-stubbed"
    with call_recording.recording() as calls:
        client = athena_client(settings)
        queries = AthenaQueries(
            client,
            settings.reconcile.athena_workgroup,
            settings.reconcile.glue_database,
            CallMetrics(),
            polling=no_wait,
        )
        with Stubber(client) as stub:
            for query_id, states in (("q1", ["SUCCEEDED"]), ("q2", ["RUNNING", "RUNNING"])):
                stub.add_response("start_query_execution", {"QueryExecutionId": query_id})
                for state in states:
                    stub.add_response("get_query_execution", {"QueryExecution": {"Status": {"State": state}}})
            stub.add_response("stop_query_execution", {})
            stub.add_response("get_query_results", {"ResultSet": {"Rows": [{"Data": []}]}})
            queries.run("SELECT 1", "t" * 40, "counts")
            with pytest.raises(ReconcileQueryError, match="stopped"):
                queries.run("SELECT 2", "u" * 40, "findings")
            queries.rows("q1")
            stub.assert_no_pending_responses()
        dynamodb = dynamodb_client(settings)
        exports = TableExports(dynamodb, CallMetrics(), polling=no_wait)
        done = {
            "ExportArn": export_arn,
            "ExportStatus": "COMPLETED",
            "S3Bucket": settings.reconcile.export_bucket,
            "S3Prefix": settings.reconcile.export_prefix,
            "ExportTime": now,
            "ExportManifest": f"{settings.reconcile.export_prefix}AWSDynamoDB/01-stubbed/manifest-summary.json",
        }
        with Stubber(dynamodb) as stub:
            stub.add_response("export_table_to_point_in_time", {"ExportDescription": {"ExportArn": export_arn}})
            stub.add_response("describe_export", {"ExportDescription": done})
            exports.start(table_arn, now, settings.reconcile.export_bucket, settings.reconcile.export_prefix)
            exports.wait(export_arn)
            stub.assert_no_pending_responses()
    return calls
