"""The extraction benchmark runs and writes its report (a smoke test with a tiny time budget)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from extract_helpers import REPO_ROOT


def test_bench_writes_a_report(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "extract.json"
    result = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "bench" / "bench_extract.py"),
            "--seconds",
            "0.05",
            "--rounds",
            "1",
            "--out",
            str(out),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert set(report["formats"]) == {"UBL", "CII", "TEXTRACT_EXPENSE", "FACTURX_PDF", "ZUGFERD1"}
    assert report["formats"]["UBL"]["ratio_to_ref"] > 0  # main measured in the same run
    assert all(row["docs_per_s"] > 0 and row["overhead_over_raw_parse"] > 0 for row in report["formats"].values())
    assert report["peak_rss_mib"] > 0
    assert "docs/s/core" in result.stdout
