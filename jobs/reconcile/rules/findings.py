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

# The codes are the reports' and the metrics' contract (the audit's rule names two of them).
from jobs.contract.findings import Code as Code
from jobs.errors import InvalidKeyError
from jobs.reconcile.rules.frames import empty


@dataclass
class EngineFindings:
    """What an engine hands back: its wide findings frame (not yet rendered) and what it read."""

    wide: pl.DataFrame
    taken_at: dict[str, datetime] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)  # rows read per input: table, raw, processed
    stats: dict[str, object] = field(default_factory=dict)  # engine figures (bytes scanned, query ids)


# The change log's codes (--audit-log, jobs/reconcile/rules/audit_rule.py), found apart from the engines.
AUDIT_CODES = frozenset({Code.AUDIT_GAP, Code.AUDIT_ANOMALY, Code.AUDIT_UNDELIVERED})

# Found by no engine: their facts (object versions, legal holds, tags) are in no export or
# inventory the engines read, so the live polars run (all three) and the nightly polars run (the
# first two) gather them apart (jobs.reconcile.rules.lifecycle says why).
LIVE_ONLY = frozenset({Code.RETENTION_TAG_MISMATCH, Code.LEGAL_HOLD_MISSING, Code.NOT_HARD_DELETED})


# The nightly run's inventory checks (jobs.reconcile.chain.freshness), made before any engine runs.
INVENTORY_CODES = frozenset({Code.INVENTORY_MISSING, Code.INVENTORY_STALE})


class Severity(StrEnum):
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return SEVERITY_RANK[self]


SEVERITY_RANK = {Severity.WARNING: 1, Severity.ERROR: 2}


@dataclass(frozen=True)
class Definition:
    """What a code means, in one place: its severity (the rules' and the exit code's) and the
    plain words the report shows an auditor beside it (what was found, why it usually happens,
    what to do). `tests/jobs/reconcile/test_definitions.py` fails if a code lacks any of them.
    """

    severity: Severity
    meaning: str
    cause: str
    remedy: str


_REPAIRED = "`reconcile --repair` (the repair task) fixes it with a conditional write"
_PERSON = "repair does not touch it: a person decides"

