"""The audit report of one reconcile run, written once under layout.reconciliation_prefix.

Files: findings.parquet, findings.csv, report.html and, last, summary.json (run metadata, input
snapshot times, counts per finding, repairs, sha256 of the other files). summary.json is written
last so its presence means the report is complete. Every put is write-once (If-None-Match), so a
report can never be replaced; the same inputs give byte-identical findings files.
"""

from __future__ import annotations

import hashlib
import html
import io
import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jobs.contract import layout
from jobs.reconcile.findings import SEVERITY, Code

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

SUMMARY_FILE = "summary.json"
HISTORY_RUNS = 30
HTML_FINDINGS_SHOWN = 500
_STYLE = (
    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
)


class RepairAction(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    userId: str | None
    documentId: str | None
    action: str
    outcome: str  # applied | skipped: <why> | failed: <error>
    detail: str = ""


class ReconcileSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    runId: str
    startedAt: datetime
    finishedAt: datetime
    source: str
    engine: str = "polars"  # polars | duckdb | athena: the only place a report says which ran
    engineStats: dict[str, Any] = Field(default_factory=dict)  # e.g. Athena's bytes scanned
    options: dict[str, Any]
    inputs: dict[str, str]
    snapshotTimes: dict[str, datetime]
    asOf: datetime
    itemCount: int
    rawObjectCount: int
    processedObjectCount: int
    counts: dict[str, int]
    severities: dict[str, int]
    totalFindings: int
    repairs: list[RepairAction] = Field(default_factory=list)
    reportPrefix: str
    files: dict[str, str] = Field(default_factory=dict)  # name -> sha256


def report_prefix(summary_started: datetime, run_id: str) -> str:
    return layout.reconciliation_prefix(f"{summary_started:%Y-%m-%d}", run_id)


def findings_parquet(findings: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    findings.write_parquet(buffer, compression="zstd", statistics=False)
    return buffer.getvalue()


def findings_csv(findings: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    findings.write_csv(buffer)
    return buffer.getvalue()


# --- history -------------------------------------------------------------------------------------
def load_history(buckets: Buckets, bucket: str, limit: int = HISTORY_RUNS) -> list[ReconcileSummary]:
    """The most recent earlier summaries (keys sort by date, then run id, which starts with time)."""
    keys = [
        obj.key
        for page in buckets.list_pages(bucket, layout.RECONCILIATION_PREFIX)
        for obj in page
        if obj.key.endswith("/" + SUMMARY_FILE)
    ]
    history: list[ReconcileSummary] = []
    for key in sorted(keys)[-limit:]:
        try:
            history.append(ReconcileSummary.model_validate_json(buckets.get_bytes(bucket, key)))
        except ValidationError as exc:
            # An unreadable old summary must not stop today's audit; it is only left off the chart.
            logger.warning("skipping unreadable summary", extra={"key": key, "error": str(exc)[:200]})
    return history


# --- HTML ----------------------------------------------------------------------------------------
def _chart(history: list[ReconcileSummary]) -> str:
    """Inline SVG: one bar per run, errors stacked under warnings."""
    if len(history) < 2:
        return "<p>No earlier runs in the reports bucket yet: the chart starts with the next run.</p>"
    width, height, pad = 720, 220, 30
    bar = max(4, (width - 2 * pad) // len(history) - 4)
    top = max(1, max(s.totalFindings for s in history))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 40}" '
        'role="img" aria-label="findings per run">'
    ]
    for i, run in enumerate(history):
        x = pad + i * (bar + 4)
        errors = run.severities.get("error", 0)
        warnings = run.severities.get("warning", 0)
        h_err = round(errors / top * height)
        h_warn = round(warnings / top * height)
        label = html.escape(f"{run.runId}: {errors} errors, {warnings} warnings")
        parts.append(
            f'<rect x="{x}" y="{height - h_err}" width="{bar}" height="{h_err}" fill="#c0392b">'
            f"<title>{label}</title></rect>"
        )
        parts.append(
            f'<rect x="{x}" y="{height - h_err - h_warn}" width="{bar}" height="{h_warn}" fill="#e67e22">'
            f"<title>{label}</title></rect>"
        )
        parts.append(f'<text x="{x}" y="{height + 14}" font-size="9">{html.escape(f"{run.startedAt:%m-%d}")}</text>')
    parts.append(f'<text x="0" y="12" font-size="10">max {top}</text></svg>')
    return "".join(parts)


def render_html(summary: ReconcileSummary, findings: pl.DataFrame, history: list[ReconcileSummary]) -> bytes:
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(code)}</td><td>{esc(SEVERITY[Code(code)].value)}</td><td>{n}</td></tr>"
        for code, n in summary.counts.items()
    )
    shown = findings.head(HTML_FINDINGS_SHOWN)
    finding_rows = "".join(
        "<tr>" + "".join(f"<td>{esc('' if v is None else str(v))}</td>" for v in row) + "</tr>"
        for row in shown.iter_rows()
    )
    repairs = "".join(
        f"<tr><td>{esc(r.code)}</td><td>{esc(r.userId or '')}/{esc(r.documentId or '')}</td>"
        f"<td>{esc(r.action)}</td><td>{esc(r.outcome)}</td><td>{esc(r.detail)}</td></tr>"
        for r in summary.repairs
    )
    snapshot = "".join(
        f"<li>{esc(k)}: {esc(summary.inputs.get(k, ''))} at {v.isoformat()}</li>"
        for k, v in summary.snapshotTimes.items()
    )
    listed = (
        f"Findings (first {min(HTML_FINDINGS_SHOWN, findings.height)} of {findings.height}; "
        "all in findings.csv / findings.parquet)"
    )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>DocuFlow reconciliation {esc(summary.runId)}</title>
