"""The reconcile benchmark's data: both sources find exactly the discrepancies it planted.

The live figure is only comparable to the files figure if the seeded stack (objects loaded inside
the S3 server's process, items with BatchWriteItem) holds the same state the export and inventory
files describe; this checks that on a small size, against real servers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench import bench_reconcile
from jobs.local.stack import Endpoints
from jobs.reconcile.rules.findings import AUDIT_CODES, INVENTORY_CODES, LIVE_ONLY, Code
from jobs.settings import JobSettings

DOCS = 3000


def test_live_and_files_sources_find_exactly_the_planted_discrepancies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in Endpoints("", "").aws_env():  # the benchmark points the process at its own servers
        monkeypatch.delenv(key, raising=False)
    live = bench_reconcile.live(DOCS)
    # Enough documents deleted overnight that some are numbered like planted discrepancies (an
    # orphan marker's among them): the night deletes only what it names, so counts still agree.
    monkeypatch.setitem(bench_reconcile.NIGHTLY_CHANGES, "deleted", 10 * bench_reconcile.EVERY)
    inputs = bench_reconcile.generate(DOCS, tmp_path, JobSettings(stage=bench_reconcile.STAGE), "Parquet")
    inputs |= {
        "state0": str(tmp_path / "state0"),
        "state1": str(tmp_path / "state1"),
        "duckdbState": str(tmp_path / "night.db"),
    }
    files = bench_reconcile.worker_polars(inputs)
    previous_night = bench_reconcile.worker_keep(inputs)
    nightly = bench_reconcile.worker_nightly(inputs)
    assert nightly["counts"] == files["counts"]
    # The night kept the previous night's data files; measured again with every row written.
    listed = tmp_path / "state1" / "table-state.json"
    assert any(f["state"] == "state0" for f in json.loads(listed.read_text())["files"])
    shutil.rmtree(tmp_path / "state1")
    assert bench_reconcile.worker_nightly_rewrite(inputs)["counts"] == files["counts"]
    assert not any(f["state"] for f in json.loads(listed.read_text())["files"])
    # The night's other contenders read the same state and changes, and find the same.
    bench_reconcile.worker_duckdb_keep(inputs)
    assert bench_reconcile.worker_duckdb_night(inputs)["counts"] == files["counts"]
    assert bench_reconcile.worker_baseline_night(inputs)["counts"] == files["counts"]
    # --deep with result.json as the documents say: the items whose ETag went stale also name
    # another source than their result.json's.
    deep = bench_reconcile.worker_nightly_deep(inputs)["counts"]
    assert deep == {**files["counts"], Code.RESULT_SOURCE_MISMATCH: files["counts"][Code.STALE_RESULT]}
    assert previous_night["counts"] != files["counts"]  # the night changed the table (new, changed, deleted items)
    assert (tmp_path / "state1" / "table-state.json").is_file()

    planted = DOCS // bench_reconcile.EVERY
    assert live["counts"] == files["counts"]
    deep_only = {Code.SUMMARY_MISMATCH, Code.RESULT_SOURCE_MISMATCH, Code.RESULT_UNREADABLE}  # the benchmark is shallow
    not_planted = {Code.DELETED_RAW_EXISTS}  # its state has no tombstones (the figures were measured without)
    not_planted |= LIVE_ONLY  # nor held, hard-deleted or retention-tagged documents
    # The change log's are found apart (--audit-log), the inventories' freshness by the nightly run alone.
    engines = {c.value for c in Code if c not in AUDIT_CODES | INVENTORY_CODES}
    assert {code for code, n in live["counts"].items() if n} == engines - deep_only - not_planted
    assert all(n == planted for n in live["counts"].values() if n)
    assert live["objects"] == 2 * DOCS - 2 * planted + planted  # raw and results, less the missing, plus strays
    assert live["ceilingSeconds"] > 0 and live["seconds"] > 0
