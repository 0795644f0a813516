"""GDPR erasure on the live local stack: everything of the user goes, for good, but what a legal
hold keeps; the receipt is written once; a rerun finds nothing; an upload arriving during the
erasure ends erased or intact, never half.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from jobs.contract import DuplicateKind, ObjectInfo, Status, layout
from jobs.contract.erasure import ErasureReceipt, ErasureState
from jobs.documents.actions import DocumentActions
from jobs.erasure.run import ErasureRun
from jobs.errors import ErasureUnknownUserError
from jobs.ingest.plan import decide
from jobs.ingest.plans import BackfillPlan, DrainPlan
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from tests.jobs.lifecycle.lifecycle_helpers import POLICY, credit_note, invoice, listed, put_raw

REPO_ROOT = Path(__file__).resolve().parents[3]


class FakeTime:
    """The erasure's clock and sleep: a lease wait moves the clock, not the test."""

    def __init__(self) -> None:
        self.now = layout.utc_now()
        self.slept = 0.0

    def clock(self):
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        self.now += timedelta(seconds=seconds)


def _tools(stack, **run_options):
    metrics = CallMetrics()
    s = stack.settings
    table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics)
    buckets = Buckets(stack.s3(), metrics)
    actions = DocumentActions(table, buckets, s.store.raw_bucket, s.store.processed_bucket, POLICY)
    return ErasureRun(s, table, buckets, metrics, **run_options), actions, table


def _user_data(stack, user: str) -> tuple[list, list, list]:
    s = stack.settings
    raw_prefix, result_prefix = layout.user_prefixes(user)
    items = [i for i in stack.items() if i.userId == user]
    return items, listed(stack, s.store.raw_bucket, raw_prefix), listed(stack, s.store.processed_bucket, result_prefix)


def _partition(stack, user: str) -> list[dict]:
    response = stack.dynamodb().query(
        TableName=stack.settings.store.table_name,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": layout.user_pk(user)}},
    )
    return response["Items"]


def _seed(stack) -> None:
    stack.settings = stack.settings.changed(retention=POLICY)
    for doc in ("a", "b", "c"):
        put_raw(stack, "alice", doc, invoice())
    put_raw(stack, "alice", "cn", credit_note())
    put_raw(stack, "alice", "a", invoice() + b" ")  # a second version of a's upload
    put_raw(stack, "bob", "b1", invoice())
    IngestRun(stack.settings, BackfillPlan()).execute()


def test_erasure_deletes_everything_but_held_documents_and_writes_one_receipt(stack) -> None:
    _seed(stack)
    run, actions, _ = _tools(stack)
    actions.delete("alice", "b", "user:alice")  # delete markers, versions kept
    actions.hold("alice", "c", "operator:legal")
    bob = _user_data(stack, "bob")
    before = _user_data(stack, "alice")

    plan = run.execute("alice", dry_run=True)
    assert plan.outcome == "dry-run" and _user_data(stack, "alice") == before  # nothing changed
    assert plan.would_delete is not None and plan.would_delete.documents == 3

    done = run.execute("alice")
    assert done.outcome == "erased" and done.receipt is not None
    items, raw, results = _user_data(stack, "alice")
    # Only the held document is left: its item and every version of its objects.
    assert [i.documentId for i in items] == ["c"] and items[0].held
    assert {e.key for e in raw} == {layout.raw_key("alice", "c", "invoice.xml")}
    assert {e.key for e in results} == {layout.result_key("alice", "c")} and not any(e.marker for e in raw + results)
    assert _user_data(stack, "bob") == bob  # nobody else's data is touched
    receipt = done.receipt
    # a: 2 raw versions + result; b: raw + result + 2 markers; cn: raw + result. Items: the three
    # documents and the duplicate markers a and cn held (b's went with its delete).
    assert receipt.deleted.model_dump() == {"items": 7, "documents": 3, "versions": 7, "deleteMarkers": 2}
    # The held document keeps the markers that name it: it still claims its identities.
    assert {(m.documentId, m.kind) for m in stack.markers()} == {
        (m.documentId, m.kind) for m in stack.markers() if m.userId == "bob"
    } | {("c", kind) for kind in DuplicateKind}
    assert plan.would_delete == receipt.deleted
    assert [(k.documentId, k.legalHoldBy, k.versions) for k in receipt.kept] == [("c", "operator:legal", 2)]
    assert {h.what.split(" (")[0] for h in receipt.stillHolding} >= {"the table's point-in-time backups"}
    pitr = next(h for h in receipt.stillHolding if "point-in-time" in h.what)
    assert pitr.until == receipt.finishedAt + timedelta(days=35)
    s3 = stack.s3()
    key = layout.erasure_receipt_key("alice", receipt.runId)
    stored = ErasureReceipt.model_validate_json(
        s3.get_object(Bucket=stack.settings.store.reports_bucket, Key=key)["Body"].read()
    )
    assert stored == receipt
    (marker,) = [i for i in _partition(stack, "alice") if i["SK"]["S"] == layout.erasure_sk()]
    assert marker["state"]["S"] == ErasureState.DONE and layout.TTL_ATTR in marker
    assert receipt.requests["s3.DeleteObjects.versions"] == 2  # one per bucket

    again = run.execute("alice")
    assert again.outcome == "nothing" and receipt.runId in again.message
    receipts = s3.list_objects_v2(
        Bucket=stack.settings.store.reports_bucket, Prefix=layout.erasure_receipts_prefix("alice")
    )
    assert receipts["KeyCount"] == 1  # written once


