"""The nightly drain of the arrival queue against the live local stack.

moto's server delivers the raw bucket's ObjectCreated notifications to its SQS queue exactly as
S3 does on AWS (the local bootstrap configures both from the contract's QueueSpec), so uploads
below are ordinary PutObject calls and the drain reads what S3 itself sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import boto3

from jobs.contract import ObjectInfo, Status, layout
from jobs.contract.events import requeue_body
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.ingest.run import IngestOptions, IngestRun
from jobs.ingest.summary import RunSummary

REPO_ROOT = str(Path(__file__).resolve().parents[3])


def drain(stack, **options: object) -> RunSummary:
    return IngestRun(stack.settings, IngestOptions(idle_seconds=1, **options)).execute()  # type: ignore[arg-type]


def sqs(stack):
    return boto3.client("sqs", endpoint_url=stack.endpoints.sqs)


def queue_counts(stack) -> tuple[int, int]:
    attributes = sqs(stack).get_queue_attributes(
        QueueUrl=stack.settings.arrivals_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])


def put_raw(stack, user: str, doc: str, name: str, body: bytes) -> str:
    key = layout.raw_key(user, doc, name)
    stack.s3().put_object(Bucket=stack.settings.raw_bucket, Key=key, Body=body)
    return key


def writes(summary: RunSummary) -> int:
    return sum(
        v["calls"]
        for k, v in summary.calls.items()
        if k.startswith(("s3.PutObject", "dynamodb.TransactWrite")) and k != "s3.PutObject.once"
    )


def test_uploads_become_messages_and_a_drain_processes_exactly_them(stack) -> None:
    docs = list(generate(3, 12, bad_ratio=0.1, seed=7))
    upload(stack.s3(), stack.settings.raw_bucket, docs)
    stack.s3().put_object(
        Bucket=stack.settings.raw_bucket, Key="elsewhere/not-raw.txt", Body=b"x"
    )  # outside the filter
    assert queue_counts(stack)[0] == len(docs) + 1  # one per upload, plus the bootstrap's s3:TestEvent

    summary = drain(stack)

    assert summary.mode == "drain" and summary.outcome == "completed"
    assert summary.processed == len(docs)
    assert summary.messages["received"] == len(docs) + 1 and summary.messages["done"] == len(docs) + 1
    assert summary.notices == {"test-event": 1}
    assert "s3.ListObjectsV2" not in summary.calls  # the drain never lists raw/
    assert queue_counts(stack) == (0, 0)
    assert summary.queueWaiting == 0 and summary.deadLetterQueue == 0
    items = {(i.userId, i.documentId): i for i in stack.items()}
    assert len(items) == len(docs)
    assert all(i.status in (Status.PROCESSED, Status.REVIEW_REQUIRED, Status.FAILED) for i in items.values())
    assert all(i.resultEtag for i in items.values())


def test_a_duplicate_message_writes_nothing_and_a_reupload_is_processed_again(stack) -> None:
    docs = list(generate(1, 3, bad_ratio=0, seed=3))
    upload(stack.s3(), stack.settings.raw_bucket, docs)
    assert drain(stack).processed == 3
    key = layout.raw_key(docs[0].user_id, docs[0].document_id, docs[0].filename)
    head = stack.s3().head_object(Bucket=stack.settings.raw_bucket, Key=key)
    again = ObjectInfo(stack.settings.raw_bucket, key, head["ETag"], head["ContentLength"], head["LastModified"])
    sqs(stack).send_message(QueueUrl=stack.settings.arrivals_queue_url, MessageBody=requeue_body(again))

    duplicate = drain(stack)
    assert duplicate.processed == 0 and writes(duplicate) == 0
    assert duplicate.decisions == {"SKIP_DONE": 1} and queue_counts(stack) == (0, 0)

    stack.s3().put_object(Bucket=stack.settings.raw_bucket, Key=key, Body=docs[1].body)  # new bytes, new ETag
    reupload = drain(stack)
    assert reupload.processed == 1 and reupload.decisions == {"CLAIM": 1}
    user, doc = layout.parse_raw_key(key).user_id, layout.parse_raw_key(key).document_id
    item = next(i for i in stack.items() if (i.userId, i.documentId) == (user, doc))
    assert item.rawEtag != head["ETag"] and item.version == 4  # claim, finish, claim, finish


def test_max_docs_leaves_the_rest_queued_for_the_next_run(stack) -> None:
    docs = list(generate(2, 20, bad_ratio=0, seed=5))
    upload(stack.s3(), stack.settings.raw_bucket, docs)
    first = drain(stack, max_docs=7)
    assert first.processed == 7
    time.sleep(0.3)  # released messages are visible again at once; give moto a beat
    waiting, _ = queue_counts(stack)
    assert waiting == len(docs) - 7
    second = drain(stack)
    assert second.processed == len(docs) - 7
    assert len(stack.items()) == len(docs) and queue_counts(stack) == (0, 0)


def test_events_that_are_not_work_are_recorded_and_never_crash_the_run(stack) -> None:
    client, url = sqs(stack), stack.settings.arrivals_queue_url
    put_raw(stack, "alice", "doc-1", "a.xml", b"<Invoice/>")
    stack.s3().put_object(Bucket=stack.settings.raw_bucket, Key="raw/alice/missing-filename", Body=b"x")
    gone = put_raw(stack, "alice", "doc-2", "b.xml", b"<Invoice/>")
    stack.s3().delete_object(Bucket=stack.settings.raw_bucket, Key=gone)  # an event for a deleted object
    client.send_message(QueueUrl=url, MessageBody="not json at all")
    client.send_message(
        QueueUrl=url,
        MessageBody=json.dumps({"Records": [{"eventName": "ObjectRemoved:Delete", "eventSource": "aws:s3"}]}),
    )
    client.send_message(QueueUrl=url, MessageBody=json.dumps({"Records": [{"eventName": "ObjectCreated:Put"}]}))

    summary = drain(stack)

    assert summary.outcome == "completed"
    assert summary.invalidKeyCount == 1 and "missing-filename" in summary.invalidKeys[0].key
    assert summary.notices == {"other-event": 1, "test-event": 1}
    assert summary.messages["malformed"] == 2 and len(summary.malformedMessages) == 2
    items = {i.documentId: i for i in stack.items()}
    assert items["doc-1"].status == Status.FAILED  # an empty invoice, failed with a reason
    assert items["doc-2"].status == Status.DELETED  # its object was gone by the time it was read
    assert queue_counts(stack) == (0, 2)  # the two malformed messages wait for the dead-letter queue


def test_messages_that_keep_failing_reach_the_dead_letter_queue_and_are_counted(stack) -> None:
    client, url = sqs(stack), stack.settings.arrivals_queue_url
    client.send_message(QueueUrl=url, MessageBody="{broken")
    receives = json.loads(
        client.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]["RedrivePolicy"]
    )["maxReceiveCount"]
    for _ in range(receives):  # earlier runs that received it and could not settle it
        assert client.receive_message(QueueUrl=url, VisibilityTimeout=0, WaitTimeSeconds=1)["Messages"]
    last = drain(stack)
    assert last.deadLetterQueue == 1 and last.queueWaiting == 0


def test_three_tasks_draining_one_queue_process_each_document_once(stack) -> None:
    docs = list(generate(4, 30, bad_ratio=0.05, seed=11))
    upload(stack.s3(), stack.settings.raw_bucket, docs)
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, "DOCUFLOW_LOG_FORMAT": "json"}
    tasks = [
        subprocess.Popen(
            [sys.executable, "-m", "jobs", "ingest", "--idle-seconds", "2"],
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    summaries = []
    for task in tasks:
        out, err = task.communicate(timeout=240)
        assert task.returncode == 0, err[-2000:]
        summaries.append(json.loads(out))
    assert sum(s["processed"] for s in summaries) == len(docs)
    claims = Counter(c.sort_key for c in stack.stream_changes() if c.new_status == Status.PROCESSING)
    assert len(claims) == len(docs) and set(claims.values()) == {1}
    assert queue_counts(stack) == (0, 0)


def test_backfill_covers_a_bucket_that_predates_the_queue(stack) -> None:
    stack.s3().put_bucket_notification_configuration(Bucket=stack.settings.raw_bucket, NotificationConfiguration={})
    docs = list(generate(2, 8, bad_ratio=0, seed=9))
    upload(stack.s3(), stack.settings.raw_bucket, docs)
    assert drain(stack).processed == 0  # nothing arrived through the queue
    backfill = IngestRun(stack.settings, IngestOptions(backfill=True)).execute()
    assert backfill.mode == "backfill" and backfill.processed == len(docs)
    assert len(stack.items()) == len(docs)


def test_a_lost_notification_is_found_by_reconcile_and_healed_by_repair_and_the_next_drain(stack) -> None:
    from datetime import timedelta

    from jobs.reconcile import ReconcileOptions, ReconcileRun

    docs = list(generate(1, 3, bad_ratio=0, seed=29))
    upload(stack.s3(), stack.settings.raw_bucket, docs[:2])
    assert drain(stack).processed == 2
    stack.s3().put_bucket_notification_configuration(Bucket=stack.settings.raw_bucket, NotificationConfiguration={})
    upload(stack.s3(), stack.settings.raw_bucket, docs[2:])  # its notification is lost
    assert drain(stack).processed == 0

    def reconcile(repair: bool):
        options = ReconcileOptions(grace=timedelta(0), repair=repair, write_report=False)
        return ReconcileRun(stack.settings, options).execute()

    found = reconcile(repair=True)
    assert found.findings.get_column("code").to_list() == ["UNPROCESSED_RAW"]
    (action,) = found.summary.repairs
    assert (action.action, action.outcome) == ("re-queue the arrival", "applied")
    healed = drain(stack)
    assert healed.processed == 1 and healed.decisions == {"CLAIM": 1}
    assert reconcile(repair=False).findings.height == 0
