"""The audit report of one reconcile run, written once under layout.reconciliation_prefix.

Files: findings.parquet (what was found: the same inputs give byte-identical files),
findings.csv (the same findings for a spreadsheet, each with its id, state, first-seen date,
nights open and acknowledgement from the ledger, then the ledger's findings tonight did not check,
`unchecked`, and those it resolved, `resolved`), ledger.parquet (each finding's life: id,
first seen, nights open, acknowledged, resolved, unchecked; `ledger`), report.html and
report.pdf (`report_view`) and, last, summary.json (run metadata, the scope, input snapshot
times, counts per finding, what changed since the previous report, repairs, sha256 of the
other files, the provenance and the previous summary's key and sha256: a chain), then
summary.sig (its KMS signature, `provenance`) and, last, summary.json itself, so its presence
means the report is complete. Every put is write-once (If-None-Match), so a report can
never be replaced.
"""

from __future__ import annotations

import hashlib
import io
import logging
from datetime import datetime
from typing import TYPE_CHECKING

import polars as pl
from pydantic import ValidationError

from jobs.contract import layout
from jobs.reconcile.chain import ledger as ledgers
from jobs.reconcile.chain.coverage import Coverage
from jobs.reconcile.report import provenance
from jobs.reconcile.report.notice import announce
from jobs.reconcile.report.spreadsheet_csv import spreadsheet_csv
from jobs.reconcile.report.view import render_html, render_pdf
from jobs.reconcile.summary import ReconcileSummary, RepairAction

if TYPE_CHECKING:
    from jobs.settings import JobSettings
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

__all__ = ["SUMMARY_FILE", "ReconcileSummary", "RepairAction", "load_history", "report_prefix", "write_report"]

SUMMARY_FILE = "summary.json"
HISTORY_RUNS = 30


def report_prefix(summary_started: datetime, run_id: str) -> str:
    return layout.reconciliation_prefix(f"{summary_started:%Y-%m-%d}", run_id)


def findings_parquet(findings: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    findings.write_parquet(buffer, compression="zstd", statistics=False)
    return buffer.getvalue()


# findings.csv's columns from the ledger, after the finding id: what an auditor sorts and filters by.
CSV_LIFE = (
    "state",
    "firstSeen",
    "nightsOpen",
    "acknowledgedBy",
    "acknowledgedReason",
    "acknowledgedUntil",
    "resolution",
)
# The ledger's rows not among tonight's findings that the CSV lists too: still open but not looked
# for tonight, and closed tonight. Without them a night that judged nothing shows no rows while
# every open finding is still open.
_CSV_CARRIED = (ledgers.State.UNCHECKED.value, ledgers.State.RESOLVED.value)


def findings_csv(identified: pl.DataFrame, ledger: pl.DataFrame) -> bytes:
    """findings.csv: tonight's findings (`ledger.with_ids`), each with its id, state, first-seen
    date, nights open and acknowledgement from tonight's ledger, then the findings' own columns;
    after them the ledger's findings carried `unchecked` and those `resolved` tonight (no
    evidence: they were not found tonight). Keys and ids come from outside, so a cell that would
    run as a formula is escaped.
    """
    life = ledger.select("findingId", *CSV_LIFE).unique("findingId", keep="first")
    rows = identified.join(life, on="findingId", how="left", maintain_order="left")
    others = ledger.filter(
        pl.col("state").is_in(_CSV_CARRIED) & ~pl.col("findingId").is_in(identified.get_column("findingId").implode())
    )
    carried = others.select(
        pl.col(c) if c in others.columns else pl.lit(None, identified.schema[c]).alias(c) for c in rows.columns
    )
    rows = pl.concat([rows, carried.cast(rows.schema)])
    first = ["findingId", *CSV_LIFE]
    rows = rows.with_columns(pl.col("firstSeen").dt.date(), pl.col("acknowledgedUntil").dt.date())
    return spreadsheet_csv(rows.select(*first, *(c for c in identified.columns if c not in first)))


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


# --- writing ---------------------------------------------------------------------------------------
def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def summary_key(report_prefix: str) -> str:
    return report_prefix + SUMMARY_FILE


def _signed(buckets: Buckets, bucket: str, summary: ReconcileSummary, settings: JobSettings) -> bytes:
    """summary.json's bytes, its signature put first when the stack names a signing key."""
    body = summary.model_dump_json(indent=2).encode()
    key_id = settings.run.report_signing_key
    if key_id:
        from jobs.observability import CallMetrics
        from jobs.store.kms import Signatures, kms_client

        signature = provenance.sign(Signatures(kms_client(settings), CallMetrics()), key_id, body, layout.utc_now())
        buckets.put_once(
            bucket,
            summary.reportPrefix + provenance.SIGNATURE_FILE,
            signature.model_dump_json(indent=2).encode(),
            "application/json",
        )
    return body


def write_report(
    buckets: Buckets,
    settings: JobSettings,
    summary: ReconcileSummary,
    findings: pl.DataFrame,
    history: list[ReconcileSummary],
) -> ReconcileSummary:
    """Put the files once; raises S3ObjectExistsError if any key is taken.

    The ledger carries each finding's life from the previous report's ledger (`history[-1]`, the
    newest earlier summary) and the acknowledgements recorded since; findings.csv carries each
    finding's id and life from it.
    """
    prefix, bucket = summary.reportPrefix, settings.store.reports_bucket
    previous = history[-1] if history else None
    identified = ledgers.with_ids(findings)
    ledger = ledgers.carry(
        identified,
        ledgers.read_ledger(buckets, bucket, previous.reportPrefix) if previous else None,
        ledgers.Acknowledgements(buckets, bucket).records(),
        summary.startedAt,
        previous.repairs if previous else [],
        Coverage.of(summary),  # what tonight judged: the rest is carried, not resolved
        previous.scope.get("table") if previous else None,
    )
    changes = {state.value: 0 for state in ledgers.State} | dict(ledger.group_by("state").len().iter_rows())
    chain: dict[str, object] = {}
    if previous is not None:
        before = summary_key(previous.reportPrefix)
        chain = {"previousSummary": before, "previousSummarySha256": sha256(buckets.get_bytes(bucket, before))}
    chain["provenance"] = provenance.provenance(settings)
    summary = summary.model_copy(update={"changes": {k: int(v) for k, v in changes.items()}, **chain})
    files = {
        "findings.parquet": (findings_parquet(findings), "application/vnd.apache.parquet"),
        "findings.csv": (findings_csv(identified, ledger), "text/csv"),
        ledgers.LEDGER_FILE: (ledgers.ledger_parquet(ledger), "application/vnd.apache.parquet"),
    }
    page = render_html(summary, identified, ledger, history)
    files["report.html"] = (page, "text/html; charset=utf-8")
    files["report.pdf"] = (render_pdf(page), "application/pdf")
    final = summary.model_copy(update={"files": {name: sha256(body) for name, (body, _) in files.items()}})
    for name, (body, content_type) in files.items():
        buckets.put_once(bucket, prefix + name, body, content_type)
    buckets.put_once(bucket, summary_key(prefix), _signed(buckets, bucket, final, settings), "application/json")
    logger.info("report written", extra={"bucket": bucket, "prefix": prefix})
    announce(settings, final, previous)
    return final
