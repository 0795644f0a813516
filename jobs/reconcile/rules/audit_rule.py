"""--audit-log: whether the change log is complete (docs/audit.md, "The log is provably complete").

The table's items and the log's own records name every version of a document that must have a
record (`jobs.audit.sql.completeness`: the item's current version, and each record's old
version); a required version with no record is an AUDIT_GAP, an odd record an AUDIT_ANOMALY, and
every object of records Firehose could not convert an AUDIT_UNDELIVERED. The log is read from the
audit bucket into DuckDB (the days from `window` back, or all of it) beside the items the run
read, and the same SQL Athena would run over the Glue table answers. Copies of one delivered
record count once; versions written within the grace period (still in Firehose's buffer) or
before `audit_log_since` (before the stack had its log) are not required.
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from jobs.audit import sql
from jobs.audit.engines import DuckAudit
from jobs.audit.log import ChangeLog
from jobs.contract import layout
from jobs.reconcile.rules.findings import Code, widen
from jobs.reconcile.rules.frames import empty

if TYPE_CHECKING:
    from jobs.settings import JobSettings
    from jobs.store.s3 import Buckets

# The item columns the rule reads (ITEMS_SCHEMA's names), as the SQL names them.
ITEM_COLUMNS = {
    "userId": "userid",
    "documentId": "documentid",
    "version": "version",
    "createdAt": "createdat",
    "updatedAt": "updatedat",
}


def audit_findings(
    buckets: Buckets,
    settings: JobSettings,
    items: pl.DataFrame,
    as_of: datetime,
    grace: timedelta,
    window: timedelta | None,
) -> pl.DataFrame:
    """The rule's wide rows (findings.WIDE_SCHEMA) for the table `items` as of `as_of`."""
    log = ChangeLog(buckets, settings.audit.audit_bucket)
    start = as_of - window if window is not None else None
    days = (start.date(), layout.utc_now().date()) if start is not None else None
    settled = layout.format_ts(as_of - grace)
    since = layout.format_ts(settings.audit.audit_log_since) if settings.audit.audit_log_since else None
    text = sql.completeness(DuckAudit.relation, "items", settled, since, layout.format_ts(start) if start else None)
    with tempfile.TemporaryDirectory(prefix="docuflow-audit-rule-") as tmp:
        engine = DuckAudit(log.stage(Path(tmp), days))
        try:
            engine.register("items", items.select(list(ITEM_COLUMNS)).rename(ITEM_COLUMNS).to_arrow())
            found = engine.frame(text)
        finally:
            engine.con.close()
    return pl.concat([widen(found), widen(_undelivered(buckets, log))], how="vertical")


def _undelivered(buckets: Buckets, log: ChangeLog) -> pl.DataFrame:
    """One row per object of conversion failures: its key and how many records it holds."""
    rows = [
        {
            "code": Code.AUDIT_UNDELIVERED.value,
            "bucket": log.bucket,
            "key": obj.key,
            "ev_count": buckets.get_bytes(log.bucket, obj.key).count(b"\n"),
        }
        for obj in log.failures()
    ]
    return (
        pl.DataFrame(rows, schema={"code": pl.String, "bucket": pl.String, "key": pl.String, "ev_count": pl.Int64})
        if rows
        else empty({"code": pl.String()})
    )
