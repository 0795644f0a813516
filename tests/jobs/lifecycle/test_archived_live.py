"""Archived objects on the live local stack: the clock moved past every transition by the
lifecycle stand-in (`local advance`), objects in GLACIER (moto keeps the class and answers
InvalidObjectState as S3 does), and every path that reads them meets ARCHIVED as the one
document's outcome, never an outage; `restore-archived` brings them back and the next run
finishes the work. The frontend's presigned result.json reads GLACIER_IR at once (an archived one
answers S3's 403 until restored), and the erasure deletes every version whatever its class.

The declared rules move every tier to GLACIER_IR, which reads at once (docs/lifecycle.md,
"Storage tiers"); objects are put into GLACIER by the test itself, as the rules before that
change left them (a transition never moves an object back) or a hand-made copy would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import boto3
import pytest

from jobs.contract import FailureCode, LifecycleSpec, Status, layout
from jobs.contract.erasure import ErasureReceipt
from jobs.contract.events import requeue_body
from jobs.documents.url import result_url
from jobs.errors import S3ObjectArchivedError
from jobs.ingest.plans import DrainPlan
from jobs.ingest.restore_archived import ArchivedRestore, of
from jobs.ingest.run import IngestRun
from jobs.ingest.summary import RunSummary
from jobs.local.standins.advance import advance
from jobs.local.standins.rules import SMALL_OBJECT_BYTES
from jobs.observability import CallMetrics
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.repair import reprocess
from jobs.reconcile.rules.findings import Code, render
from jobs.reconcile.run import ReconcileRun
from jobs.runtime.context import RunContext
from jobs.store.dynamo import DocumentTable
from jobs.store.queue import ArrivalQueue
from jobs.store.s3 import Buckets
from tests.jobs.lifecycle.lifecycle_helpers import invoice, listed, put_raw
from tests.jobs.review import review_helpers

# Past the tiering's last transition (GLACIER_IR at 365 days), well inside every retention.
PAST_TRANSITIONS = timedelta(days=400)
REPO_ROOT = Path(__file__).resolve().parents[3]


def drain(stack) -> RunSummary:
    return IngestRun(stack.settings, DrainPlan(idle_seconds=1)).execute()


def storage_class(stack, bucket: str, key: str) -> str:
    return stack.s3().head_object(Bucket=bucket, Key=key).get("StorageClass", "STANDARD")


def advance_past_transitions(stack, tmp_path) -> int:
    """The stage moved past every transition; how many objects changed class."""
    to = layout.utc_now() + PAST_TRANSITIONS
    return advance(stack.settings, to, stack.dynamodb(), stack.s3(), tmp_path / "ledger.json").objects.transitioned


def padded(body: bytes) -> bytes:
    """The invoice with an XML comment that makes it larger than the 128 KB S3 leaves in place."""
    return body.replace(b"</Invoice>", b"<!-- " + b"x" * SMALL_OBJECT_BYTES + b" --></Invoice>")


def archive(stack, bucket: str, key: str) -> None:
    """Put the object's current version into GLACIER (as a rule that archived it would have)."""
    s3 = stack.s3()
    if storage_class(stack, bucket, key) != "GLACIER":
        s3.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": key}, StorageClass="GLACIER")


def restorer(stack) -> ArchivedRestore:
    return of(RunContext.of(stack.settings))


def browser_get(url: str) -> tuple[int, bytes]:
    """The frontend's read of a presigned result.json URL: a plain GET, the status and the body
    (S3's error document when it refuses).
    """
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def test_the_stand_in_moves_objects_to_their_declared_class_keeping_bytes_etag_and_tags(stack, tmp_path) -> None:
    s, s3 = stack.settings, stack.s3()
    key = put_raw(stack, "u1", "d1", padded(invoice()))
    small = put_raw(stack, "u1", "d2", invoice())
    assert drain(stack).statuses == {"PROCESSED": 2}
    before = s3.head_object(Bucket=s.store.raw_bucket, Key=key)
    assert before["ContentLength"] >= SMALL_OBJECT_BYTES
    tags = s3.get_object_tagging(Bucket=s.store.raw_bucket, Key=key)["TagSet"]
    versions = len(s3.list_object_versions(Bucket=s.store.raw_bucket, Prefix=key)["Versions"])

    assert advance_past_transitions(stack, tmp_path) >= 1
    assert storage_class(stack, s.store.raw_bucket, small) == "STANDARD"  # under 128 KB: S3 leaves it
    after = s3.head_object(Bucket=s.store.raw_bucket, Key=key)
    assert after.get("StorageClass") == LifecycleSpec().archive_storage_class  # the raw tier's last transition
    assert after["ETag"] == before["ETag"] and after["ContentLength"] == before["ContentLength"]
    assert s3.get_object_tagging(Bucket=s.store.raw_bucket, Key=key)["TagSet"] == tags  # S3 reads tags of archives
    assert len(s3.list_object_versions(Bucket=s.store.raw_bucket, Prefix=key)["Versions"]) == versions  # in place
    # No ObjectCreated event for a transition: the queue holds nothing but the test event of the
    # notification put back, which a drain counts as a notice.
    summary = drain(stack)
    assert summary.decisions == {} and summary.notices.get("test-event", 0) >= 1


