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
import threading
import time
from collections import Counter
from pathlib import Path

import boto3
import pytest

from jobs.contract import ObjectInfo, Status, layout
from jobs.contract.events import requeue_body
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.ingest.plans import BackfillPlan, DrainPlan
from jobs.ingest.run import IngestRun
from jobs.ingest.summary import RunSummary
from jobs.local.stack import job_env

REPO_ROOT = str(Path(__file__).resolve().parents[3])


def drain(stack, **options: object) -> RunSummary:
    return IngestRun(stack.settings, DrainPlan(idle_seconds=1, **options)).execute()  # type: ignore[arg-type]


def sqs(stack):
    return boto3.client("sqs", endpoint_url=stack.endpoints.sqs)


def queue_counts(stack) -> tuple[int, int]:
    attributes = sqs(stack).get_queue_attributes(
        QueueUrl=stack.settings.store.arrivals_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])


def put_raw(stack, user: str, doc: str, name: str, body: bytes) -> str:
    key = layout.raw_key(user, doc, name)
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=body)
    return key


def writes(summary: RunSummary) -> int:
    return sum(
        v["calls"]
        for k, v in summary.calls.items()
        if k.startswith(("s3.PutObject", "dynamodb.TransactWrite")) and k != "s3.PutObject.once"
    )


def test_uploads_become_messages_and_a_drain_processes_exactly_them(stack) -> None:
    docs = list(generate(3, 12, bad_ratio=0.1, seed=7))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    stack.s3().put_object(
        Bucket=stack.settings.store.raw_bucket, Key="elsewhere/not-raw.txt", Body=b"x"
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
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    assert drain(stack).processed == 3
    key = layout.raw_key(docs[0].user_id, docs[0].document_id, docs[0].filename)
    head = stack.s3().head_object(Bucket=stack.settings.store.raw_bucket, Key=key)
    again = ObjectInfo(stack.settings.store.raw_bucket, key, head["ETag"], head["ContentLength"], head["LastModified"])
    sqs(stack).send_message(QueueUrl=stack.settings.store.arrivals_queue_url, MessageBody=requeue_body(again))

    duplicate = drain(stack)
    assert duplicate.processed == 0 and writes(duplicate) == 0
    assert duplicate.decisions == {"SKIP_DONE": 1} and queue_counts(stack) == (0, 0)

    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=docs[1].body)  # new bytes, new ETag
    reupload = drain(stack)
    assert reupload.processed == 1 and reupload.decisions == {"CLAIM": 1}
    user, doc = layout.parse_raw_key(key).user_id, layout.parse_raw_key(key).document_id
    item = next(i for i in stack.items() if (i.userId, i.documentId) == (user, doc))
    assert item.rawEtag != head["ETag"] and item.version == 4  # claim, finish, claim, finish


def test_max_docs_leaves_the_rest_queued_for_the_next_run(stack) -> None:
    docs = list(generate(2, 20, bad_ratio=0, seed=5))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    first = drain(stack, max_docs=7)
    assert first.processed == 7
    time.sleep(0.3)  # released messages are visible again at once; give moto a beat
    waiting, _ = queue_counts(stack)
    assert waiting == len(docs) - 7
    second = drain(stack)
    assert second.processed == len(docs) - 7
    assert len(stack.items()) == len(docs) and queue_counts(stack) == (0, 0)


def test_events_that_are_not_work_are_recorded_and_never_crash_the_run(stack) -> None:
    client, url = sqs(stack), stack.settings.store.arrivals_queue_url
    put_raw(stack, "alice", "doc-1", "a.xml", b"<Invoice/>")
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key="raw/alice/missing-filename", Body=b"x")
    gone = put_raw(stack, "alice", "doc-2", "b.xml", b"<Invoice/>")
    stack.s3().delete_object(Bucket=stack.settings.store.raw_bucket, Key=gone)  # an event for a deleted object
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
    assert queue_counts(stack) == (2, 0)  # the two malformed messages, handed back: left for the DLQ


