"""`python -m jobs drill` on the live local stack: DynamoDB Local restores from a full export.

Each test builds a stage of processed documents (demo corpus, backfill ingest), exports its table
with the local stand-in for ExportTableToPointInTime, and drills.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from jobs.contract import layout
from jobs.demo.corpus import generate
from jobs.errors import S3ObjectExistsError
from jobs.local.standins import exports as exports_standin
from jobs.recovery import cli
from jobs.recovery.drill import DrillOptions, DrillRun
from jobs.recovery.plan import Source
from jobs.store import call_recording
from tests.jobs.recovery.recovery_helpers import export, ingest, processed_stage, reports, scan, tables

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems", "DeleteTable", "CreateTable"}


def _drill(stack: Any, **options: Any) -> Any:
    return DrillRun(stack.settings, DrillOptions(source=Source.EXPORT, **options)).execute()


def test_drill_restores_into_a_new_table_reconciles_clean_and_reports_rpo_and_rto(stack, capsys) -> None:
    processed_stage(stack)
    location = export(stack)
    live_before = scan(stack, stack.settings.store.table_name)
    with call_recording.recording() as calls:
        code = cli.main([])  # beside DynamoDB Local the source is the stage's exports
    assert code == 0, capsys.readouterr().err
    (key, report), *more = reports(stack).items()
    assert not more
    restored = report["restoredTable"]
    assert restored.startswith(layout.drill_table_prefix(stack.settings.stage))
    # Every item, every attribute, as the export holds it; the live table is as it was.
    assert scan(stack, restored) == live_before == scan(stack, stack.settings.store.table_name)
    assert report["source"] == "export" and report["restoredFrom"].startswith(location)
    assert report["itemCount"] == len(live_before) > 0 and report["findings"]["total"] == 0
    assert report["outcome"] == "clean"
    newest = max(layout.parse_ts(i["updatedAt"]["S"]) for i in live_before.values() if "updatedAt" in i)
    assert datetime.fromisoformat(report["newestChange"]) == newest
    as_of = datetime.fromisoformat(report["asOf"])
    assert report["rpoSeconds"] == pytest.approx((as_of - newest).total_seconds(), abs=0.002)
    assert report["restorePoint"] >= report["newestChange"]  # the export holds every change before it
    assert report["rtoSeconds"] == pytest.approx(report["restoreSeconds"] + report["reconcileSeconds"], abs=0.002)
    assert report["restoreSeconds"] > 0 and report["reconcileSeconds"] > 0
    assert key == layout.drill_report_key(report["startedAt"][:10], report["runId"])
    # No call of the drill's wrote the live table (it never even read it: an export was the source).
    live_calls = [c for c in calls if c.params.get("TableName") == stack.settings.store.table_name]
    assert not [c.operation for c in live_calls if c.operation in WRITES]
    assert {c.operation for c in calls if c.operation in WRITES} == {"CreateTable", "BatchWriteItem"}
    assert all(
        c.params.get("TableName", restored) == restored for c in calls if c.operation in WRITES - {"BatchWriteItem"}
    )
    assert all(set(c.params["RequestItems"]) == {restored} for c in calls if c.operation == "BatchWriteItem")


def test_a_drill_from_an_older_export_lists_what_a_restore_would_lose(stack) -> None:
    processed_stage(stack, docs=8, seed=3)
    export(stack)
    later = list(generate(2, 3, bad_ratio=0.0, review_ratio=0.0, seed=5))
    ingest(stack, later)
    outcome = _drill(stack, grace=timedelta(0), drop_after=True)
    report = outcome.report
    # The three documents processed after the export: their raw objects and result.json have no
    # item in the restored table. Those are the documents a replay of the window brings back.
    assert outcome.exit_code == 1 and report.outcome == "findings"
    assert report.findings.counts == {"UNPROCESSED_RAW": 3, "ORPHAN_RESULT": 3}
    assert {f["documentId"] for f in report.findings.first} == {d.document_id for d in later}
    assert report.restoredTableDropped and report.restoredTable not in tables(stack)


def test_the_report_is_written_once(stack) -> None:
    processed_stage(stack, docs=4, seed=11)
    export(stack)
    first = DrillRun(
        stack.settings, DrillOptions(source=Source.EXPORT, drop_after=True), run_id="20261001T060000Z-once"
    )
    before = first.execute().report
    again = DrillRun(
        stack.settings, DrillOptions(source=Source.EXPORT, drop_after=True), run_id="20261001T060000Z-once"
    )
    with pytest.raises(S3ObjectExistsError):
        again.execute()
    (kept,) = reports(stack).values()
    assert datetime.fromisoformat(kept["finishedAt"]) == before.finishedAt


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--target-table", "{live}"], "is the live table"),
        (["--target-table", "{existing}"], "exists: a drill restores into a new table"),
        (["--target-table", "someone-elses-table"], "is not a drill table name"),
        (["--as-of", "2020-01-01T00:00:00Z"], "no export of"),
        (["--as-of", "2999-01-01T00:00:00Z"], "is in the future"),
        (["--exports", "{empty}"], "no full export of"),
        (["--source", "pitr"], "has no point-in-time recovery"),
        (["--source", "backup"], "needs --backup-role"),
        (["--as-of", "yesterday"], "is not an ISO-8601 time"),
    ],
)
def test_a_refused_request_is_one_line_exit_2_and_creates_nothing(
    stack, tmp_path, capsys, monkeypatch, argv, message
) -> None:
    processed_stage(stack, docs=3, seed=13)
    export(stack)
    if "pitr" in argv:
        # A table whose PITR is off: the local stack's export stand-in answers as a table with PITR
        # on (exports need it), so the drill's clients are made without it.
        monkeypatch.delenv(exports_standin.PLUGIN_ENV)
    existing = layout.drill_table_name(stack.settings.stage, "kept")
    stack.dynamodb().create_table(
        TableName=existing,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
    )
    names = {"live": stack.settings.store.table_name, "existing": existing, "empty": str(tmp_path)}
    live_before, tables_before = scan(stack, stack.settings.store.table_name), tables(stack)
    capsys.readouterr()
    assert cli.main([a.format(**names) for a in argv]) == 2
    # One error line (argparse prints its usage above its own), no traceback, no JSON log.
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if "error:" in line]
    assert message in line and "Traceback" not in err, err
    assert tables(stack) == tables_before and scan(stack, stack.settings.store.table_name) == live_before
    assert reports(stack) == {}


def test_a_damaged_export_fails_the_drill_and_leaves_no_drill_table(stack, capsys) -> None:
    processed_stage(stack, docs=4, seed=17)
    location = export(stack)
    s3 = stack.s3()
    bucket, prefix = location.removeprefix("s3://").split("/", 1)
    (data_key,) = [k for k in stack.keys(bucket, prefix) if "/data/" in k]
    s3.put_object(Bucket=bucket, Key=data_key, Body=b"not the bytes the manifest vouches for")
    before = tables(stack)
    assert cli.main([]) == 2
    assert "MD5 does not match the manifest" in capsys.readouterr().err
    assert tables(stack) == before
    assert reports(stack) == {}