def test_a_reprocessing_meets_an_archived_raw_object_fails_archived_and_succeeds_after_restore(stack, tmp_path) -> None:
    s = stack.settings
    raw_key = put_raw(stack, "u1", "d1", invoice())
    put_raw(stack, "u1", "d2", invoice())
    assert drain(stack).statuses == {"PROCESSED": 2}
    advance_past_transitions(stack, tmp_path)
    archive(stack, s.store.raw_bucket, raw_key)

    # Reconcile's repair marks d1 for reprocessing and re-queues it (a HEAD: archives answer it).
    table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, CallMetrics())
    item = table.get("u1", "d1")
    assert item is not None
    assert table.put_if_version(reprocess(item, "test", layout.utc_now(), "repair:test"), item.version)
    head = Buckets(stack.s3(), CallMetrics()).head(s.store.raw_bucket, raw_key)
    assert head is not None
    queue = ArrivalQueue(
        boto3.client("sqs", endpoint_url=stack.endpoints.sqs), s.store.arrivals_queue_url, CallMetrics()
    )
    assert queue.send([requeue_body(head)]) == 1  # the message the repair sends
    restore = restorer(stack)

    summary = drain(stack)
    assert summary.outcome == "completed" and summary.error is None  # not an outage
    assert summary.statuses == {"FAILED": 1}
    (failure,) = summary.failures
    assert failure.key == raw_key and failure.reason.startswith("ARCHIVED: s3.GetObject")
    failed = table.get("u1", "d1")
    assert failed is not None and failed.status == Status.FAILED
    assert failed.failureCode == FailureCode.ARCHIVED.value and "restore-archived" in (failed.failureMessage or "")

    report = restore.run("u1", "d1", days=2, tier="Bulk")
    raw = next(o for o in report.objects if o.uri == layout.s3_uri(s.store.raw_bucket, raw_key))
    assert raw.restoreRequested and raw.state == "restored" and raw.storageClass == "GLACIER"
    assert report.requeued and "next drain" in report.next

    again = drain(stack)
    assert again.statuses == {"PROCESSED": 1} and again.failures == []
    done = table.get("u1", "d1")
    assert done is not None and done.status == Status.PROCESSED and done.attempts == 1  # ARCHIVED cost none
    # Running it again changes nothing: nothing to restore, nothing to re-queue.
    settled = restore.run("u1", "d1", days=2, tier="Bulk")
    assert not settled.requeued and not any(o.restoreRequested for o in settled.objects)


def test_reconcile_deep_reports_an_archived_result_json_and_reads_it_after_restore(stack, tmp_path) -> None:
    s = stack.settings
    put_raw(stack, "u1", "d1", invoice())
    drain(stack)
    advance_past_transitions(stack, tmp_path)
    result_key = layout.result_key("u1", "d1")
    archive(stack, s.store.processed_bucket, result_key)

    def findings() -> list[dict[str, object]]:
        run = ReconcileRun(s, LivePlan(grace=timedelta(0), deep=True, write_report=False))
        at = layout.utc_now() + PAST_TRANSITIONS
        wide = run.plan.setup(run).engine.find(lambda _taken: run.params(at)).wide
        return list(render(wide).iter_rows(named=True))

    (finding,) = findings()
    assert finding["code"] == Code.RESULT_UNREADABLE.value and finding["documentId"] == "d1"
    error = json.loads(str(finding["evidence"]))["error"]
    assert error.startswith("ARCHIVED: result.json is archived") and "restore-archived" in error

    report = restorer(stack).run("u1", "d1", days=2, tier="Standard")
    assert not report.requeued  # PROCESSED: nothing to re-process, only to read
    assert findings() == []


