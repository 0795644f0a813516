"""A scripted day on the local stack, end to end, through the real jobs and their commands, with the
stand-in of Pipe + Firehose writing the change log: ingest, a re-upload, a reconcile repair and the
ingest that redoes it, a reviewer claiming and settling a document, an owner's delete and restore,
an operator's legal hold and its release, the GDPR erasure of a whole user, and a TTL expiry (an
owner's delete left past its grace, the stand-in's clock moved there by `local advance`). Every
version of every document is in the log exactly once, written by the right actor; each removal is a
REMOVE record naming its remover (the erasure run; the TTL's service identity); `audit history`
prints the timeline; the reconcile finds the log complete. The log's objects cannot be overwritten
or deleted, and the reconcile finds a gap planted in it. And 10,000 scripted changes give 10,000
distinct records (slow).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from botocore.exceptions import ClientError

from bench.bench_audit import write_changes
from jobs.audit import questions
from jobs.audit.cli import main
from jobs.audit.engines import local_engine
from jobs.contract import Status, layout
from jobs.contract.actors import ActorKind, actor
from jobs.contract.audit import REMOVE, TTL_ACTOR
from jobs.demo.corpus import DemoDocument, generate
from jobs.demo.seed import upload
from jobs.documents.cli import main as documents
from jobs.erasure.cli import main as erase
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.local.cli import main as local
from jobs.observability import CallMetrics
from jobs.reconcile.plans import AuditCheck, LivePlan
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.run import ReconcileRun
from jobs.review.cli import main as review
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets

Ids = tuple[str, str]


def _ingest(stack) -> str:
    return IngestRun(stack.settings, BackfillPlan()).execute().runId


def _reconcile(stack, **options):
    return ReconcileRun(stack.settings, LivePlan(grace=timedelta(0), write_report=False, **options)).execute()


def _ids(doc: DemoDocument) -> Ids:
    return doc.user_id, doc.document_id


def _run(command, argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    """A command as an operator types it: exit 0 and its one JSON object."""
    assert command(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@dataclass
class Day:
    """What the day did, as the log must tell it: each document's actors by version (1..N), and the
    remover of each document no longer in the table.
    """

    docs: list[DemoDocument]
    actors: dict[Ids, list[str]] = field(default_factory=dict)
    removed_by: dict[Ids, str] = field(default_factory=dict)

    def wrote(self, ids: Ids, *actors: str) -> None:
        self.actors[ids] = [*self.actors[ids], *actors]


def _night_and_repairs(stack, day: Day) -> Ids:
    """Ingest, a re-upload, and a repair redone by the next ingest; returns the repaired document."""
    s3, s = stack.s3(), stack.settings
    upload(s3, s.store.raw_bucket, day.docs)
    night = actor(ActorKind.INGEST, _ingest(stack))  # every document: claim (version 1), finish (version 2)
    day.actors = {_ids(d): [night] * 2 for d in day.docs}
    # A re-upload: new bytes under the same key, claimed and finished again by the next run.
    again = day.docs[0]
    s3.put_object(
        Bucket=s.store.raw_bucket,
        Key=layout.raw_key(again.user_id, again.document_id, again.filename),
        Body=again.body + b"\n",
    )
    day.wrote(_ids(again), *[actor(ActorKind.INGEST, _ingest(stack))] * 2)
    # A repair: result.json gone, so reconcile marks the document for reprocessing; the next
    # ingest redoes it.
    lost = day.docs[1]
    s3.delete_object(Bucket=s.store.processed_bucket, Key=layout.result_key(*_ids(lost)))
    repair = _reconcile(stack, repair=True)
    assert [a.outcome for a in repair.summary.repairs if a.code == Code.MISSING_RESULT] == ["applied"]
    day.wrote(_ids(lost), actor(ActorKind.REPAIR, repair.summary.runId))
    day.wrote(_ids(lost), *[actor(ActorKind.INGEST, _ingest(stack))] * 2)
    return _ids(lost)


def _people(stack, day: Day, capsys: pytest.CaptureFixture[str]) -> dict[str, Ids]:
    """A reviewer, an owner, an operator, an erasure and the TTL at work, each through its command;
    returns the document the reviewer, the owner, the operator and the TTL acted on (the erasure
    takes every document of user-0002).
    """
    kept = [d for d in day.docs[2:] if d.user_id != "user-0002"]
    reviewed = next(_ids(d) for d in kept if d.review)
    restored, held, expired = (_ids(d) for d in [d for d in kept if not d.review][:3])
    user, doc = reviewed
    assert _run(review, ["claim", "--user", user, "--doc", doc, "--reviewer", "rita"], capsys)["status"] == (
        Status.REVIEW_REQUIRED
    )
    assert _run(review, ["settle", "--user", user, "--doc", doc, "--reviewer", "rita"], capsys)["status"] == (
        Status.PROCESSED
    )
    day.wrote(reviewed, *[actor(ActorKind.REVIEWER, "rita")] * 2)
    for ids, action in ((restored, "delete"), (restored, "restore"), (expired, "delete")):
        _run(documents, [action, "--user", ids[0], "--doc", ids[1]], capsys)
        day.wrote(ids, actor(ActorKind.USER, ids[0]))
    for extra in ([], ["--release"]):
        _run(documents, ["hold", "--user", held[0], "--doc", held[1], "--operator", "lena", *extra], capsys)
        day.wrote(held, actor(ActorKind.OPERATOR, "lena"))
    # The erasure of a whole user: each document's last version names the run, then it goes.
    receipt = _run(erase, ["--user", "user-0002"], capsys)
    eraser = actor(ActorKind.ERASURE, receipt["runId"])
    erased = [_ids(d) for d in day.docs if d.user_id == "user-0002"]
    assert erased and receipt["outcome"] == "erased"
    for ids in erased:
        day.wrote(ids, eraser)
        day.removed_by[ids] = eraser
    # Past the deleted document's grace, DynamoDB's TTL (the stand-in) deletes its item.
    (item,) = [i for i in stack.items() if (i.userId, i.documentId) == expired]
    assert item.hardDeleteAt is not None
    after = f"{item.hardDeleteAt + timedelta(days=2):%Y-%m-%d}"
    assert _run(local, ["advance", "--to", after], capsys)["itemsExpired"] >= 1
    day.removed_by[expired] = TTL_ACTOR
    return {"reviewed": reviewed, "restored": restored, "held": held, "expired": expired}


def _timelines(stack, ids: list[Ids]) -> dict[Ids, list]:
    buckets = Buckets(stack.s3(), CallMetrics())
    with local_engine(buckets, stack.settings, None) as engine:
        return {(user, doc): questions.history(engine, user, doc).records for user, doc in ids}


def test_a_day_of_changes_is_in_the_log_once_each_with_its_actor(
    stack, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCUFLOW_LOCAL_DIR", str(tmp_path))  # where `local advance` keeps its ledger
    # Three users; the third is erased whole, the others' documents keep their timelines.
    day = Day(list(generate(3, 12, bad_ratio=0, review_ratio=0.3, seed=23)))
    lost = _night_and_repairs(stack, day)
    acted = _people(stack, day, capsys)
    stack.audit_flush()

    items = {(i.userId, i.documentId): i for i in stack.items()}
    assert set(items) == set(day.actors) - set(day.removed_by)
    timelines = _timelines(stack, list(day.actors))
    for ids, records in timelines.items():
        removal = [r for r in records if r.eventName == REMOVE]
        written = [r for r in records if r.eventName != REMOVE]
        # Every version 1..N exactly once, by its writer (copies of a delivery would be folded).
        assert [r.version for r in written] == list(range(1, len(day.actors[ids]) + 1)), ids
        assert [r.actor for r in written] == day.actors[ids], ids
        assert all(r.anomaly is None for r in records), ids
        if ids in items:
            assert not removal and written[-1].version == items[ids].version, ids
            assert written[-1].statusAfter == items[ids].status, ids
        else:  # the removal of its last version, naming the remover
            assert [(r.version, r.actor, r.statusBefore) for r in removal] == [
                (written[-1].version, day.removed_by[ids], written[-1].statusAfter)
            ], ids
    assert [(r.statusBefore, r.statusAfter) for r in timelines[lost][1:4]] == [
        ("PROCESSING", "PROCESSED"),
        ("PROCESSED", "FAILED"),
        ("FAILED", "PROCESSING"),
    ]
    assert [r.statusAfter for r in timelines[acted["reviewed"]][1:]] == ["REVIEW_REQUIRED"] * 2 + ["PROCESSED"]
    assert [r.statusAfter for r in timelines[acted["restored"]][2:]] == ["DELETED", "PROCESSED"]

    # The auditor's command prints those timelines.
    for ids in (lost, acted["expired"]):
        printed = _run(main, ["history", "--user", ids[0], "--doc", ids[1]], capsys)
        assert [(r["version"], r["actor"], r["eventName"]) for r in printed["records"]] == [
            (r.version, r.actor, r.eventName) for r in timelines[ids]
        ]

    # The log is complete; the reconcile agrees.
    audit = _reconcile(stack, audit=AuditCheck()).findings.filter(pl.col("code").str.starts_with("AUDIT_"))
    assert audit.height == 0, audit.select("evidence").to_series().to_list()


def test_the_log_is_kept_and_a_planted_gap_is_reported(stack) -> None:
    s3, s = stack.s3(), stack.settings
    docs = list(generate(1, 2, bad_ratio=0, review_ratio=0, seed=23))
    upload(s3, s.store.raw_bucket, docs)
    _ingest(stack)
    stack.audit_flush()

    # Its objects are written once and kept: an overwrite and a deletion are refused.
    bucket = s.audit.audit_bucket
    (first, *_) = stack.keys(bucket, layout.AUDIT_CHANGES_PREFIX)
    version = s3.head_object(Bucket=bucket, Key=first)["VersionId"]
    with pytest.raises(ClientError, match="PreconditionFailed"):
        s3.put_object(Bucket=bucket, Key=first, Body=b"rewritten", IfNoneMatch="*")
    with pytest.raises(ClientError, match="AccessDenied"):
        s3.delete_object(Bucket=bucket, Key=first, VersionId=version)

    # A planted gap: a change whose batch never reaches the log is reported by reconcile.
    item = next(i for i in stack.items() if (i.userId, i.documentId) == _ids(docs[0]))
    planted = item.evolve(
        version=item.version + 1, updatedAt=layout.utc_now(), updatedBy=actor(ActorKind.OPERATOR, "x")
    )
    with stack.audit_records_lost():
        assert DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, CallMetrics()).put_if_version(
            planted, item.version
        )
    gaps = _reconcile(stack, audit=AuditCheck()).findings.filter(pl.col("code") == Code.AUDIT_GAP.value)
    assert gaps.select("userId", "documentId").rows() == [_ids(docs[0])]
    assert json.loads(gaps.item(0, "evidence"))["missingVersions"] == str(planted.version)


@pytest.mark.slow
def test_ten_thousand_changes_give_ten_thousand_distinct_records(stack) -> None:
    table = DocumentTable(
        stack.dynamodb(), stack.settings.store.table_name, stack.settings.store.index_name, CallMetrics()
    )
    write_changes(table, 10_000)
    assert stack.audit_flush() == 10_000
    buckets = Buckets(stack.s3(), CallMetrics())
    with local_engine(buckets, stack.settings, None) as engine:
        ((total, distinct, versions),) = engine.rows(
            f"SELECT count(*), count(DISTINCT eventid), count(DISTINCT concat(dynamodb.keys.sk.s, '#', "
            f"dynamodb.newimage.version.n)) FROM {engine.relation}"
        )
    assert (total, distinct, versions) == ("10000", "10000", "10000")
    assert _reconcile(stack, audit=AuditCheck()).findings.filter(pl.col("code").str.starts_with("AUDIT_")).height == 0
