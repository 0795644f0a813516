"""`python -m jobs extract`: human and --json output, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from extract_helpers import EINVOICE, REPO_ROOT, TEXTRACT

from jobs.ingest.extract_cli import main


def test_json_lines_per_file(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_bytes(b"<Invoice>")
    files = [EINVOICE / "ubl" / "EN16931_Rabatte.ubl.xml", TEXTRACT / "test_trp2_expense_sample4.json", broken]
    assert main([*map(str, files), "--json"]) == 0  # FAILED documents are not a CLI error
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["status"] for line in lines] == ["PROCESSED", "REVIEW_REQUIRED", "FAILED"]
    assert [line["format"] for line in lines] == ["UBL", "TEXTRACT_EXPENSE", "UNKNOWN"]
    first = lines[0]
    assert set(first) >= {"file", "format", "status", "reasons", "invoice"}
    assert first["invoice"]["totalAmount"] == "215.07" and first["invoice"]["invoiceDate"] == "2018-06-05"
    assert first["invoice"]["lineItems"][0]["amount"] == "10.00"
    assert "CONFLICTING_VALUES:totalAmount" in lines[1]["reasons"]
    assert lines[2]["invoice"] is None and lines[2]["errorCode"] == "MALFORMED"


def test_human_output(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(TEXTRACT / "test_trp2_expense_sample2.json")]) == 0
    out = capsys.readouterr().out
    assert "TEXTRACT_EXPENSE" in out and "REVIEW_REQUIRED" in out
    assert "LOW_CONFIDENCE:vendorName" in out and "vendorName: costco  (confidence 24)" in out


def test_unreadable_file_exits_2_but_reports_the_others(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "missing.pdf"), str(EINVOICE / "cii" / "EN16931_Einfach.cii.xml"), "--json"]) == 2
    captured = capsys.readouterr()
    assert "missing.pdf" in captured.err
    assert json.loads(captured.out)["status"] == "PROCESSED"


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["--no-such-flag", "x"]) == 2


def test_dispatcher_routes_extract(corpus: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jobs", "extract", "--json", str(EINVOICE / "cii" / "EN16931_Miete.cii.xml")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["invoice"]["invoiceNumber"] == "9314110911/00/M/00/N"