def test_messages_that_keep_failing_reach_the_dead_letter_queue_and_are_counted(stack) -> None:
    client, url = sqs(stack), stack.settings.store.arrivals_queue_url
    client.purge_queue(QueueUrl=url)  # the bootstrap's s3:TestEvent
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
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, "DOCUFLOW_LOG_FORMAT": "json"}
    tasks = [
        subprocess.Popen(
            [sys.executable, "-m", "jobs", "ingest", "drain", "--idle-seconds", "2"],
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
    stack.s3().put_bucket_notification_configuration(
        Bucket=stack.settings.store.raw_bucket, NotificationConfiguration={}
    )
    docs = list(generate(2, 8, bad_ratio=0, seed=9))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    assert drain(stack).processed == 0  # nothing arrived through the queue
    backfill = IngestRun(stack.settings, BackfillPlan()).execute()
    assert backfill.mode == "backfill" and backfill.processed == len(docs)
    assert len(stack.items()) == len(docs)


def test_a_lost_notification_is_found_by_reconcile_and_healed_by_repair_and_the_next_drain(stack) -> None:
    from datetime import timedelta

    from jobs.reconcile import LivePlan, ReconcileRun

    docs = list(generate(1, 3, bad_ratio=0, seed=29))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs[:2])
    assert drain(stack).processed == 2
    stack.s3().put_bucket_notification_configuration(
        Bucket=stack.settings.store.raw_bucket, NotificationConfiguration={}
    )
    upload(stack.s3(), stack.settings.store.raw_bucket, docs[2:])  # its notification is lost
    assert drain(stack).processed == 0

    def reconcile(repair: bool):
        options = LivePlan(grace=timedelta(0), repair=repair, write_report=False)
        return ReconcileRun(stack.settings, options).execute()

    found = reconcile(repair=True)
    assert found.findings.get_column("code").to_list() == ["UNPROCESSED_RAW"]
    (action,) = found.summary.repairs
    assert (action.action, action.outcome) == ("re-queue the arrival", "applied")
    healed = drain(stack)
    assert healed.processed == 1 and healed.decisions == {"CLAIM": 1}
    assert reconcile(repair=False).findings.height == 0


def test_bodies_the_contract_cannot_read_are_recorded_and_the_run_goes_on(stack) -> None:
    """JSON that holds values Python cannot take (issue 27) is a malformed message like any other:
    recorded, left for the dead-letter queue; the valid documents received beside it are processed.
    """
    from tests.jobs.contract.test_events import HOSTILE

    docs = list(generate(1, 4, bad_ratio=0, seed=31))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    client, url = sqs(stack), stack.settings.store.arrivals_queue_url
    hostile = [text for text in HOSTILE.values() if len(text.encode()) <= 256 * 1024]
    for text in hostile:
        client.send_message(QueueUrl=url, MessageBody=text)

    summary = drain(stack)

    assert summary.outcome == "completed" and summary.processed == len(docs)
    assert summary.messages["malformed"] == len(hostile) == len(summary.malformedMessages)
    assert queue_counts(stack) == (len(hostile), 0)  # handed back at the close: left for the DLQ


def _event(obj: ObjectInfo, sequencer: str) -> dict:
    record = json.loads(requeue_body(obj))["Records"][0]
    record |= {"eventSource": "aws:s3", "eventName": "ObjectCreated:Put"}
    record["s3"]["object"]["sequencer"] = sequencer
    return record


@pytest.mark.parametrize("older_first", [True, False], ids=["older-event-first", "newer-event-first"])
def test_two_uploads_of_one_key_in_the_same_millisecond_are_ordered_by_the_sequencer(stack, older_first) -> None:
    """AWS's events carry a sequencer (moto's do not, so the two events are written here as S3
    writes them): the same event time, the later upload has the greater sequencer.
    """
    docs = list(generate(1, 2, bad_ratio=0, seed=37))
    key = put_raw(stack, "alice", "tie", "invoice.xml", docs[0].body)
    first = stack.s3().head_object(Bucket=stack.settings.store.raw_bucket, Key=key)["ETag"]
    put_raw(stack, "alice", "tie", "invoice.xml", docs[1].body)
    second = stack.s3().head_object(Bucket=stack.settings.store.raw_bucket, Key=key)["ETag"]
    sqs(stack).purge_queue(QueueUrl=stack.settings.store.arrivals_queue_url)
    when = layout.utc_now()
    events = [
        _event(ObjectInfo(stack.settings.store.raw_bucket, key, first, 1, when), "0062E99A88DC4074FF"),
        _event(ObjectInfo(stack.settings.store.raw_bucket, key, second, 1, when), "0062E99A88DC407500"),
    ]
    body = json.dumps({"Records": events if older_first else events[::-1]})
    sqs(stack).send_message(QueueUrl=stack.settings.store.arrivals_queue_url, MessageBody=body)

    summary = drain(stack)

    (item,) = stack.items()
    assert (item.status, item.rawEtag) == (Status.PROCESSED, second), summary.decisions
    assert queue_counts(stack) == (0, 0)


def test_a_tombstoned_document_uploaded_again_with_the_same_bytes_is_processed_again(stack) -> None:
    (doc,) = generate(1, 1, bad_ratio=0, seed=41)
    key = put_raw(stack, doc.user_id, doc.document_id, doc.filename, doc.body)
    stack.s3().delete_object(Bucket=stack.settings.store.raw_bucket, Key=key)
    assert drain(stack).statuses == {"DELETED": 1}  # gone by the time it was read: the tombstone
    put_raw(stack, doc.user_id, doc.document_id, doc.filename, doc.body)  # the same bytes, same key

    again = drain(stack)

    assert again.decisions == {"CLAIM": 1} and again.processed == 1
    (item,) = stack.items()
    assert item.status == Status.PROCESSED and item.attempts == 1


def receive_counts(stack) -> list[int]:
    """ApproximateReceiveCount of every message waiting, before this look (which reads each
    message once, then makes them all visible again).
    """
    client, url = sqs(stack), stack.settings.store.arrivals_queue_url
    seen: dict[str, tuple[int, str]] = {}
    while batch := client.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, MessageSystemAttributeNames=["All"]
    ).get("Messages", []):
        seen |= {m["MessageId"]: (int(m["Attributes"]["ApproximateReceiveCount"]), m["ReceiptHandle"]) for m in batch}
    receipts = [receipt for _, receipt in seen.values()]
    for start in range(0, len(receipts), 10):
        entries = [
            {"Id": str(n), "ReceiptHandle": r, "VisibilityTimeout": 0}
            for n, r in enumerate(receipts[start : start + 10])
        ]
        client.change_message_visibility_batch(QueueUrl=url, Entries=entries)
    return [count - 1 for count, _ in seen.values()]


