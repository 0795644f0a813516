"""What a reconcile run finds: codes, severities and the one findings frame every engine yields.

Every engine (polars here, the Trino SQL of `sql` on DuckDB or Athena) returns the same *wide*
frame: one row per finding with the identity columns and one typed column per evidence field
(`WIDE_SCHEMA`, snake case because Athena lower-cases result columns). `render` turns it into
the report's findings frame: severity from the code, the evidence fields of each code (`EVIDENCE`)
encoded as one JSON object in a fixed order, rows sorted. Rendering once, after the engines, is
what makes an auditor unable to tell the engines apart from the findings files. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

import polars as pl

from jobs.contract import layout
from jobs.errors import InvalidKeyError
from jobs.reconcile.frames import empty


@dataclass
class EngineFindings:
    """What an engine hands back: its wide findings frame (not yet rendered) and what it read."""

    wide: pl.DataFrame
    taken_at: dict[str, datetime] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)  # rows read per input: table, raw, processed
    stats: dict[str, object] = field(default_factory=dict)  # engine figures (bytes scanned, query ids)


class Code(StrEnum):
    ORPHAN_RESULT = "ORPHAN_RESULT"
    MISSING_RESULT = "MISSING_RESULT"
    UNPROCESSED_RAW = "UNPROCESSED_RAW"
    MISSING_RAW = "MISSING_RAW"
    STALE_RESULT = "STALE_RESULT"
    STUCK_PROCESSING = "STUCK_PROCESSING"
    INDEX_DRIFT = "INDEX_DRIFT"
    KEY_MISMATCH = "KEY_MISMATCH"
    SUMMARY_MISMATCH = "SUMMARY_MISMATCH"
    BAD_KEY = "BAD_KEY"
    RESULT_SOURCE_MISMATCH = "RESULT_SOURCE_MISMATCH"
    RESULT_UNREADABLE = "RESULT_UNREADABLE"
    ORPHAN_MARKER = "ORPHAN_MARKER"
    MISSING_MARKER = "MISSING_MARKER"
    DELETED_RAW_EXISTS = "DELETED_RAW_EXISTS"
    # --audit-log: the change log (docs/audit.md) against the table and itself.
    AUDIT_GAP = "AUDIT_GAP"
    AUDIT_ANOMALY = "AUDIT_ANOMALY"
    AUDIT_UNDELIVERED = "AUDIT_UNDELIVERED"
    # A document's life, judged on object versions (jobs.reconcile.lifecycle; polars runs that read S3).
    RETENTION_TAG_MISMATCH = "RETENTION_TAG_MISMATCH"
    LEGAL_HOLD_MISSING = "LEGAL_HOLD_MISSING"
    NOT_HARD_DELETED = "NOT_HARD_DELETED"


# The change log's codes (--audit-log, jobs/reconcile/audit_rule.py), found apart from the engines.
AUDIT_CODES = frozenset({Code.AUDIT_GAP, Code.AUDIT_ANOMALY, Code.AUDIT_UNDELIVERED})

# Found by no engine: their facts (object versions, legal holds, tags) are in no export or
# inventory the engines read, so the live polars run (all three) and the nightly polars run (the
# first two) gather them apart (jobs.reconcile.lifecycle says why).
LIVE_ONLY = frozenset({Code.RETENTION_TAG_MISMATCH, Code.LEGAL_HOLD_MISSING, Code.NOT_HARD_DELETED})


class Severity(StrEnum):
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return SEVERITY_RANK[self]


SEVERITY_RANK = {Severity.WARNING: 1, Severity.ERROR: 2}

# Errors: the table or the buckets lie to a reader (dashboard shows a document that cannot be
# opened, or hides one that exists). Warnings: the next ingest run settles it, or it is clutter.
SEVERITY: dict[Code, Severity] = {
    Code.ORPHAN_RESULT: Severity.ERROR,
    Code.MISSING_RESULT: Severity.ERROR,
    Code.UNPROCESSED_RAW: Severity.WARNING,
    Code.MISSING_RAW: Severity.ERROR,
    Code.STALE_RESULT: Severity.WARNING,
    Code.STUCK_PROCESSING: Severity.ERROR,
    Code.INDEX_DRIFT: Severity.ERROR,
    Code.KEY_MISMATCH: Severity.ERROR,
    Code.SUMMARY_MISMATCH: Severity.WARNING,
    Code.BAD_KEY: Severity.WARNING,
    # --deep: result.json was extracted from another upload than the item's (a stale writer's
    # bytes), or cannot be read as a ResultDocument (damaged, or deleted since the listing).
    Code.RESULT_SOURCE_MISMATCH: Severity.ERROR,
    Code.RESULT_UNREADABLE: Severity.ERROR,
    # Duplicate markers (jobs.contract.duplicates): one a document does not hold is taken over by
    # the next upload of its identity (clutter); a document whose marker is missing would let its
    # duplicates through unflagged.
    Code.ORPHAN_MARKER: Severity.WARNING,
    Code.MISSING_MARKER: Severity.ERROR,
    # A DELETED tombstone whose raw object is there again (the same file uploaded again, or
    # restored): a new life of the document that the next drain claims, unless its arrival
    # was lost (repair re-queues it, as for UNPROCESSED_RAW).
    Code.DELETED_RAW_EXISTS: Severity.WARNING,
    # A version of a document with no record in the change log (a lost batch, a delivery that
    # failed); records Firehose could not convert (kept under errors/, not in the log's table);
    # records that are not an ordinary change of a document item (kept, reported).
    Code.AUDIT_GAP: Severity.ERROR,
    Code.AUDIT_UNDELIVERED: Severity.ERROR,
    Code.AUDIT_ANOMALY: Severity.WARNING,
    # The object would expire with another class than its item; a held document's version could
    # be deleted; a deleted document outlived its grace.
    Code.RETENTION_TAG_MISMATCH: Severity.ERROR,
    Code.LEGAL_HOLD_MISSING: Severity.ERROR,
    Code.NOT_HARD_DELETED: Severity.ERROR,
}

# --- the wide frame every engine returns -------------------------------------------------------
IDENTITY_COLUMNS: dict[str, pl.DataType] = {
    "code": pl.String(),
    "user_id": pl.String(),
    "document_id": pl.String(),
    "bucket": pl.String(),
    "key": pl.String(),
    "pk": pl.String(),
    "sk": pl.String(),
}
_S, _I = pl.String(), pl.Int64()
EVIDENCE_COLUMNS: dict[str, pl.DataType] = {
    "ev_etag": _S,
    "ev_size": _I,
    "ev_last_modified": pl.Datetime("ms", "UTC"),
    "ev_key_kind": _S,  # "raw" or "result": which layout parser explains a BAD_KEY
    "ev_raw_s3_uri": _S,
    "ev_result_s3_uri": _S,
    "ev_status": _S,
    "ev_created_at": _S,
    "ev_version": _I,
    "ev_attempts": _I,
    "ev_item_etag": _S,
    "ev_object_etag": _S,
    "ev_lease_owner": _S,
    "ev_lease_expires_at": _S,
    "ev_gsi1pk": _S,
    "ev_expected_gsi1pk": _S,
    "ev_gsi1sk": _S,
    "ev_problems": _S,
    "ev_result_user_id": _S,
    "ev_result_document_id": _S,
    "ev_fields": _S,
    "ev_item_status": _S,
    "ev_item_vendor_name": _S,
    "ev_item_invoice_date": _S,
    "ev_item_total_amount": _S,
    "ev_result_status": _S,
    "ev_result_vendor_name": _S,
    "ev_result_invoice_date": _S,
    "ev_result_total_amount": _S,
    "ev_result_source_uri": _S,
    "ev_result_etag": _S,
    "ev_error": _S,
    "ev_marker_kind": _S,
    "ev_marker_digest": _S,
    "ev_missing": _S,  # versions, comma-separated
    "ev_event_id": _S,
    "ev_count": _I,
    "ev_retention_class": _S,
    "ev_tag": _S,
    "ev_legal_hold_at": _S,
    "ev_version_id": _S,
    "ev_hard_delete_at": _S,
    "ev_versions": _I,
}
WIDE_SCHEMA: dict[str, pl.DataType] = {**IDENTITY_COLUMNS, **EVIDENCE_COLUMNS}

# The summary fields --deep compares (item and result.json field names), and the snake-case
# name each has in the evidence columns (`ev_item_…`, `ev_result_…`).
SUMMARY_FIELDS = ("status", "vendorName", "invoiceDate", "totalAmount")
SUMMARY_COLUMNS = {
    "status": "status",
    "vendorName": "vendor_name",
    "invoiceDate": "invoice_date",
    "totalAmount": "total_amount",
}

# An evidence field: (JSON name, wide column) or (JSON name, nested fields).
EvidenceField = tuple[str, "str | tuple[EvidenceField, ...]"]


def _nested(side: str) -> tuple[EvidenceField, ...]:
    return tuple((name, f"ev_{side}_{SUMMARY_COLUMNS[name]}") for name in SUMMARY_FIELDS)


_OBJECT = (("etag", "ev_etag"), ("size", "ev_size"), ("lastModified", "ev_last_modified"))
# The evidence of each code, fields in the order they are written.
EVIDENCE: dict[Code, tuple[EvidenceField, ...]] = {
    Code.BAD_KEY: (("reason", "ev_key_kind"), ("size", "ev_size"), ("lastModified", "ev_last_modified")),
    Code.UNPROCESSED_RAW: _OBJECT,
    Code.ORPHAN_RESULT: _OBJECT,
    Code.MISSING_RAW: (
        ("rawS3Uri", "ev_raw_s3_uri"),
        ("status", "ev_status"),
        ("createdAt", "ev_created_at"),
        ("version", "ev_version"),
    ),
    Code.STALE_RESULT: (
        ("itemEtag", "ev_item_etag"),
        ("objectEtag", "ev_object_etag"),
        ("status", "ev_status"),
        ("version", "ev_version"),
    ),
    Code.MISSING_RESULT: (("status", "ev_status"), ("resultS3Uri", "ev_result_s3_uri"), ("version", "ev_version")),
    Code.STUCK_PROCESSING: (
        ("leaseOwner", "ev_lease_owner"),
        ("leaseExpiresAt", "ev_lease_expires_at"),
        ("attempts", "ev_attempts"),
        ("version", "ev_version"),
    ),
    Code.INDEX_DRIFT: (
        ("GSI1PK", "ev_gsi1pk"),
        ("expectedGSI1PK", "ev_expected_gsi1pk"),
        ("GSI1SK", "ev_gsi1sk"),
        ("createdAt", "ev_created_at"),
        ("version", "ev_version"),
    ),
    # Two shapes: an item whose keys or URIs disagree, or (--deep) a result.json whose ids do.
    Code.KEY_MISMATCH: (
        ("problems", "ev_problems"),
        ("rawS3Uri", "ev_raw_s3_uri"),
        ("resultS3Uri", "ev_result_s3_uri"),
        ("resultUserId", "ev_result_user_id"),
        ("resultDocumentId", "ev_result_document_id"),
    ),
    Code.SUMMARY_MISMATCH: (("fields", "ev_fields"), ("item", _nested("item")), ("result", _nested("result"))),
    Code.RESULT_SOURCE_MISMATCH: (
        ("rawS3Uri", "ev_raw_s3_uri"),
        ("sourceUri", "ev_result_source_uri"),
        ("itemEtag", "ev_item_etag"),
        ("resultEtag", "ev_result_etag"),
        ("status", "ev_status"),
        ("version", "ev_version"),
    ),
    Code.RESULT_UNREADABLE: (("error", "ev_error"),),
    Code.ORPHAN_MARKER: (("kind", "ev_marker_kind"), ("digest", "ev_marker_digest"), ("createdAt", "ev_created_at")),
    Code.MISSING_MARKER: (
        ("kind", "ev_marker_kind"),
        ("digest", "ev_marker_digest"),
        ("status", "ev_status"),
        ("version", "ev_version"),
    ),
    Code.DELETED_RAW_EXISTS: (*_OBJECT, ("createdAt", "ev_created_at"), ("version", "ev_version")),
    Code.AUDIT_GAP: (("createdAt", "ev_created_at"), ("missingVersions", "ev_missing"), ("version", "ev_version")),
    Code.AUDIT_ANOMALY: (
        ("eventId", "ev_event_id"),
        ("anomaly", "ev_problems"),
        ("createdAt", "ev_created_at"),
        ("version", "ev_version"),
    ),
    Code.AUDIT_UNDELIVERED: (("records", "ev_count"),),
    Code.RETENTION_TAG_MISMATCH: (("retentionClass", "ev_retention_class"), ("tag", "ev_tag")),
    Code.LEGAL_HOLD_MISSING: (("legalHoldAt", "ev_legal_hold_at"), ("versionId", "ev_version_id")),
    Code.NOT_HARD_DELETED: (("hardDeleteAt", "ev_hard_delete_at"), ("versions", "ev_versions")),
}

FINDINGS_SCHEMA: dict[str, pl.DataType] = {
    "code": pl.String(),
    "severity": pl.String(),
    "userId": pl.String(),
    "documentId": pl.String(),
    "bucket": pl.String(),
    "key": pl.String(),
    "pk": pl.String(),
    "sk": pl.String(),
    "evidence": pl.String(),  # a JSON object, fields in a fixed order
}
SORT_COLUMNS = ["code", "userId", "documentId", "bucket", "key", "pk", "sk", "evidence"]
# Optional evidence fields (the two shapes of KEY_MISMATCH): left out of the JSON when null.
_OPTIONAL = frozenset({"rawS3Uri", "resultS3Uri", "resultUserId", "resultDocumentId"})


def widen(frame: pl.DataFrame) -> pl.DataFrame:
    """Any engine's rows as WIDE_SCHEMA: missing columns null, names case-folded (Athena)."""
    frame = frame.rename({c: c.lower() for c in frame.columns})
    return frame.select(
        [
            pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype).alias(name)
            for name, dtype in WIDE_SCHEMA.items()
        ]
    )


