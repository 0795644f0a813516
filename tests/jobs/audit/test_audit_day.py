"""A scripted day on the local stack, end to end: ingest, a re-upload, a reconcile repair and the
ingest that redoes it, all through the real jobs, with the stand-in of Pipe + Firehose writing the
change log. Every version of every item is in the log exactly once, written by the right actor;
`audit history` prints the timeline; the log's objects cannot be overwritten or deleted; the
reconcile finds the log complete, then finds a gap planted in it. And 10,000 scripted changes
give 10,000 distinct records (slow).

Reviewer settlements, deletes and restores, legal holds, erasures and TTL expiries are written by
jobs other branches are building; the log's handling of their records (the TTL service identity,
a removal's actor) is covered in test_questions.py.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import timedelta

import polars as pl
import pytest
from botocore.exceptions import ClientError

from bench.bench_audit import write_changes
from jobs.audit import questions
from jobs.audit.cli import main
from jobs.audit.engines import local_engine
from jobs.contract import layout
from jobs.contract.actors import ActorKind, actor
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.ingest.run import IngestOptions, IngestRun
from jobs.observability import CallMetrics
from jobs.reconcile.findings import Code
from jobs.reconcile.run import ReconcileOptions, ReconcileRun
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets


def _ingest(stack) -> str:
    return IngestRun(stack.settings, IngestOptions(backfill=True)).execute().runId


def _reconcile(stack, **options):
    return ReconcileRun(stack.settings, ReconcileOptions(grace=timedelta(0), write_report=False, **options)).execute()


def _timelines(stack) -> dict[tuple[str, str], list]:
    buckets = Buckets(stack.s3(), CallMetrics())
    with local_engine(buckets, stack.settings, None) as engine:
        return {
            (i.userId, i.documentId): questions.history(engine, i.userId, i.documentId).records for i in stack.items()
        }


def test_a_day_of_changes_is_in_the_log_once_each_with_its_actor(stack, capsys: pytest.CaptureFixture[str]) -> None:
    s3, s = stack.s3(), stack.settings
    docs = list(generate(2, 6, bad_ratio=0, review_ratio=0, seed=23))
    upload(s3, s.raw_bucket, docs)
    night = _ingest(stack)  # every document: claim (version 1), finish (version 2)
    # A re-upload: new bytes under the same key, claimed and finished again by the next run.
    again = docs[0]
    s3.put_object(
        Bucket=s.raw_bucket,
        Key=layout.raw_key(again.user_id, again.document_id, again.filename),
        Body=again.body + b"\n",
    )
    reupload = _ingest(stack)
    # A repair: result.json gone, so reconcile marks the document for reprocessing; the next
    # ingest redoes it.
    lost = docs[1]
    s3.delete_object(Bucket=s.processed_bucket, Key=layout.result_key(lost.user_id, lost.document_id))
    repair = _reconcile(stack, repair=True)
    assert [a.outcome for a in repair.summary.repairs if a.code == Code.MISSING_RESULT] == ["applied"]
    redo = _ingest(stack)
    stack.audit_flush()

    ingest, repaired = (lambda run: actor(ActorKind.INGEST, run)), actor(ActorKind.REPAIR, repair.summary.runId)
    expected = defaultdict(lambda: [ingest(night)] * 2)
    expected[(again.user_id, again.document_id)] = [ingest(night)] * 2 + [ingest(reupload)] * 2
    expected[(lost.user_id, lost.document_id)] = [ingest(night)] * 2 + [repaired] + [ingest(redo)] * 2
    timelines = _timelines(stack)
    assert len(timelines) == 6
    for (user, doc), records in timelines.items():
        item = next(i for i in stack.items() if (i.userId, i.documentId) == (user, doc))
        # Every version 1..N exactly once (copies of a delivery would be folded, none here).
        assert [r.version for r in records] == list(range(1, item.version + 1)), (user, doc)
        assert [r.actor for r in records] == expected[(user, doc)], (user, doc)
        assert records[-1].statusAfter == item.status and all(r.anomaly is None for r in records)
    lost_timeline = timelines[(lost.user_id, lost.document_id)]
    assert [(r.statusBefore, r.statusAfter) for r in lost_timeline[1:4]] == [
        ("PROCESSING", "PROCESSED"),
        ("PROCESSED", "FAILED"),
        ("FAILED", "PROCESSING"),
    ]

    # The auditor's command prints that timeline.
    assert main(["history", "--user", lost.user_id, "--doc", lost.document_id]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [(r["version"], r["actor"]) for r in printed["records"]] == [(r.version, r.actor) for r in lost_timeline]

    # The log is complete; the reconcile agrees.
    audit = _reconcile(stack, audit_log=True).findings.filter(pl.col("code").str.starts_with("AUDIT_"))
    assert audit.height == 0, audit.select("evidence").to_series().to_list()

    # Its objects are written once and kept: an overwrite and a deletion are refused.
    bucket = s.audit_bucket
    (first, *_) = stack.keys(bucket, layout.AUDIT_CHANGES_PREFIX)
    version = s3.head_object(Bucket=bucket, Key=first)["VersionId"]
    with pytest.raises(ClientError, match="PreconditionFailed"):
        s3.put_object(Bucket=bucket, Key=first, Body=b"rewritten", IfNoneMatch="*")
    with pytest.raises(ClientError, match="AccessDenied"):
        s3.delete_object(Bucket=bucket, Key=first, VersionId=version)

    # A planted gap: a change whose batch never reaches the log is reported by reconcile.
    item = next(i for i in stack.items() if (i.userId, i.documentId) == (again.user_id, again.document_id))
    planted = item.evolve(
        version=item.version + 1, updatedAt=layout.utc_now(), updatedBy=actor(ActorKind.OPERATOR, "x")
    )
    assert DocumentTable(stack.dynamodb(), s.table_name, s.index_name, CallMetrics()).put_if_version(
        planted, item.version
    )
    pipe = stack.audit_pipe
    real, pipe.firehose = pipe.firehose, type("Lost", (), {"put_record_batch": lambda self, records: None})()
    try:
        pipe.pump()
    finally:
        pipe.firehose = real
    gaps = _reconcile(stack, audit_log=True).findings.filter(pl.col("code") == Code.AUDIT_GAP.value)
    assert gaps.select("userId", "documentId").rows() == [(again.user_id, again.document_id)]
    assert json.loads(gaps.item(0, "evidence"))["missingVersions"] == str(planted.version)


@pytest.mark.slow
def test_ten_thousand_changes_give_ten_thousand_distinct_records(stack) -> None:
    table = DocumentTable(stack.dynamodb(), stack.settings.table_name, stack.settings.index_name, CallMetrics())
    write_changes(table, 10_000)
    assert stack.audit_flush() == 10_000
    buckets = Buckets(stack.s3(), CallMetrics())
    with local_engine(buckets, stack.settings, None) as engine:
        ((total, distinct, versions),) = engine.rows(
            f"SELECT count(*), count(DISTINCT eventid), count(DISTINCT concat(dynamodb.keys.sk.s, '#', "
            f"dynamodb.newimage.version.n)) FROM {engine.relation}"
        )
    assert (total, distinct, versions) == ("10000", "10000", "10000")
    assert _reconcile(stack, audit_log=True).findings.filter(pl.col("code").str.starts_with("AUDIT_")).height == 0