def test_a_dry_run_leaves_the_queue_as_it_found_it_and_reports_each_document_once(stack) -> None:
    docs = list(generate(2, 6, bad_ratio=0, seed=43))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    client, url = sqs(stack), stack.settings.store.arrivals_queue_url
    peeked = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    client.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0} for n, m in enumerate(peeked)
        ],
    )
    event = next(m["Body"] for m in peeked if "Records" in m["Body"])
    client.send_message(QueueUrl=url, MessageBody=event)  # S3 delivers an event twice, now and then

    summary = drain(stack, dry_run=True)

    assert summary.decisions == {"CLAIM": len(docs)}
    assert summary.messages["received"] == len(docs) + 2  # each message once (and the test event)
    assert summary.deadLetterQueue == 0 and stack.items() == []
    time.sleep(0.3)
    assert queue_counts(stack) == (len(docs) + 2, 0)
    assert sorted(receive_counts(stack)) == [1] * (len(docs) + 2 - len(peeked)) + [2] * len(peeked)
    assert drain(stack).processed == len(docs)  # the real run finds everything still there


def test_a_budgeted_run_receives_each_message_once_and_hands_back_the_rest(stack) -> None:
    docs = list(generate(2, 30, bad_ratio=0, seed=47))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)

    budgeted = drain(stack, max_docs=3)

    assert budgeted.processed == 3
    assert budgeted.messages["received"] <= len(docs) + 1 and "redelivered" not in budgeted.messages
    time.sleep(0.3)
    assert queue_counts(stack) == (len(docs) - 3, 0)
    assert max(receive_counts(stack)) == 1