def test_unknown_users_and_bad_ids_are_refused(stack) -> None:
    _seed(stack)
    run, _, _ = _tools(stack)
    with pytest.raises(ErasureUnknownUserError, match="nothing is stored for user carol"):
        run.execute("carol")
    with pytest.raises(ValueError, match="contains '#'"):
        run.execute("a#b")
    env = {**os.environ}
    for args, code, says in (
        (("--user", "carol"), 2, "nothing is stored"),
        (("--user", "x/y"), 2, "contains '/'"),
        ((), 2, "--user"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "jobs", "erase", *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True
        )
        assert done.returncode == code and says in done.stderr and "Traceback" not in done.stderr, done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "jobs", "erase", "--user", "bob"], env=env, cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["deleted"]["documents"] == 1 and _user_data(stack, "bob") == ([], [], [])


def test_an_upload_during_the_erasure_ends_erased_or_intact_never_half(stack) -> None:
    stack.settings = stack.settings.changed(retention=POLICY, lease_seconds=60)
    put_raw(stack, "alice", "old", invoice())
    IngestRun(stack.settings, DrainPlan(idle_seconds=1)).execute()  # the drain settles its message
    # A claim in flight: a run took "late" and is still working on it when the erasure starts.
    late_key = put_raw(stack, "alice", "late", invoice())
    head = stack.s3().head_object(Bucket=stack.settings.store.raw_bucket, Key=late_key)
    obj = ObjectInfo(
        stack.settings.store.raw_bucket, late_key, head["ETag"], head["ContentLength"], head["LastModified"]
    )
    time = FakeTime()
    claim = decide(
        layout.parse_raw_key(late_key),
        obj,
        None,
        now=time.now,
        owner="w",
        actor="ingest:w",
        lease=timedelta(seconds=60),
        max_attempts=3,
    ).claim
    assert claim is not None and _tools(stack)[2].put_if_version(claim, None)

    def between(number: int) -> None:
        s3, s = stack.s3(), stack.settings
        if number == 1:
            # The paused writer wakes up after its claim was erased: its result.json lands
            # (If-None-Match, the key is gone), its finish is refused. And a new upload
            # arrives, after pass 1 listed raw/alice/.
            s3.put_object(
                Bucket=s.store.processed_bucket, Key=layout.result_key("alice", "late"), Body=b"{}", IfNoneMatch="*"
            )
            put_raw(stack, "alice", "during", invoice())
        if number == 3:
            put_raw(stack, "alice", "after", credit_note())  # after the last pass listed: intact

    run, _, _ = _tools(stack, clock=time.clock, sleep=time.sleep, between_passes=between)
    done = run.execute("alice")
    assert done.receipt is not None and done.receipt.passes == 3
    assert time.slept > 0  # it waited out the writer's lease before the pass that found its result
    items, raw, results = _user_data(stack, "alice")
    assert items == [] and results == [] and {e.key for e in raw} == {layout.raw_key("alice", "after", "invoice.xml")}
    # The night's drain: "old", "late" and "during" were erased (their claims leave nothing,
    # not even a tombstone); "after" arrived after the erasure and becomes a whole document.
    summary = IngestRun(stack.settings, DrainPlan(idle_seconds=1)).execute()
    items, raw, results = _user_data(stack, "alice")
    assert [(i.documentId, i.status) for i in items] == [("after", Status.PROCESSED)], summary.statuses
    assert {e.key for e in results} == {layout.result_key("alice", "after")}
    assert (summary.messages["received"], summary.messages["done"]) == (3, 3)  # all settled, none to retry