# Errors: the table or the buckets lie to a reader (dashboard shows a document that cannot be
# opened, or hides one that exists). Warnings: the next ingest run settles it, or it is clutter.
DEFINITIONS: dict[Code, Definition] = {
    Code.ORPHAN_RESULT: Definition(
        Severity.ERROR,
        "A result.json exists in the processed bucket but no document item names it.",
        "The item was deleted (by hand, a bad role, or a restore to an older point) after its result was written.",
        f"{_REPAIRED}: the item is rebuilt from result.json while its raw upload is still there.",
    ),
    Code.MISSING_RESULT: Definition(
        Severity.ERROR,
        "A finished document's item points at a result.json that is not in the processed bucket.",
        "The result object was deleted or never written (a crash between the two writes, a lifecycle rule).",
        f"{_REPAIRED}: the document is marked for reprocessing and queued for the next drain.",
    ),
    Code.UNPROCESSED_RAW: Definition(
        Severity.WARNING,
        "An upload in the raw bucket has no document item: the ingest never saw it.",
        "Its S3 arrival notification was lost, or the upload predates the arrival queue.",
        f"{_REPAIRED}: the upload is sent to the arrival queue again and the next drain processes it.",
    ),
    Code.MISSING_RAW: Definition(
        Severity.ERROR,
        "A document item names a raw upload that is no longer in the raw bucket.",
        "The upload was deleted outside the owner's delete (by hand, a lifecycle rule, a bad role).",
        f"{_REPAIRED}: a finished document becomes a DELETED tombstone; check who deleted the object.",
    ),
    Code.STALE_RESULT: Definition(
        Severity.WARNING,
        "The raw upload changed (new ETag) since the document's result was extracted.",
        "The user uploaded the file again and the arrival of the new version is still pending or was lost.",
        f"The next drain normally settles it; if it persists, re-queue the upload ({_PERSON}).",
    ),
    Code.STUCK_PROCESSING: Definition(
        Severity.ERROR,
        "A document has been PROCESSING with an expired lease for longer than the stuck threshold.",
        "The ingest task holding it died (out of memory, killed, a deploy) before finishing.",
        f"{_REPAIRED}: the lease is released and the document marked for reprocessing.",
    ),
    Code.INDEX_DRIFT: Definition(
        Severity.ERROR,
        "A document's status-index keys (GSI1PK/GSI1SK) disagree with its status and creation time.",
        "An item was written without the contract's model (a hand edit, an old writer).",
        f"{_REPAIRED}: the item is rewritten through the model, which derives the index keys.",
    ),
    Code.KEY_MISMATCH: Definition(
        Severity.ERROR,
        "A document's keys, ids or S3 URIs (or its result.json's ids) name different documents.",
        "A hand edit, a copy between users, or a writer bug mixed two documents' identities.",
        f"Investigate the document's history (`python -m jobs audit history`); {_PERSON}.",
    ),
    Code.SUMMARY_MISMATCH: Definition(
        Severity.WARNING,
        "The item's summary fields (status, vendor, date, total) differ from its result.json (--deep).",
        "A correction or a reprocessing updated one copy and not the other.",
        f"Reprocess the document or apply the correction again through the review desk; {_PERSON}.",
    ),
    Code.BAD_KEY: Definition(
        Severity.WARNING,
        "An object in a data bucket has a key outside the storage layout.",
        "Something other than the pipeline wrote to the bucket (a manual upload, a test, a tool).",
        f"Find the writer, then move or delete the object; {_PERSON}.",
    ),
    Code.RESULT_SOURCE_MISMATCH: Definition(
        Severity.ERROR,
        "The result.json was extracted from a different upload than the one the item names (--deep).",
        "A stale writer finished after a newer upload had been claimed.",
        f"{_REPAIRED}: the document is marked for reprocessing.",
    ),
    Code.RESULT_UNREADABLE: Definition(
        Severity.ERROR,
        "A result.json cannot be read as a result document (--deep).",
        "The object is damaged, was written by an incompatible version, or was deleted after the listing.",
        f"Reprocess the document; if the object is damaged, find its writer; {_PERSON}.",
    ),
    Code.ORPHAN_MARKER: Definition(
        Severity.WARNING,
        "A duplicate marker names a document that does not hold it.",
        "The document was deleted or changed identity and its marker was not given up.",
        "Clutter only: the next upload of that identity takes the marker over. No action needed.",
    ),
    Code.MISSING_MARKER: Definition(
        Severity.ERROR,
        "A finished document does not have the duplicate marker its identity requires.",
        "The marker was deleted, or the finish that should have written it was interrupted.",
        f"Reprocess the document so its finish writes the marker; {_PERSON}.",
    ),
    Code.DELETED_RAW_EXISTS: Definition(
        Severity.WARNING,
        "A DELETED document's raw upload is present again.",
        "The same file was uploaded again or restored: a new life of the document.",
        f"The next drain claims it; if its arrival was lost, {_REPAIRED} by re-queuing the upload.",
    ),
    Code.AUDIT_GAP: Definition(
        Severity.ERROR,
        "A version of a document has no record in the change log.",
        "A batch of change records was lost, or their delivery failed.",
        "Check the change log's delivery (Firehose errors, the pipe); the history of those versions is lost.",
    ),
    Code.AUDIT_ANOMALY: Definition(
        Severity.WARNING,
        "A change-log record is not an ordinary change of a document item.",
        "A hand edit, a restore, or a writer outside the pipeline changed the table.",
        "Review the record (`python -m jobs audit actor`) and confirm the change was intended.",
    ),
    Code.AUDIT_UNDELIVERED: Definition(
        Severity.ERROR,
        "Change-log records could not be converted and were kept under errors/.",
        "A record did not match the change log's schema (a new attribute, a malformed item).",
        "Inspect the kept records and replay them once the schema is fixed.",
    ),
    Code.RETENTION_TAG_MISMATCH: Definition(
        Severity.ERROR,
        "An object's retention tag differs from its document's retention class.",
        "The class changed after the object was tagged, or the tag write failed.",
        "Tag the object with the document's class; until then it would expire on the wrong schedule.",
    ),
    Code.LEGAL_HOLD_MISSING: Definition(
        Severity.ERROR,
        "A version of a document under legal hold has no Object Lock hold: it could be deleted.",
        "The hold was set before the version was written, or a hold call failed.",
        "Set the legal hold again (`python -m jobs documents hold`), which locks every version.",
    ),
    Code.NOT_HARD_DELETED: Definition(
        Severity.ERROR,
        "A deleted document outlived its grace period: its versions are still stored.",
        "The hard delete did not run or failed, or a lifecycle rule is missing.",
        "Run the lifecycle's hard delete; check the bucket's lifecycle configuration.",
    ),
    Code.INVENTORY_MISSING: Definition(
        Severity.ERROR,
        "No S3 Inventory report of a data bucket was found, past the wait for a first delivery: "
        "the night judged nothing.",
        "The bucket's inventory configuration was removed or its destination changed, or deliveries stopped "
        "and their reports expired.",
        "Check the bucket's inventory configuration (`aws s3api list-bucket-inventory-configurations`) and "
        "the destination's bucket policy; the next night after a delivery judges again.",
    ),
    Code.INVENTORY_STALE: Definition(
        Severity.ERROR,
        "A data bucket's newest S3 Inventory report is older than DOCUFLOW_INVENTORY_MAX_AGE_HOURS: "
        "the night judged nothing against it.",
        "S3 Inventory stopped delivering (its configuration disabled or removed, the destination bucket's "
        "policy or encryption refusing the writes).",
        "Check the configuration and the destination as for INVENTORY_MISSING; judging waits for a fresh report.",
    ),
}
SEVERITY: dict[Code, Severity] = {code: d.severity for code, d in DEFINITIONS.items()}

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
    Code.INVENTORY_MISSING: (("waitingSince", "ev_last_modified"), ("hours", "ev_count")),
    Code.INVENTORY_STALE: (("deliveredAt", "ev_last_modified"), ("hours", "ev_count")),
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