def test_everything_the_run_holds_is_renewed_from_the_queues_own_visibility(stack) -> None:
    """The queue hides a message for 2 s here (the contract says 30 min); documents take 0.4 s
    each on one I/O thread, so most messages wait undecided or in flight far longer than 2 s.
    None may come back to a receiver while the run holds it.
    """
    docs = list(generate(2, 12, bad_ratio=0, seed=53))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    sqs(stack).set_queue_attributes(
        QueueUrl=stack.settings.store.arrivals_queue_url, Attributes={"VisibilityTimeout": "2"}
    )
    s3 = boto3.client("s3", endpoint_url=stack.endpoints.s3)
    s3.meta.events.register("before-send.s3.GetObject", lambda **_: time.sleep(0.4))
    settings = stack.settings.changed(io_threads=1, extract_workers=1)

    visible: list[int] = []
    running = threading.Event()
    running.set()

    def sample() -> None:
        while running.is_set():
            visible.append(queue_counts(stack)[0])
            time.sleep(0.25)

    sampler = threading.Thread(target=sample)
    run = IngestRun(settings, DrainPlan(idle_seconds=1), s3=s3)
    sampler.start()
    try:
        summary = run.execute()
    finally:
        running.clear()
        sampler.join()

    assert summary.processed == len(docs) and summary.seconds > 4
    assert len(visible) > 10 and max(visible[4:]) == 0, visible  # once received, never visible again
    assert summary.messages["received"] == len(docs) + 1, summary.messages
    assert "redelivered" not in summary.messages
    assert queue_counts(stack) == (0, 0)


def test_the_dead_letter_queue_has_a_way_back(stack) -> None:
    """`ingest redrive` moves the dead letters back (moto has no message move tasks: the
    job's own receive-send-delete, which JobSettings chooses beside a local SQS), and the next
    drain processes them.
    """
    docs = list(generate(2, 7, bad_ratio=0, seed=59))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    client, url = sqs(stack), stack.settings.store.arrivals_queue_url
    redrive_policy = client.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]
    dead_letters = client.get_queue_url(
        QueueName=json.loads(redrive_policy["RedrivePolicy"])["deadLetterTargetArn"].split(":")[-1]
    )["QueueUrl"]
    bodies = []
    while batch := client.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        bodies += [m["Body"] for m in batch]
        client.delete_message_batch(
            QueueUrl=url, Entries=[{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(batch)]
        )
    for body in bodies:  # as SQS leaves them after maxReceiveCount receives
        client.send_message(QueueUrl=dead_letters, MessageBody=body)
    assert drain(stack).processed == 0

    env = {**os.environ, **job_env(stack.endpoints, stack.settings), "PYTHONPATH": REPO_ROOT}
    done = subprocess.run(
        [sys.executable, "-m", "jobs", "ingest", "redrive"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    moved = json.loads(done.stdout)
    assert (moved["moved"], moved["left"], moved["method"]) == (len(bodies), 0, "receive-send-delete")
    healed = drain(stack)
    assert healed.processed == len(docs) and healed.deadLetterQueue == 0
    assert queue_counts(stack) == (0, 0)