def _hold_in_s3(stack, bucket: str, prefix: str) -> int:
    """Legal holds on every version under `prefix`, the item left as it is: what a hold that lost
    its item write left before it wrote the item first, or an operator's hold placed in S3.
    """
    s3 = stack.s3()
    versions = s3.list_object_versions(Bucket=bucket, Prefix=prefix)["Versions"]
    for v in versions:
        s3.put_object_legal_hold(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"], LegalHold={"Status": "ON"})
    return len(versions)


def test_versions_held_without_their_item_saying_so_are_kept_with_it_and_the_erasure_ends(stack) -> None:
    _seed(stack)
    s = stack.settings
    run, actions, _ = _tools(stack)
    _hold_in_s3(stack, s.store.raw_bucket, layout.raw_document_prefix("alice", "c"))
    _hold_in_s3(stack, s.store.processed_bucket, layout.result_document_prefix("alice", "c"))
    # Held versions with no item at all: what the erasure left of such a document before.
    put_raw(stack, "alice", "lone", invoice())
    _hold_in_s3(stack, s.store.raw_bucket, layout.raw_document_prefix("alice", "lone"))

    done = run.execute("alice")
    assert done.outcome == "erased" and done.receipt is not None
    items, raw, results = _user_data(stack, "alice")
    assert [(i.documentId, i.held) for i in items] == [("c", False)]  # its item stays with its held versions
    assert {e.key for e in raw} == {layout.raw_key("alice", d, "invoice.xml") for d in ("c", "lone")}
    assert {e.key for e in results} == {layout.result_key("alice", "c")}
    assert {(m.documentId, m.kind) for m in stack.markers() if m.userId == "alice"} == {
        ("c", kind) for kind in DuplicateKind
    }
    kept = [(k.documentId, k.legalHoldBy, k.versions, k.itemKept) for k in done.receipt.kept]
    assert kept == [("c", None, 2, True), ("lone", None, 1, False)]
    assert done.receipt.deleted.documents == 3  # a, b, cn

    # The hold run again completes on the item the erasure kept; a new erasure still ends.
    assert actions.hold("alice", "c", "operator:legal").item.held
    again = run.execute("alice")
    assert again.outcome == "erased" and again.receipt is not None and again.receipt.deleted.empty
    assert [(k.documentId, k.legalHoldBy, k.itemKept) for k in again.receipt.kept] == [
        ("c", "operator:legal", True),
        ("lone", None, False),
    ]


class Killed(BaseException):
    """The run killed between two requests (not an error it could handle)."""


class KilledOnBatch(Buckets):
    """Buckets whose `n`th DeleteObjects of versions never goes out: the run dies mid-pass."""

    def __init__(self, client, metrics, n: int) -> None:
        super().__init__(client, metrics)
        self.calls, self.n = 0, n

    def delete_versions(self, bucket, versions):
        self.calls += 1
        if self.calls == self.n:
            raise Killed
        return super().delete_versions(bucket, versions)


def test_a_resumed_erasure_counts_every_version_the_killed_run_deleted(stack, monkeypatch) -> None:
    _seed(stack)
    s3, s = stack.s3(), stack.settings
    for n in range(45):  # enough versions for several batches of ten
        s3.put_object(Bucket=s.store.raw_bucket, Key=f"raw/alice/bulk/{n % 5}.bin", Body=str(n).encode())
    monkeypatch.setattr("jobs.erasure.run.DELETE_BATCH", 10)
    items, raw, results = _user_data(stack, "alice")
    versions = sum(not e.marker for e in raw + results)
    metrics = CallMetrics()
    table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics)
    killed = ErasureRun(s, table, KilledOnBatch(s3, metrics, n=4), metrics)
    with pytest.raises(Killed):
        killed.execute("alice")
    left = _user_data(stack, "alice")
    assert len(left[1]) == len(raw) - 30 and len(left[0]) == len(items)  # three batches went, no item yet

    done = _tools(stack)[0].execute("alice")  # the next run resumes the killed one
    assert done.receipt is not None and _user_data(stack, "alice") == ([], [], [])
    assert done.receipt.deleted.versions == versions and done.receipt.deleted.documents == len(items)
