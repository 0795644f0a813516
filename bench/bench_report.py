"""The reconcile report of a bad night: 100,000 findings (of several codes, over 5,000 users, 90,000
carried from the night before, 10,000 resolved), rendered as report.ledger, report.html and
report.pdf without S3. Prints each step's wall time and each file's size; writes
bench/results/report.json. The page must stay small whatever the night: it lists the top
findings and users, the full list is in the data files.

    python -m bench.bench_report [--findings 100000]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import polars as pl

from bench.common import table, write_result
from jobs.contract import layout
from jobs.reconcile.chain import ledger as ledgers
from jobs.reconcile.report.view import render_html, render_pdf
from jobs.reconcile.report.written import ReconcileSummary, findings_csv, findings_parquet
from jobs.reconcile.rules.findings import FINDINGS_SCHEMA, SEVERITY, Code, counts

T = TypeVar("T")
NOW = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)
CODES = (Code.MISSING_RESULT, Code.UNPROCESSED_RAW, Code.STALE_RESULT, Code.BAD_KEY, Code.INDEX_DRIFT)


def night(n: int, offset: int = 0) -> pl.DataFrame:
    rows = []
    for i in range(offset, offset + n):
        code = CODES[i % len(CODES)]
        user, doc = f"user-{i % 5000:05d}", f"doc-{i:07d}"
        evidence = {"status": "PROCESSED", "resultS3Uri": f"s3://p/{layout.result_key(user, doc)}", "version": 3}
        key = f"raw/{user}/{doc}/x.xml"
        rows.append((code.value, SEVERITY[code].value, user, doc, "b", key, None, None, json.dumps(evidence)))
    return pl.DataFrame(rows, schema=FINDINGS_SCHEMA, orient="row").sort("code", "userId", "documentId")


def summary(findings: pl.DataFrame, day: int) -> ReconcileSummary:
    per = {s: findings.filter(pl.col("severity") == s).height for s in ("warning", "error")}
    return ReconcileSummary(
        runId=f"run-{day:02d}",
        startedAt=NOW - timedelta(days=30 - day),
        finishedAt=NOW,
        source="files",
        options={"grace": 900, "stuck_after": 21600, "nightly": True, "source": "files"},
        inputs={"table": "state", "raw": "inv", "processed": "inv"},
        snapshotTimes={"table": NOW, "raw": NOW, "processed": NOW},
        asOf=NOW,
        itemCount=4_000_000,
        rawObjectCount=4_000_000,
        processedObjectCount=4_000_000,
        counts=counts(findings),
        severities=per,
        totalFindings=findings.height,
        reportPrefix="reconciliation/x/",
    )


def timed(step: str, times: dict[str, float], fn: Callable[..., T], *args: object) -> T:
    clock = time.perf_counter()
    out = fn(*args)
    times[step] = round(time.perf_counter() - clock, 3)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.bench_report")
    p.add_argument("--findings", type=int, default=100_000)
    n = p.parse_args(argv).findings
    before, tonight = night(n, offset=n // 10), night(n)  # 90 % carried, 10 % new, 10 % resolved
    previous = ledgers.carry(ledgers.with_ids(before), None, {}, NOW - timedelta(days=1), [])
    history = [summary(tonight.head(n * d // 30), d) for d in range(1, 30)]
    s = summary(tonight, 30)
    times: dict[str, float] = {}
    identified = timed("finding ids", times, ledgers.with_ids, tonight)
    ledger = timed("ledger carried", times, ledgers.carry, identified, previous, {}, NOW, [])
    page = timed("report.html", times, render_html, s, identified, ledger, history)
    pdf = timed("report.pdf", times, render_pdf, page)
    sizes = {
        "findings.csv": len(findings_csv(identified, ledger)),
        "findings.parquet": len(findings_parquet(tonight)),
        "ledger.parquet": len(ledgers.ledger_parquet(ledger)),
        "report.html": len(page),
        "report.pdf": len(pdf),
    }
    states = dict(ledger.group_by("state").len().iter_rows())
    print(table(["step", "wall s"], [[k, v] for k, v in times.items()]))
    print(table(["file", "bytes"], [[k, f"{v:,}"] for k, v in sizes.items()]))
    print(f"ledger states: {states}")
    write_result("report", {"findings": n, "seconds": times, "bytes": sizes, "states": states})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
