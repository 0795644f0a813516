"""The ledger resolves only what a run judged (issue 44): a finding a run did not look for is
carried unchanged, its first-seen and nights open kept, until a run that checks it decides.
Pure: ledgers and summaries built in memory.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl

from jobs.reconcile.chain import ledger as ledgers
from jobs.reconcile.chain.coverage import Coverage
from jobs.reconcile.rules.findings import FINDINGS_SCHEMA, Code
from jobs.reconcile.summary import ReconcileSummary

NIGHT1 = datetime(2026, 6, 1, 5, 0, tzinfo=UTC)
RAW, PROCESSED = "docuflow-t-raw", "docuflow-t-processed"


def finding(code: Code, **where: str | None) -> dict[str, Any]:
    return dict.fromkeys(FINDINGS_SCHEMA) | {"code": code.value, "severity": "warning"} | where


def frame(*rows: dict[str, Any]) -> pl.DataFrame:
    return ledgers.with_ids(pl.DataFrame(list(rows), schema=FINDINGS_SCHEMA))


def summary(*, not_judged: str | None = None, table: str = "t-table", **options: Any) -> ReconcileSummary:
    opts = {"source": "files", "nightly": True, "deep": False, "audit_log": False} | options
    return ReconcileSummary(
        runId="r",
        startedAt=NIGHT1,
        finishedAt=NIGHT1,
        source=str(opts["source"]),
        options=opts,
        inputs={},
        snapshotTimes={},
        asOf=NIGHT1,
        itemCount=0,
        rawObjectCount=0,
        processedObjectCount=0,
        counts={},
        severities={},
        totalFindings=0,
        reportPrefix="reconciliation/2026-06-01/r/",
        scope={"table": table, "rawBucket": RAW, "processedBucket": PROCESSED},
        notJudged=not_judged,
    )


def night(found: pl.DataFrame, before: pl.DataFrame | None, n: int, judged: ReconcileSummary) -> pl.DataFrame:
    return ledgers.carry(found, before, [], NIGHT1 + timedelta(days=n - 1), [], Coverage.of(judged), "t-table")


def rows(ledger: pl.DataFrame) -> dict[str, dict[str, Any]]:
    return {r["code"] + (r["key"] or ""): r for r in ledger.iter_rows(named=True)}


STRAY = finding(Code.BAD_KEY, bucket=RAW, key="notes/stray.txt")
DEEP = finding(Code.SUMMARY_MISMATCH, userId="u1", documentId="d1", pk="USER#u1", sk="DOC#d1")
DEEP_KEYS = finding(Code.KEY_MISMATCH, userId="u1", documentId="d2", bucket=PROCESSED, key="processed/u1/d2/r.json")
ITEM_KEYS = finding(Code.KEY_MISMATCH, userId="u1", documentId="d3", pk="USER#u1", sk="DOC#d3")
STALE = finding(Code.INVENTORY_STALE, bucket=RAW)


def test_a_night_that_judged_nothing_resolves_nothing_and_keeps_each_age() -> None:
    first = night(frame(STRAY, DEEP), None, 1, summary(deep=True))
    blind = night(frame(STALE), first, 2, summary(not_judged="the raw bucket's inventory is 30 hours old"))
    got = rows(blind)
    for code in ("BAD_KEYnotes/stray.txt", "SUMMARY_MISMATCH"):
        assert got[code]["state"] == "unchecked" and got[code]["resolution"] is None
        assert got[code]["nightsOpen"] == 1 and got[code]["firstSeen"] == NIGHT1
    assert got["INVENTORY_STALE"]["state"] == "new"  # the inventory check itself ran
    # The next night that judges finds the stray again: open, its life unbroken.
    third = rows(night(frame(STRAY), blind, 3, summary()))
    assert third["BAD_KEYnotes/stray.txt"]["state"] == "open"
    assert third["BAD_KEYnotes/stray.txt"]["nightsOpen"] == 2 and third["BAD_KEYnotes/stray.txt"]["firstSeen"] == NIGHT1
    assert third["INVENTORY_STALE"]["state"] == "resolved"  # a judged night: the inventory was fresh
    assert third["SUMMARY_MISMATCH"]["state"] == "unchecked"  # still no --deep


def test_a_nightly_run_after_a_manual_deep_one_leaves_the_deep_codes_open() -> None:
    deep = night(frame(STRAY, DEEP, DEEP_KEYS, ITEM_KEYS), None, 1, summary(source="live", nightly=False, deep=True))
    nightly = rows(night(frame(), deep, 2, summary()))
    assert nightly["SUMMARY_MISMATCH"]["state"] == "unchecked"
    assert nightly["KEY_MISMATCHprocessed/u1/d2/r.json"]["state"] == "unchecked"  # KEY_MISMATCH's deep shape
    assert nightly["KEY_MISMATCH"]["state"] == "resolved"  # the item's shape is judged every run
    assert nightly["BAD_KEYnotes/stray.txt"]["state"] == "resolved"
    # A later --deep run that no longer finds it resolves it; one that does keeps its age.
    again = rows(night(frame(DEEP), night(frame(), deep, 2, summary()), 3, summary(source="live", deep=True)))
    assert again["SUMMARY_MISMATCH"]["state"] == "open" and again["SUMMARY_MISMATCH"]["nightsOpen"] == 2
    assert again["KEY_MISMATCHprocessed/u1/d2/r.json"]["state"] == "resolved"


def test_a_live_run_does_not_resolve_an_inventory_finding_nor_the_change_log_codes() -> None:
    gap = finding(Code.AUDIT_GAP, userId="u1", documentId="d1", pk="USER#u1", sk="DOC#d1")
    nightly = night(frame(STALE, gap), None, 1, summary(audit_log=True))
    live = rows(night(frame(), nightly, 2, summary(source="live", nightly=False)))
    assert live["INVENTORY_STALE"]["state"] == "unchecked" and live["AUDIT_GAP"]["state"] == "unchecked"


def test_a_run_over_other_buckets_or_another_table_does_not_resolve_this_ones() -> None:
    elsewhere = finding(Code.BAD_KEY, bucket="another-raw", key="x")
    first = night(frame(STRAY, elsewhere, ITEM_KEYS), None, 1, summary())
    other = ledgers.carry(
        frame(), first, [], NIGHT1 + timedelta(days=1), [], Coverage.of(summary(table="copy")), "t-table"
    )
    got = rows(other)
    assert got["BAD_KEYx"]["state"] == "unchecked"  # not this run's bucket
    assert got["KEY_MISMATCH"]["state"] == "unchecked"  # an item of the other table
    assert got["BAD_KEYnotes/stray.txt"]["state"] == "resolved"  # the run listed the raw bucket


def test_the_report_and_the_ledger_agree_on_what_was_not_looked_for() -> None:
    from jobs.reconcile.report.view import excluded

    s = summary(source="live", nightly=False)
    listed = {code for part in excluded(s) for code in part["codes"].split(", ")}
    assert listed == {c.value for c in Code} - {c.value for c in Coverage.of(s).codes}
    assert Code.SUMMARY_MISMATCH.value in listed and Code.INVENTORY_STALE.value in listed