def _iso(expr: pl.Expr) -> pl.Expr:
    """Object times in evidence as layout.format_ts writes item times (milliseconds, Z)."""
    return expr.dt.convert_time_zone("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")


def _bad_key_reason(kind: str, key: str) -> str:
    """The layout parser's own words for why `key` is outside the layout."""
    parse = layout.parse_raw_key if kind == "raw" else layout.parse_result_key
    try:
        parse(key)
    except InvalidKeyError as exc:
        return str(exc)
    return "accepted by the layout parser (the engine's key check disagrees: a bug)"


def _evidence_expr(fields: tuple[EvidenceField, ...], code: Code) -> pl.Expr:
    def value(name: str, source: str | tuple[EvidenceField, ...]) -> pl.Expr:
        if isinstance(source, tuple):
            return pl.struct([value(n, s) for n, s in source]).alias(name)
        column = pl.col(source)
        if source == "ev_last_modified":
            column = _iso(column)
        return column.alias(name)

    exprs = [value(name, source) for name, source in fields]
    return pl.struct(exprs).struct.json_encode()


def _render_code(rows: pl.DataFrame, code: Code) -> pl.DataFrame:
    fields = EVIDENCE[code]
    if code == Code.BAD_KEY:
        reasons = [_bad_key_reason(kind, key) for kind, key in rows.select("ev_key_kind", "key").iter_rows()]
        rows = rows.with_columns(pl.Series("ev_key_kind", reasons, pl.String))
    if code == Code.KEY_MISMATCH:
        # Each row has one of the two shapes: encode only the fields that shape has.
        # An item's mismatch names no object; a result.json's names the object it read.
        item_shape = rows.filter(pl.col("key").is_null())
        deep_shape = rows.filter(pl.col("key").is_not_null())
        parts = []
        for part, keep in (
            (item_shape, ("rawS3Uri", "resultS3Uri")),
            (deep_shape, ("resultUserId", "resultDocumentId")),
        ):
            chosen = tuple(f for f in fields if f[0] not in _OPTIONAL or f[0] in keep)
            parts.append(part.with_columns(_evidence_expr(chosen, code).alias("evidence")))
        rows = pl.concat(parts)
    else:
        rows = rows.with_columns(_evidence_expr(fields, code).alias("evidence"))
    return rows.select(
        pl.col("code"),
        pl.lit(SEVERITY[code].value).alias("severity"),
        pl.col("user_id").alias("userId"),
        pl.col("document_id").alias("documentId"),
        "bucket",
        "key",
        "pk",
        "sk",
        "evidence",
    )


def render(wide: pl.DataFrame) -> pl.DataFrame:
    """The report's findings frame (FINDINGS_SCHEMA, sorted) from an engine's wide rows."""
    wide = widen(wide)
    parts = [empty(FINDINGS_SCHEMA)]
    for code in Code:
        rows = wide.filter(pl.col("code") == code.value)
        if rows.height:
            parts.append(_render_code(rows, code))
    unknown = wide.filter(~pl.col("code").is_in([c.value for c in Code]))
    if unknown.height:
        raise ValueError(f"an engine returned unknown finding codes: {unknown.get_column('code').unique().to_list()}")
    return pl.concat(parts, how="vertical").sort(SORT_COLUMNS, nulls_last=True)


def counts(findings: pl.DataFrame) -> dict[str, int]:
    """Findings per code, every code present (zeros included) in a fixed order."""
    seen = dict(findings.group_by("code").len().iter_rows()) if findings.height else {}
    return {code.value: int(seen.get(code.value, 0)) for code in Code}


def worst_severity(findings: pl.DataFrame) -> Severity | None:
    present = {Severity(s) for s in findings.get_column("severity").unique().to_list()} if findings.height else set()
    return max(present, key=lambda s: s.rank) if present else None
