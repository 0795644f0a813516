"""The owner's delete and restore and an operator's legal hold, on the live local stack: the item
and every version and delete marker are listed after each step, never assumed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from jobs.contract import Status, layout
from jobs.documents.actions import DocumentActions
from jobs.documents.queries import list_documents
from jobs.errors import DocumentChangedError, DocumentNotFoundError, LifecycleRefusedError
from jobs.ingest.plans import BackfillPlan, DrainPlan
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.rules.findings import Code, render
from jobs.reconcile.run import ReconcileRun
from jobs.store.clients import sqs_client
from jobs.store.dynamo import DocumentTable
from jobs.store.queue import ArrivalQueue
from jobs.store.s3 import Buckets
from tests.jobs.lifecycle.lifecycle_helpers import POLICY, Entry, invoice, listed, put_raw

REPO_ROOT = Path(__file__).resolve().parents[3]


class Clock:
    def __init__(self) -> None:
        self.now = layout.utc_now()

    def __call__(self):
        return self.now


def _setup(stack, docs: tuple[str, ...] = ("d1",)) -> tuple[DocumentActions, Clock]:
    stack.settings = stack.settings.changed(retention=POLICY)
    for doc in docs:
        put_raw(stack, "u1", doc, invoice())
    IngestRun(stack.settings, BackfillPlan()).execute()
    clock = Clock()
    metrics = CallMetrics()
    s = stack.settings
    table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics)
    actions = DocumentActions(
        table, Buckets(stack.s3(), metrics), s.store.raw_bucket, s.store.processed_bucket, POLICY, clock
    )
    return actions, clock


def _state(stack) -> tuple[list, list[Entry], list[Entry]]:
    s = stack.settings
    items = sorted(stack.items(), key=lambda i: i.documentId)
    return items, listed(stack, s.store.raw_bucket), listed(stack, s.store.processed_bucket)


def test_delete_hides_everything_and_restore_brings_it_back_as_it_was(stack) -> None:
    actions, clock = _setup(stack, ("d1", "d2"))
    (before, _), raw_before, results_before = _state(stack)
    gone = actions.delete("u1", "d1", "user:u1")
    assert gone.changed_item and gone.objects == 2  # the raw upload and result.json
    (item, other), raw, results = _state(stack)
    assert (item.status, item.restoreStatus, item.deletedBy) == (Status.DELETED, Status.PROCESSED, "user:u1")
    assert item.hardDeleteAt == clock.now.replace(microsecond=clock.now.microsecond // 1000 * 1000) + timedelta(days=30)
    assert other.status == Status.PROCESSED  # the other document is untouched
    d1 = layout.raw_document_prefix("u1", "d1")
    assert [e for e in raw if e.key.startswith(d1)] == [
        Entry(layout.raw_key("u1", "d1", "invoice.xml"), False, False),
        Entry(layout.raw_key("u1", "d1", "invoice.xml"), True, True),
    ]
    assert Entry(layout.result_key("u1", "d1"), True, True) in results
    shown = list_documents(stack.settings, user_id="u1", status=None)
    assert [i.documentId for i in shown.items] == ["d2"]  # hidden from the user's list
    # Running it again changes nothing.
    again = actions.delete("u1", "d1", "user:u1")
    assert not again.changed_item and again.objects == 0 and _state(stack) == ([item, other], raw, results)

    clock.now += timedelta(days=29)
    back = actions.restore("u1", "d1", "user:u1")
    assert back.objects == 2
    (restored, _), raw_after, results_after = _state(stack)
    assert (raw_after, results_after) == (raw_before, results_before)  # every marker gone, versions kept
    unchanged = {"status", "retentionClass", "retainUntil", "resultEtag", "rawEtag", "vendorName", "createdAt"}
    assert restored.model_dump(include=unchanged) == before.model_dump(include=unchanged)
    assert restored.expires_at == before.expires_at and not restored.user_deleted
    assert restored.version == before.version + 2 and restored.updatedBy == "user:u1"


def test_restore_after_the_grace_and_other_bad_requests_change_nothing(stack) -> None:
    actions, clock = _setup(stack)
    with pytest.raises(LifecycleRefusedError, match="not deleted"):
        actions.restore("u1", "d1", "user:u1")
    actions.delete("u1", "d1", "user:u1")
    state = _state(stack)
    clock.now += timedelta(days=30, seconds=1)
    with pytest.raises(LifecycleRefusedError, match="deleted for good"):
        actions.restore("u1", "d1", "user:u1")
    with pytest.raises(LifecycleRefusedError, match="restore it before a hold"):
        actions.hold("u1", "d1", "operator:legal")
    with pytest.raises(DocumentNotFoundError, match="deleted for good after its grace"):
        actions.restore("u1", "nope", "user:u1")
    with pytest.raises(DocumentNotFoundError):
        actions.delete("nobody", "d1", "user:nobody")
    with pytest.raises(ValueError, match="contains '/'"):
        actions.delete("u1", "a/b", "user:u1")
    assert _state(stack) == state


def test_a_held_document_keeps_every_version_until_released(stack) -> None:
    actions, _ = _setup(stack)
    s3, s = stack.s3(), stack.settings
    put_raw(stack, "u1", "d1", invoice() + b" ")  # a second raw version, not processed
    held = actions.hold("u1", "d1", "operator:legal")
    assert held.objects == 3 and held.item.held  # two raw versions and result.json
    (item,), raw, results = _state(stack)
    assert item.legalHoldBy == "operator:legal" and item.expires_at is None
    stored = stack.dynamodb().get_item(TableName=s.store.table_name, Key={"PK": {"S": item.pk}, "SK": {"S": item.sk}})
    assert layout.TTL_ATTR not in stored["Item"]
    versions = s3.list_object_versions(Bucket=s.store.raw_bucket, Prefix="raw/u1/d1/")["Versions"]
    for v in versions:
        hold = s3.get_object_legal_hold(Bucket=s.store.raw_bucket, Key=v["Key"], VersionId=v["VersionId"])
        assert hold["LegalHold"]["Status"] == "ON"
    with pytest.raises(LifecycleRefusedError, match="legal hold"):
        actions.delete("u1", "d1", "user:u1")
    # S3 itself refuses to delete a held version.
    refused = s3.delete_objects(
        Bucket=s.store.raw_bucket,
        Delete={"Objects": [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in versions]},
    )
    assert len(refused.get("Errors", [])) == 2 and _state(stack) == ([item], raw, results)
    free = actions.release("u1", "d1", "operator:legal")
    assert not free.item.held and free.item.expires_at == free.item.retainUntil
    for v in versions:
        hold = s3.get_object_legal_hold(Bucket=s.store.raw_bucket, Key=v["Key"], VersionId=v["VersionId"])
        assert hold["LegalHold"]["Status"] == "OFF"


def _cli(stack, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobs", "documents", *args],
        env={**os.environ},
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_acts_and_refuses_bad_input_in_one_line_exit_2(stack) -> None:
    _setup(stack)
    state = _state(stack)
    for args, says in (
        (("delete", "--user", "u1", "--doc", ".."), "traversal"),
        (("delete", "--user", "u1", "--doc", "missing"), "no document missing of user u1"),
        (("restore", "--user", "u1", "--doc", "d1"), "not deleted"),
        (("hold", "--user", "u1", "--doc", "d1"), "--operator"),
    ):
        done = _cli(stack, *args)
        assert done.returncode == 2, done.stderr
        assert says in done.stderr and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 3
    assert _state(stack) == state
    deleted = _cli(stack, "delete", "--user", "u1", "--doc", "d1")
    assert deleted.returncode == 0, deleted.stderr
    summary = json.loads(deleted.stdout)
    assert summary["status"] == "DELETED" and summary["objectsChanged"] == 2 and summary["updatedBy"] == "user:u1"
    assert _cli(stack, "restore", "--user", "u1", "--doc", "d1").returncode == 0
    assert _cli(stack, "hold", "--user", "u1", "--doc", "d1", "--operator", "legal").returncode == 0
    (item,), _, _ = _state(stack)
    assert item.status == Status.PROCESSED and item.legalHoldBy == "operator:legal"


def _markers(stack) -> set[tuple[str, str, str | None, str]]:
    """(documentId, kind, TTL, writer) of every duplicate marker in the table."""
    return {
        (m.documentId, m.kind.value, m.expiresAt and layout.format_ts(m.expiresAt), m.updatedBy)
        for m in stack.markers()
    }


def test_duplicate_markers_follow_delete_restore_hold_and_release(stack) -> None:
    actions, _ = _setup(stack, ("d1",))
    (item,) = stack.items()
    ttl = layout.format_ts(item.retainUntil)
    assert len(item.held_markers) == 2 and {(d, t) for d, _, t, _ in _markers(stack)} == {("d1", ttl)}
    deleted = actions.delete("u1", "d1", "user:u1").item
    # The delete gives the identities up with the item's write; the item keeps what it held.
    assert _markers(stack) == set() and deleted.held_markers == item.held_markers
    assert actions.delete("u1", "d1", "user:u1").item == deleted  # a rerun: nothing to release
    # An upload of the same file under another id meanwhile is no duplicate of a deleted document.
    stack.s3().put_object(
        Bucket=stack.settings.store.raw_bucket,
        Key=layout.raw_key("u1", "twin", "invoice.xml"),
        Body=stack.s3()
        .get_object(
            Bucket=stack.settings.store.raw_bucket,
            Key=layout.raw_key("u1", "d1", "invoice.xml"),
            VersionId=_first_version(stack),
        )["Body"]
        .read(),
    )
    IngestRun(stack.settings, BackfillPlan()).execute()
    twin = next(i for i in stack.items() if i.documentId == "twin")
    assert twin.status == Status.PROCESSED and twin.held_markers == item.held_markers
    # d1's restore finds its identities held by the twin: they stay the twin's.
    back = actions.restore("u1", "d1", "user:u1").item
    assert back.status == Status.PROCESSED and back.held_markers == {} and back.updatedBy == "user:u1"
    assert {d for d, *_ in _markers(stack)} == {"twin"}
    assert {Code.ORPHAN_MARKER, Code.MISSING_MARKER}.isdisjoint(_codes(stack))
    # The twin's hold takes its markers' TTL away with the item's; the release gives it back.
    actions.hold("u1", "twin", "operator:legal")
    assert {(t, w) for _, _, t, w in _markers(stack)} == {(None, "operator:legal")}
    actions.release("u1", "twin", "operator:legal")
    assert {t for _, _, t, _ in _markers(stack)} == {layout.format_ts(twin.retainUntil)}
    # Both deleted and d1 restored again: it claims nothing now, so no marker comes back.
    actions.delete("u1", "twin", "user:u1")
    actions.delete("u1", "d1", "user:u1")
    restored_again = actions.restore("u1", "d1", "user:u1").item
    assert restored_again.held_markers == {}  # it gave them up when the twin took them
    assert _markers(stack) == set() and {Code.ORPHAN_MARKER, Code.MISSING_MARKER}.isdisjoint(_codes(stack))


def _first_version(stack) -> str:
    versions = stack.s3().list_object_versions(
        Bucket=stack.settings.store.raw_bucket, Prefix=layout.raw_key("u1", "d1", "invoice.xml")
    )["Versions"]
    return versions[-1]["VersionId"]


def _codes(stack) -> set[str]:
    run = ReconcileRun(stack.settings, LivePlan(grace=timedelta(0), write_report=False))
    wide = run.plan.setup(run).engine.find(lambda _taken: run.params(layout.utc_now())).wide
    return set(render(wide).get_column("code").to_list())


def test_a_held_document_reprocessed_after_a_new_upload_writes_its_result_under_the_hold(stack) -> None:
    actions, _ = _setup(stack)
    actions.hold("u1", "d1", "operator:legal")
    put_raw(stack, "u1", "d1", invoice() + b" ")  # a new upload: the ingest claims the held document again
    IngestRun(stack.settings, BackfillPlan()).execute()
    (item,) = stack.items()
    assert item.held and item.status == Status.PROCESSED
    s3, s, key = stack.s3(), stack.settings, layout.result_key("u1", "d1")
    versions = s3.list_object_versions(Bucket=s.store.processed_bucket, Prefix=key)["Versions"]
    assert len(versions) == 2 and item.resultEtag in {v["ETag"] for v in versions}
    for v in versions:
        hold = s3.get_object_legal_hold(Bucket=s.store.processed_bucket, Key=key, VersionId=v["VersionId"])
        assert hold["LegalHold"].get("Status") == "ON", v


def _holds(stack) -> list[str | None]:
    """The legal hold status of every version of u1/d1's objects."""
    s3, s = stack.s3(), stack.settings
    places = ((s.store.raw_bucket, "raw/u1/d1/"), (s.store.processed_bucket, "processed/u1/d1/"))
    return [
        s3.get_object_legal_hold(Bucket=b, Key=v["Key"], VersionId=v["VersionId"])["LegalHold"].get("Status")
        for b, prefix in places
        for v in s3.list_object_versions(Bucket=b, Prefix=prefix)["Versions"]
    ]