def test_review_correct_on_an_archived_result_json_says_archived_and_works_after_restore(stack, tmp_path) -> None:
    s = stack.settings
    review_helpers.in_review(stack, "u1", "r1")
    desk = review_helpers.desk(stack)
    desk.claim("u1", "r1", "alice")
    advance_past_transitions(stack, tmp_path)
    archive(stack, s.store.processed_bucket, layout.result_key("u1", "r1"))

    with pytest.raises(S3ObjectArchivedError, match=r"^ARCHIVED: .*result\.json is in GLACIER"):
        desk.correct("u1", "r1", "alice", ["vendorName=ACME GmbH"])
    assert review_helpers.item_of(stack, "u1", "r1").vendorName is None  # nothing written

    restorer(stack).run("u1", "r1", days=2, tier="Standard")
    outcome = desk.correct("u1", "r1", "alice", ["vendorName=ACME GmbH"])
    assert outcome.item.vendorName == "ACME GmbH"


def test_the_presigned_result_json_reads_glacier_ir_at_once_and_an_archived_one_after_restore(stack, tmp_path) -> None:
    s = stack.settings
    put_raw(stack, "u1", "d1", padded(invoice()))  # result.json keeps the XML: 128 KB+ too
    drain(stack)
    result_key = layout.result_key("u1", "d1")
    written = stack.s3().get_object(Bucket=s.store.processed_bucket, Key=result_key)["Body"].read()
    assert len(written) >= SMALL_OBJECT_BYTES

    assert advance_past_transitions(stack, tmp_path) >= 1
    assert storage_class(stack, s.store.processed_bucket, result_key) == LifecycleSpec().archive_storage_class
    url = result_url(s, "u1", "d1").url
    assert browser_get(url) == (200, written)

    # A presigned URL is signed locally and cannot know the object's class: an archived result.json
    # is S3's own 403 InvalidObjectState to the browser (docs/lifecycle.md, "Archived objects").
    archive(stack, s.store.processed_bucket, result_key)
    status, body = browser_get(result_url(s, "u1", "d1").url)
    assert status == 403 and b"<Code>InvalidObjectState</Code>" in body
    report = restorer(stack).run("u1", "d1", days=2, tier="Standard")
    restored = next(o for o in report.objects if o.uri == layout.s3_uri(s.store.processed_bucket, result_key))
    assert restored.restoreRequested and restored.state == "restored"
    assert browser_get(url) == (200, written)  # a URL names the key, not a class: one issued before reads


def test_the_erasure_deletes_every_version_of_transitioned_and_archived_objects(stack, tmp_path) -> None:
    s = stack.settings
    raw_keys = [put_raw(stack, "u1", doc, padded(invoice())) for doc in ("d1", "d2")]
    put_raw(stack, "u1", "d1", padded(invoice()) + b" ")  # a second version of d1's upload
    assert drain(stack).statuses == {"PROCESSED": 2}
    advance_past_transitions(stack, tmp_path)
    archive(stack, s.store.raw_bucket, raw_keys[1])
    classes = {
        storage_class(stack, bucket, key)
        for bucket, key in [
            (s.store.raw_bucket, raw_keys[0]),
            *((s.store.processed_bucket, layout.result_key("u1", d)) for d in ("d1", "d2")),
        ]
    }
    assert classes == {LifecycleSpec().archive_storage_class}
    assert storage_class(stack, s.store.raw_bucket, raw_keys[1]) == "GLACIER"
    raw_prefix, result_prefix = layout.user_prefixes("u1")
    versions = len(
        listed(stack, s.store.raw_bucket, raw_prefix) + listed(stack, s.store.processed_bucket, result_prefix)
    )

    done = subprocess.run(
        [sys.executable, "-m", "jobs", "erase", "--user", "u1"],
        env=os.environ.copy(),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["outcome"] == "erased" and shown["deleted"]["versions"] == versions and shown["kept"] == []
    assert (
        listed(stack, s.store.raw_bucket, raw_prefix) == []
        and listed(stack, s.store.processed_bucket, result_prefix) == []
    )
    assert [i for i in stack.items() if i.userId == "u1"] == []
    key = layout.erasure_receipt_key("u1", shown["runId"])
    assert shown["receipt"] == layout.s3_uri(s.store.reports_bucket, key)
    stored = ErasureReceipt.model_validate_json(
        stack.s3().get_object(Bucket=s.store.reports_bucket, Key=key)["Body"].read()
    )
    assert stored.model_dump(mode="json").items() <= shown.items()  # the receipt written is the one printed