<style>{_STYLE}</style>
</head><body>
<h1>Reconciliation {esc(summary.runId)}</h1>
<p>Source: {esc(summary.source)}; judged as of {summary.asOf.isoformat()}; {summary.itemCount} items,
{summary.rawObjectCount} raw objects, {summary.processedObjectCount} processed objects;
{summary.totalFindings} findings.</p>
<ul>{snapshot}</ul>
<h2>Findings per category</h2>
<table><tr><th>code</th><th>severity</th><th>count</th></tr>{rows}</table>
<h2>Findings over recent runs</h2>
{_chart([*history, summary])}
<h2>Repairs ({len(summary.repairs)})</h2>
<table><tr><th>code</th><th>document</th><th>action</th><th>outcome</th><th>detail</th></tr>{repairs}</table>
<h2>{listed}</h2>
<table><tr>{"".join(f"<th>{esc(c)}</th>" for c in findings.columns)}</tr>{finding_rows}</table>
</body></html>
"""
    return page.encode()


# --- writing ---------------------------------------------------------------------------------------
def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_report(
    buckets: Buckets, bucket: str, summary: ReconcileSummary, findings: pl.DataFrame, history: list[ReconcileSummary]
) -> ReconcileSummary:
    """Put the four files once; raises S3ObjectExistsError if any key is taken."""
    prefix = summary.reportPrefix
    files = {
        "findings.parquet": (findings_parquet(findings), "application/vnd.apache.parquet"),
        "findings.csv": (findings_csv(findings), "text/csv"),
    }
    # The HTML shows the summary, so it is rendered after the data files are known.
    files["report.html"] = (render_html(summary, findings, history), "text/html; charset=utf-8")
    final = summary.model_copy(update={"files": {name: sha256(body) for name, (body, _) in files.items()}})
    for name, (body, content_type) in files.items():
        buckets.put_once(bucket, prefix + name, body, content_type)
    buckets.put_once(bucket, prefix + SUMMARY_FILE, final.model_dump_json(indent=2).encode(), "application/json")
    logger.info("report written", extra={"bucket": bucket, "prefix": prefix})
    return final