def test_a_hold_that_loses_its_item_write_holds_nothing_and_runs_again(stack) -> None:
    _setup(stack)
    s = stack.settings
    table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, CallMetrics())

    class Racing(Clock):
        """The hold's clock, read between its read of the item and its write: another writer
        gets a new version of the item in first (an ingest finishing, a reviewer).
        """

        raced = False

        def __call__(self):
            if not self.raced:
                self.raced = True
                (item,) = stack.items()
                other = item.evolve(version=item.version + 1, updatedAt=self.now, updatedBy="ingest:other")
                assert table.put_if_version(other, item.version)
            return self.now

    racing = Racing()
    actions = DocumentActions(
        table, Buckets(stack.s3(), CallMetrics()), s.store.raw_bucket, s.store.processed_bucket, POLICY, racing
    )
    with pytest.raises(DocumentChangedError, match="run the command again"):
        actions.hold("u1", "d1", "operator:legal")
    (item,) = stack.items()
    assert not item.held and _holds(stack) == [None, None]  # nothing of the hold is left half-done
    again = actions.hold("u1", "d1", "operator:legal")
    assert again.item.held and again.objects == 2 and _holds(stack) == ["ON", "ON"]


def test_a_restore_requeues_the_reupload_its_delete_hid_and_the_next_drain_takes_it(stack) -> None:
    stack.settings = stack.settings.changed(retention=POLICY)
    drain = DrainPlan(idle_seconds=1)
    put_raw(stack, "u1", "d1", invoice())
    IngestRun(stack.settings, drain).execute()
    put_raw(stack, "u1", "d1", invoice() + b" ")  # a re-upload: a new ETag, its event queued
    s = stack.settings
    head = stack.s3().head_object(Bucket=s.store.raw_bucket, Key=layout.raw_key("u1", "d1", "invoice.xml"))
    metrics = CallMetrics()
    table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics)
    arrivals = ArrivalQueue(sqs_client(s), s.store.arrivals_queue_url, metrics)
    actions = DocumentActions(
        table, Buckets(stack.s3(), metrics), s.store.raw_bucket, s.store.processed_bucket, POLICY, arrivals=arrivals
    )
    actions.delete("u1", "d1", "user:u1")  # before the drain
    IngestRun(stack.settings, drain).execute()  # the hidden re-upload is skipped, its message deleted
    (item,) = stack.items()
    assert item.status == Status.DELETED and item.rawEtag != head["ETag"]

    back = actions.restore("u1", "d1", "user:u1")
    assert back.requeued == 1  # the re-upload is current again: sent to the next drain
    IngestRun(stack.settings, drain).execute()
    (item,) = stack.items()
    assert (item.status, item.rawEtag) == (Status.PROCESSED, head["ETag"])
    assert Code.STALE_RESULT not in _codes(stack)
    assert actions.delete("u1", "d1", "user:u1") and actions.restore("u1", "d1", "user:u1").requeued == 0
