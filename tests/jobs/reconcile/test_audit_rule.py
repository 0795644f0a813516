"""--audit-log: the change log against the table and itself. A complete log gives nothing; a lost
batch, a lost removal, an odd item and a record Firehose could not convert are reported; copies,
repair's rebuilt items and versions older than the log are not.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from pydantic import ValidationError
from reconcile_helpers import export_state

from jobs.contract import DocumentItem, Status, layout
from jobs.contract.actors import ActorKind, actor
from jobs.contract.audit import Anomaly
from jobs.errors import ExitCode
from jobs.local.standins.audit_pipe import StagePipe
from jobs.observability import CallMetrics
from jobs.reconcile import cli
from jobs.reconcile.plans import AthenaPlan, AuditCheck, FilesPlan, LivePlan
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.run import ReconcileRun
from jobs.store.dynamo import DocumentTable
from jobs.store.dynamo_wire import to_wire

RUN = actor(ActorKind.INGEST, "night-1")


def _table(stack) -> DocumentTable:
    return DocumentTable(
        stack.dynamodb(), stack.settings.store.table_name, stack.settings.store.index_name, CallMetrics()
    )


def _claim(doc: str) -> DocumentItem:
    now = layout.utc_now()
    return DocumentItem(
        userId="u1",
        documentId=doc,
        status=Status.PROCESSING,
        createdAt=now,
        updatedAt=now,
        rawS3Uri=layout.s3_uri("raw", layout.raw_key("u1", doc, "a.xml")),
        rawEtag='"e1"',
        updatedBy=RUN,
    )


def _versions(stack, doc: str, upto: int, start: DocumentItem | None = None) -> DocumentItem:
    """Write versions of `doc` up to `upto` (one by one, each a new stream record)."""
    t = _table(stack)
    item = start or _claim(doc)
    if start is None:
        assert t.put_if_version(item, None)
    while item.version < upto:
        nxt = item.evolve(version=item.version + 1, updatedAt=layout.utc_now(), updatedBy=RUN, attempts=item.version)
        assert t.put_if_version(nxt, item.version)
        item = nxt
    return item


def _audit(
    stack, plan: type[LivePlan | FilesPlan] = LivePlan, window: timedelta | None = None, **options
) -> pl.DataFrame:
    check = AuditCheck(window=window)
    outcome = ReconcileRun(
        stack.settings, plan(grace=timedelta(0), audit=check, write_report=False, **options)
    ).execute()
    return outcome.findings.filter(pl.col("code").str.starts_with("AUDIT_"))


def _evidence(found: pl.DataFrame, code: Code) -> list[tuple[str | None, dict]]:
    rows = found.filter(pl.col("code") == code.value)
    return [(doc, json.loads(ev)) for doc, ev in rows.select("documentId", "evidence").iter_rows()]


def test_a_complete_log_delivered_twice_has_no_finding(stack) -> None:
    for doc in ("d1", "d2"):
        _versions(stack, doc, 4)
    stack.audit_flush()
    StagePipe.for_settings(stack.settings).flush()  # every record a second time
    assert _audit(stack).height == 0


def test_a_lost_batch_is_a_gap_naming_the_missing_versions(stack) -> None:
    item = _versions(stack, "d1", 2)
    stack.audit_flush()
    with stack.audit_records_lost():
        item = _versions(stack, "d1", 4, start=item)  # versions 3 and 4 never reach the log
    _versions(stack, "d1", 5, start=item)
    stack.audit_flush()
    assert _evidence(_audit(stack), Code.AUDIT_GAP) == [
        ("d1", {"createdAt": layout.format_ts(item.createdAt), "missingVersions": "3,4", "version": 4})
    ]


def test_a_lost_last_version_is_found_from_the_item_and_a_lost_removal_from_nothing_else(stack) -> None:
    item = _versions(stack, "d1", 1)
    stack.audit_flush()
    with stack.audit_records_lost():
        _versions(stack, "d1", 2, start=item)
    assert [e["missingVersions"] for _, e in _evidence(_audit(stack), Code.AUDIT_GAP)] == ["2"]
    # A deleted item: its REMOVE record names the version it removed, which must be in the log.
    with stack.audit_records_lost():
        gone = _versions(stack, "gone", 2)
    stack.dynamodb().delete_item(TableName=stack.settings.store.table_name, Key=to_wire(gone.key()))
    stack.audit_flush()
    gaps = dict(_evidence(_audit(stack), Code.AUDIT_GAP))
    # The REMOVE names version 2; version 1 was named only by version 2's lost record, so the
    # gap lists what can be known (a generation may start above 1: repair rebuilds at 2).
    assert gaps["gone"]["missingVersions"] == "2"


def test_repairs_rebuilt_items_and_versions_older_than_the_log_need_no_record(stack) -> None:
    t = _table(stack)
    # reconcile's repair rebuilds a lost item at version 2 (finished_item over a synthetic claim).
    rebuilt = _claim("rebuilt").evolve(version=2, status=Status.PROCESSED, updatedBy=actor(ActorKind.REPAIR, "r1"))
    assert t.put_if_version(rebuilt, None)
    stack.audit_flush()
    # An item whose first versions were written before the stack had its log.
    old = _claim("old")
    with stack.audit_records_lost():
        assert t.put_if_version(old, None)
    stack.audit_flush()
    assert [doc for doc, _ in _evidence(_audit(stack), Code.AUDIT_GAP)] == ["old"]
    started = layout.utc_now()
    stack.settings = stack.settings.changed(audit_log_since=started)
    _versions(stack, "old", 2, start=old)
    stack.audit_flush()
    assert _audit(stack).height == 0


def test_odd_items_and_unconvertible_records_are_reported_not_dropped(stack) -> None:
    stack.dynamodb().put_item(
        TableName=stack.settings.store.table_name, Item=to_wire({"PK": "LOCK#x", "SK": "LOCK#x", "owner": "job"})
    )
    stack.audit_pipe.firehose.put_record_batch([b"{not json", b"[]"])
    stack.audit_flush()
    found = _audit(stack)
    ((_, anomaly),) = _evidence(found, Code.AUDIT_ANOMALY)
    assert anomaly["anomaly"] == Anomaly.KEYS_OUTSIDE_LAYOUT and anomaly["eventId"]
    undelivered = found.filter(pl.col("code") == Code.AUDIT_UNDELIVERED.value)
    assert undelivered.height == 1 and json.loads(undelivered.item(0, "evidence")) == {"records": 2}
    assert undelivered.item(0, "key").startswith(layout.AUDIT_ERRORS_PREFIX)


def test_a_files_run_reads_the_same_gaps_from_the_export(stack, tmp_path: Path) -> None:
    item = _versions(stack, "d1", 1)
    stack.audit_flush()
    with stack.audit_records_lost():
        _versions(stack, "d1", 3, start=item)
    live = _evidence(_audit(stack), Code.AUDIT_GAP)
    state = export_state(stack, tmp_path)
    files = _evidence(
        _audit(stack, FilesPlan, dynamodb_export=state.export, s3_inventories=tuple(state.manifests)),
        Code.AUDIT_GAP,
    )
    assert files == live and live[0][1]["missingVersions"] == "2,3"


def test_a_window_requires_only_the_versions_written_in_it(stack) -> None:
    old = _claim("old").evolve(updatedAt=layout.utc_now() - timedelta(days=3), updatedBy=RUN)
    with stack.audit_records_lost():
        assert _table(stack).put_if_version(old, None)
        _versions(stack, "new", 2)
    # Every lost version is a gap for the whole log; a day's window holds only the recent ones
    # (earlier nights checked the older versions).
    assert sorted(doc for doc, _ in _evidence(_audit(stack), Code.AUDIT_GAP)) == ["new", "old"]
    assert [doc for doc, _ in _evidence(_audit(stack, window=timedelta(days=1)), Code.AUDIT_GAP)] == ["new"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["athena", "--audit-log"], "unrecognized arguments: --audit-log"),
        (["live", "--audit-window", "1d"], "given with --audit-log"),
    ],
)
def test_options_the_rule_cannot_honour_are_refused(argv: list[str], message: str, capsys) -> None:
    assert cli.main(argv) == ExitCode.BAD_INPUT
    assert message in capsys.readouterr().err
    with pytest.raises(ValidationError, match="Extra inputs"):
        AthenaPlan(audit=AuditCheck())  # type: ignore[call-arg]
