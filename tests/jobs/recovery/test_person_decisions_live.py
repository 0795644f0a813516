"""Rollback and undelete undo a bad deploy's or a bad role's writes, never a person's decision.

Between the restore point and the rollback, people act: an operator places (or releases) a legal
hold, an owner deletes a document or restores one deleted earlier, a user is erased. The rollback
leaves each of those decisions as it is (the hold stays, the delete stays, the restore stays, the
erased stay erased), corrects what the bad image wrote around them, and names in its output every
document it left alone and why. The undelete brings back what a bad role hid, but not the
objects of a document its owner deleted: they stay hidden with their DELETED item.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any

from jobs.contract import DocumentItem, Status, layout
from jobs.contract.actors import ActorKind, actor
from jobs.demo.corpus import generate
from jobs.documents.actions import DocumentActions
from jobs.erasure.run import ErasureRun
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.recovery import rollback_cli, undelete
from jobs.recovery.drill import DrillOptions, DrillRun
from jobs.recovery.plan import Source
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from tests.jobs.recovery.recovery_helpers import BAD_VENDOR, corrupt, export, ingest

OPERATOR = actor(ActorKind.OPERATOR, "olga")

Key = tuple[str, str]


class Stage:
    """Documents processed and backed up; then the deploy starts (`deployed`, the restore point)."""

    def __init__(self, stack: Any, users: int = 2, docs: int = 6, seed: int = 53) -> None:
        self.stack = stack
        s, metrics = stack.settings, CallMetrics()
        self.table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics)
        self.buckets = Buckets(stack.s3(), metrics)
        self.actions = DocumentActions(
            self.table, self.buckets, s.store.raw_bucket, s.store.processed_bucket, s.store.retention
        )
        ingest(stack, list(generate(users, docs, bad_ratio=0.0, review_ratio=0.0, seed=seed)))
        self.keys = sorted((i.userId, i.documentId) for i in stack.items() if i.vendorName)
        self.deployed: datetime | None = None

    def backup_and_deploy(self) -> None:
        export(self.stack)  # the nightly backup, before the deploy
        time.sleep(1.1)  # S3 stamps versions to the second: what follows is after the restore point
        self.deployed = layout.utc_now()

    def item(self, key: Key) -> DocumentItem:
        found = self.table.get(*key)
        assert found is not None, key
        return found

    def hold(self, key: Key) -> None:
        self.actions.hold(*key, OPERATOR)

    def delete(self, key: Key) -> None:
        self.actions.delete(*key, actor(ActorKind.USER, key[0]))

    def restore(self, key: Key) -> None:
        self.actions.restore(*key, actor(ActorKind.USER, key[0]))

    def corrupt(self, key: Key) -> None:
        corrupt(self.stack, self.item(key), result_too=False)

    def rollback(self, capsys: Any, *extra: str) -> dict[str, Any]:
        assert self.deployed is not None
        restored = DrillRun(self.stack.settings, DrillOptions(source=Source.EXPORT, as_of=self.deployed)).execute()
        argv = ["--restored-table", restored.report.restoredTable, "--since", layout.format_ts(self.deployed)]
        assert rollback_cli.main([*argv, "--dry-run"]) == 0
        planned = json.loads(capsys.readouterr().out)
        assert rollback_cli.main([*argv, *extra]) == 0
        done: dict[str, Any] = json.loads(capsys.readouterr().out)
        # The plan names what the run then leaves alone, for the same reasons.
        assert planned.get("leftAlone") == done.get("leftAlone") and planned["actions"] == done["actions"]
        return done

    def stored(self, key: Key) -> dict[str, Any]:
        """The item as the table holds it (attributes as written, the TTL among them)."""
        sk = layout.document_sk(key[1])
        [item] = [i for i in self.stack.raw_items() if i[layout.SK_ATTR] == sk and i["userId"] == key[0]]
        return item

    def objects(self, key: Key) -> list[str]:
        s = self.stack.settings
        user, doc = key
        return [
            *self.stack.keys(s.store.raw_bucket, layout.raw_document_prefix(user, doc)),
            *self.stack.keys(s.store.processed_bucket, layout.result_document_prefix(user, doc)),
        ]


def _left(summary: dict[str, Any]) -> dict[Key, str]:
    return {(e["userId"], e["documentId"]): " ".join(e["reasons"]) for e in summary.get("leftAlone", [])}


def test_a_hold_placed_after_the_restore_point_survives_the_rollback(stack, capsys) -> None:
    stage = Stage(stack)
    only_held, held_then_corrupted, corrupted = stage.keys[:3]
    stage.backup_and_deploy()
    stage.hold(only_held)
    stage.hold(held_then_corrupted)
    stage.corrupt(held_then_corrupted)  # the bad image rewrites a held document (keeping its hold)
    stage.corrupt(corrupted)

    summary = stage.rollback(capsys)

    assert summary["actions"] == {"LEAVE": 1, "PUT_BACK": 2}
    for key in (only_held, held_then_corrupted):
        item = stage.item(key)
        assert item.held and item.legalHoldBy == OPERATOR
        assert layout.TTL_ATTR not in stage.stored(key)  # no TTL: nothing expires it while held
        assert item.vendorName != BAD_VENDOR  # what the bad image wrote is undone, around the hold
    assert stage.item(corrupted).vendorName != BAD_VENDOR and not stage.item(corrupted).held
    left = _left(summary)
    assert set(left) == {only_held, held_then_corrupted}
    assert all("legal hold" in reason and OPERATOR in reason for reason in left.values())
    # A rerun finds the hold still there and says so again; nothing else to do.
    summary = stage.rollback(capsys)
    assert set(_left(summary)) == {only_held, held_then_corrupted}


def test_a_hold_on_a_document_the_bad_image_made_keeps_it_and_the_replay_remakes_it(stack, capsys) -> None:
    stage = Stage(stack, users=1, docs=2)
    stage.backup_and_deploy()
    arrived = list(generate(1, 2, bad_ratio=0.0, review_ratio=0.0, seed=59))
    ingest(stack, arrived)  # processed by the bad image
    made = (arrived[0].user_id, arrived[0].document_id)
    stage.corrupt(made)
    stage.hold(made)

    summary = stage.rollback(capsys)

    # Not deleted (a held document stays): marked for reprocessing, its hold kept.
    assert summary["actions"] == {"REPROCESS": 1, "DELETE": 1}
    assert made in _left(summary) and "legal hold" in _left(summary)[made]
    item = stage.item(made)
    assert item.held and item.status == Status.FAILED
    IngestRun(stack.settings.changed(extract_workers=1), BackfillPlan()).execute()
    item = stage.item(made)
    assert item.held and item.status == Status.PROCESSED and item.vendorName != BAD_VENDOR


def test_an_owners_delete_and_restore_after_the_restore_point_survive_the_rollback(stack, capsys) -> None:
    stage = Stage(stack)
    deleted, corrupted_then_deleted, restored_later, corrupted = stage.keys[:4]
    stage.delete(restored_later)  # deleted before the deploy
    stage.backup_and_deploy()
    stage.delete(deleted)
    stage.corrupt(corrupted_then_deleted)
    stage.delete(corrupted_then_deleted)
    stage.restore(restored_later)
    stage.corrupt(corrupted)

    summary = stage.rollback(capsys)

    assert summary["actions"] == {"LEAVE": 3, "PUT_BACK": 1}
    for key in (deleted, corrupted_then_deleted):
        item = stage.item(key)
        assert item.status == Status.DELETED and item.deletedBy == actor(ActorKind.USER, key[0])
        assert not stage.objects(key)  # its objects stay hidden, as its item says
    back = stage.item(restored_later)
    assert back.status == Status.PROCESSED and not back.user_deleted
    assert stage.objects(restored_later)
    left = _left(summary)
    assert set(left) == {deleted, corrupted_then_deleted, restored_later}
    assert "deleted by its owner" in left[deleted] and "restored" in left[restored_later]
    assert stage.item(corrupted).vendorName != BAD_VENDOR


def test_undelete_leaves_the_objects_of_a_document_its_owner_deleted_hidden(stack, capsys) -> None:
    stage = Stage(stack, users=1, docs=4)
    s3, raw = stack.s3(), stack.settings.store.raw_bucket
    owned = stage.keys[0]
    stage.backup_and_deploy()
    since = stage.deployed
    assert since is not None
    stage.delete(owned)  # the owner's delete, inside the window
    # A bad role deletes everything it can still list.
    everything = stack.keys(raw)
    s3.delete_objects(Bucket=raw, Delete={"Objects": [{"Key": k} for k in everything]})

    assert undelete.main(["--bucket", "raw", "--since", layout.format_ts(since), "--dry-run"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert undelete.main(["--bucket", "raw", "--since", layout.format_ts(since)]) == 0
    summary = json.loads(capsys.readouterr().out)

    assert stack.keys(raw) == everything  # what the bad role hid is back
    assert stage.item(owned).status == Status.DELETED
    assert not stack.keys(raw, layout.raw_document_prefix(*owned))  # the owner's stays hidden
    for report in (planned, summary):
        [left] = report.get("leftAlone", [None])
        assert left is not None
        assert (left["userId"], left["documentId"]) == owned and "deleted by its owner" in left["reason"]
    assert summary["removed"] == len(everything) and summary["markersFound"] == len(everything) + 1


def test_an_erasure_after_the_restore_point_is_not_undone(stack, capsys) -> None:
    stage = Stage(stack)
    erased = stage.keys[0][0]
    stage.backup_and_deploy()
    since = stage.deployed
    assert since is not None
    assert ErasureRun(stack.settings, stage.table, stage.buckets, CallMetrics()).execute(erased).receipt is not None
    stage.corrupt(next(k for k in stage.keys if k[0] != erased))

    summary = stage.rollback(capsys)
    for purpose in ("raw", "processed"):
        assert undelete.main(["--bucket", purpose, "--since", layout.format_ts(since)]) == 0
        capsys.readouterr()
    IngestRun(stack.settings.changed(extract_workers=1), BackfillPlan()).execute()

    assert summary["actions"] == {"PUT_BACK": 1}
    assert not [i for i in stack.items() if i.userId == erased]
    s = stack.settings
    for bucket, prefix in zip(
        (s.store.raw_bucket, s.store.processed_bucket), layout.user_prefixes(erased), strict=True
    ):
        assert not stack.s3().list_object_versions(Bucket=bucket, Prefix=prefix).get("Versions")
