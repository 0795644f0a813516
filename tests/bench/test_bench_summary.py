"""The summary table reads every benchmark's current result format (the committed results)."""

from __future__ import annotations

import json
from pathlib import Path

from bench import summary
from bench.common import RESULTS


def test_every_committed_result_gives_summary_rows() -> None:
    for name in summary.SECTIONS:
        data = json.loads((RESULTS / f"{name}.json").read_text())
        rows = list(summary.SECTIONS[name](data))
        assert rows and all(len(row) == 4 and all(row) for row in rows), name


def test_missing_results_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "ingest.json").write_text((RESULTS / "ingest.json").read_text())
    rows = summary.rows(tmp_path)
    documents = json.loads((RESULTS / "ingest.json").read_text())["documents"]
    assert [row[0] for row in rows] == [
        f"ingest drain, {documents:,} documents",
        f"ingest backfill, {documents:,} documents",
    ]
