"""The reconciliation rules: polars frames in, one findings frame out, no I/O.

Inputs are three (four with --deep) frames with the schemas below, built by `sources` from either
live reads or export/inventory files, so both paths meet here and yield the same findings. Every
key format is derived from the builders in `jobs.contract.layout` (by building a template with
placeholder ids and splitting it), so the vectorised checks cannot drift from the contract.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cache

import polars as pl

from jobs.contract import Status, layout
from jobs.errors import InvalidKeyError

# --- input and output schemas --------------------------------------------------------------
ITEMS_SCHEMA: dict[str, pl.DataType] = {
    "pk": pl.String(),
    "sk": pl.String(),
    "gsi1pk": pl.String(),
    "gsi1sk": pl.String(),
    "userId": pl.String(),
    "documentId": pl.String(),
    "status": pl.String(),
    "createdAt": pl.String(),
    "updatedAt": pl.String(),
    "rawS3Uri": pl.String(),
    "rawEtag": pl.String(),
    "resultS3Uri": pl.String(),
    "leaseOwner": pl.String(),
    "leaseExpiresAt": pl.String(),
    "version": pl.Int64(),
    "attempts": pl.Int64(),
    "vendorName": pl.String(),
    "invoiceDate": pl.String(),
    "totalAmount": pl.String(),
}
# The attribute each item column comes from (DynamoDB names), for the sources.
ITEM_ATTRIBUTE_OF = {
    "pk": layout.PK_ATTR,
    "sk": layout.SK_ATTR,
    "gsi1pk": layout.GSI1_PK_ATTR,
    "gsi1sk": layout.GSI1_SK_ATTR,
} | {name: name for name in ITEMS_SCHEMA if name not in ("pk", "sk", "gsi1pk", "gsi1sk")}
NUMERIC_ITEM_COLUMNS = frozenset({"version", "attempts", "totalAmount"})
DEEP_ONLY_COLUMNS = frozenset({"vendorName", "invoiceDate", "totalAmount"})

OBJECTS_SCHEMA: dict[str, pl.DataType] = {
    "bucket": pl.String(),
    "key": pl.String(),
    "etag": pl.String(),  # without the quotes S3 listings put around it (inventories have none)
    "size": pl.Int64(),
    "lastModified": pl.Datetime("ms", "UTC"),
}

RESULTS_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.String(),
    "userId": pl.String(),
    "documentId": pl.String(),
    "status": pl.String(),
    "vendorName": pl.String(),
    "invoiceDate": pl.String(),
    "totalAmount": pl.String(),
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
}

# Statuses whose item promises a result.json (FAILED items also get one, but the spec only
# holds the two readable outcomes to it: a FAILED document is retried or dead-lettered anyway).
RESULT_PROMISED = (Status.PROCESSED.value, Status.REVIEW_REQUIRED.value)


@dataclass(frozen=True)
class RuleParams:
    raw_bucket: str
    processed_bucket: str
    as_of: datetime  # the snapshot time the ages are measured from
    grace: timedelta = timedelta(minutes=15)
    stuck_after: timedelta = timedelta(hours=6)
    retention: timedelta = timedelta(days=5 * 365)
    deep: bool = False


@dataclass(frozen=True)
class Inputs:
    items: pl.LazyFrame
    raw_objects: pl.LazyFrame
    processed_objects: pl.LazyFrame
    results: pl.LazyFrame | None = None  # result.json contents, --deep only


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


# --- templates derived from the layout builders --------------------------------------------
@dataclass(frozen=True)
class _Template:
    """A key format split around its placeholders: literal parts in order."""

    parts: tuple[str, ...]

    def build(self, *columns: pl.Expr) -> pl.Expr:
        pieces: list[pl.Expr] = [pl.lit(self.parts[0])]
        for column, literal in zip(columns, self.parts[1:], strict=True):
            pieces += [column, pl.lit(literal)]
        return pl.concat_str(pieces)


def _split(text: str, *placeholders: str) -> _Template:
    parts: list[str] = []
    rest = text
    for ph in placeholders:
        head, found, rest = rest.partition(ph)
        if not found:
            raise AssertionError(f"layout template {text!r} lost placeholder {ph!r}")
        parts.append(head)
    return _Template((*parts, rest))


@cache
def templates() -> dict[str, _Template]:
    # "{u}" etc. pass validate_id, so the real builders produce the templates.
    return {
        "pk": _split(layout.user_pk("{u}"), "{u}"),
        "sk": _split(layout.document_sk("{d}"), "{d}"),
        "status": _split(layout.status_pk("{s}"), "{s}"),
        "raw": _split(layout.raw_key("{u}", "{d}", "{f}"), "{u}", "{d}", "{f}"),
        "result": _split(layout.result_key("{u}", "{d}"), "{u}", "{d}"),
    }


# Ids and filenames made only of these characters always pass layout.validate_id /
# validate_filename, so the vectorised fast path accepts them; any other key goes through the
# layout parser itself, one Python call per key (rare in practice).
_SAFE_ID = r"[A-Za-z0-9_@=+,:;~{}-]{1,128}"
_SAFE_FILENAME = r"[A-Za-z0-9_.@=+,:;~() -]{1,255}"


def _fast_pattern(template: _Template, groups: dict[str, str]) -> str:
    out = "^" + re.escape(template.parts[0])
    for (name, group), literal in zip(groups.items(), template.parts[1:], strict=True):
        out += f"(?P<{name}>{group})" + re.escape(literal)
    return out + "$"


def _slow_raw(key: str) -> dict[str, str | None]:
    try:
        raw = layout.parse_raw_key(key)
    except InvalidKeyError as exc:
        return {"userId": None, "documentId": None, "reason": str(exc)}
    return {"userId": raw.user_id, "documentId": raw.document_id, "reason": None}


def _slow_result(key: str) -> dict[str, str | None]:
    try:
        user_id, document_id = layout.parse_result_key(key)
    except InvalidKeyError as exc:
        return {"userId": None, "documentId": None, "reason": str(exc)}
    return {"userId": user_id, "documentId": document_id, "reason": None}


def classify_keys(objects: pl.LazyFrame, kind: str) -> pl.LazyFrame:
    """Add userId, documentId and badReason (null when the key follows the layout)."""
    template = templates()[kind]
    groups = {"userId": _SAFE_ID, "documentId": _SAFE_ID}
    slow_parse = _slow_result
    if kind == "raw":
        groups["filename"] = _SAFE_FILENAME
        slow_parse = _slow_raw
    key = pl.col("key")
    # One regex pass extracts every group; a null userId means the fast path did not match.
    parsed = key.str.extract_groups(_fast_pattern(template, groups))
    groups_col = pl.col("_groups")
    fast_ok = groups_col.struct.field("userId").is_not_null()
    if kind == "raw":
        # validate_filename refuses "." and ".." (path components), which the class allows.
        fast_ok = fast_ok & ~groups_col.struct.field("filename").is_in([".", ".."])
    marked = (
        objects.with_columns(parsed.alias("_groups"))
        .with_columns(fast_ok.fill_null(False).alias("_fast"))
        .collect()
    )
    # Only the keys the fast path could not vouch for pay for a Python call; their answers are
    # looked up by key, so the big frame is never split and copied.
    slow_keys = marked.filter(~pl.col("_fast")).get_column("key").unique().to_list()
    answers = {k: slow_parse(k) for k in slow_keys}

    def slow(field: str) -> pl.Expr:
        mapping = {k: a[field] for k, a in answers.items() if a[field] is not None}
        if not mapping:
            return pl.lit(None, pl.String)
        return pl.col("key").replace_strict(mapping, default=None, return_dtype=pl.String)

    fast = pl.col("_fast")
    return (
        marked.lazy()
        .with_columns(
            pl.when(fast).then(pl.col("_groups").struct.field("userId")).otherwise(slow("userId")).alias("userId"),
            pl.when(fast).then(pl.col("_groups").struct.field("documentId")).otherwise(slow("documentId")).alias("documentId"),
            pl.when(fast).then(pl.lit(None, pl.String)).otherwise(slow("reason")).alias("badReason"),
        )
        .drop("_fast", "_groups")
    )


# --- helpers ---------------------------------------------------------------------------------
def _unquote(expr: pl.Expr) -> pl.Expr:
    return expr.str.strip_chars('"')


def _canonical_amount(expr: pl.Expr) -> pl.Expr:
    """"12.50" and "12.5" are one amount (DynamoDB normalises numbers, result.json does not)."""
    return pl.when(expr.str.contains(r"\.")).then(expr.str.replace(r"\.?0+$", "")).otherwise(expr)


def _evidence(**fields: pl.Expr) -> pl.Expr:
    return pl.struct([expr.alias(name) for name, expr in fields.items()]).struct.json_encode()


def _finding(frame: pl.LazyFrame, code: Code, evidence: pl.Expr, **columns: pl.Expr) -> pl.LazyFrame:
    null = pl.lit(None, pl.String)
    exprs = {name: columns.get(name, null) for name in ("userId", "documentId", "bucket", "key", "pk", "sk")}
    return frame.select(
        pl.lit(code.value).alias("code"),
        pl.lit(SEVERITY[code].value).alias("severity"),
        *[expr.cast(pl.String).alias(name) for name, expr in exprs.items()],
        evidence.alias("evidence"),
    )


def _item_columns() -> dict[str, pl.Expr]:
    return {
        "userId": pl.col("userId"),
        "documentId": pl.col("documentId"),
        "pk": pl.col("pk"),
        "sk": pl.col("sk"),
    }


def _iso(expr: pl.Expr) -> pl.Expr:
    """Object times in evidence as layout.format_ts writes item times (milliseconds, Z)."""
    return expr.dt.convert_time_zone("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")


def _ts(moment: datetime) -> pl.Expr:
    return pl.lit(moment).cast(pl.Datetime("ms", "UTC"))


# --- the rules --------------------------------------------------------------------------------
def _untracked(objects: pl.LazyFrame, items: pl.LazyFrame, item_key: str, code: Code) -> pl.LazyFrame:
    """Settled objects in the layout that no item names in its `item_key` column."""
    untracked = objects.filter(pl.col("judged")).join(
        items.select(item_key).drop_nulls().unique(), left_on="key", right_on=item_key, how="anti"
    )
    return _finding(
        untracked,
        code,
        _evidence(etag=pl.col("etag"), size=pl.col("size"), lastModified=_iso(pl.col("lastModified"))),
        userId=pl.col("userId"),
        documentId=pl.col("documentId"),
        bucket=pl.col("bucket"),
        key=pl.col("key"),
    )


def find(inputs: Inputs, params: RuleParams) -> pl.DataFrame:
    """All findings, sorted; the frame has FINDINGS_SCHEMA."""
    t = templates()
    judged_before = _ts(params.as_of - params.grace)
    # Items changed within the grace period are not held against the object listings either: a
    # listing or inventory taken a little earlier than the table cannot show their objects yet.
    settled_before = layout.format_ts(params.as_of - params.grace)
    raw = classify_keys(inputs.raw_objects, "raw").with_columns(
        (pl.col("lastModified") <= judged_before).alias("judged")
    )
    processed = classify_keys(inputs.processed_objects, "result").with_columns(
        (pl.col("lastModified") <= judged_before).alias("judged")
    )
    raw_uri_prefix = layout.s3_uri(params.raw_bucket, "")
    items = inputs.items.with_columns(
        pl.when(pl.col("rawS3Uri").str.starts_with(raw_uri_prefix))
        .then(pl.col("rawS3Uri").str.strip_prefix(raw_uri_prefix))
        .alias("rawKey"),
        # The result key the item's ids imply: joins on one string beat joins on two.
        t["result"].build(pl.col("userId"), pl.col("documentId")).alias("resultKey"),
    )
    # Prepared once, eagerly: each frame is joined by several rules below, which then share the
    # derived columns instead of each re-deriving them.
    items_df, raw_df, processed_df = pl.collect_all([items, raw, processed])
    items, raw, processed = items_df.lazy(), raw_df.lazy(), processed_df.lazy()
    valid_raw = raw.filter(pl.col("badReason").is_null())
    valid_processed = processed.filter(pl.col("badReason").is_null())
    parts: list[pl.LazyFrame] = []

    # BAD_KEY: objects outside the layout (only once they are older than the grace period).
    for frame in (raw, processed):
        bad = frame.filter(pl.col("badReason").is_not_null() & pl.col("judged"))
        parts.append(
            _finding(
                bad,
                Code.BAD_KEY,
                _evidence(reason=pl.col("badReason"), size=pl.col("size"), lastModified=_iso(pl.col("lastModified"))),
                bucket=pl.col("bucket"),
                key=pl.col("key"),
            )
        )

    # UNPROCESSED_RAW: a settled raw object no item tracks (the item's rawS3Uri names the object).
    parts.append(_untracked(valid_raw, items, "rawKey", Code.UNPROCESSED_RAW))

    # MISSING_RAW: the item's raw object is gone, unless lifecycle retention expired it by now.
    expired_before = layout.format_ts(params.as_of - params.retention)
    missing_raw = items.filter(
        pl.col("rawKey").is_not_null()
        & (pl.col("createdAt") >= expired_before)
        & (pl.col("createdAt") <= settled_before)
    ).join(
        raw.select("key"), left_on="rawKey", right_on="key", how="anti"
    )
    parts.append(
        _finding(
            missing_raw,
            Code.MISSING_RAW,
            _evidence(rawS3Uri=pl.col("rawS3Uri"), status=pl.col("status"), createdAt=pl.col("createdAt")),
            bucket=pl.lit(params.raw_bucket),
            key=pl.col("rawKey"),
            **_item_columns(),
        )
    )

    # STALE_RESULT: the raw object was replaced after the item recorded its ETag.
    # Compare ETags on two narrow columns first; only the few stale rows fetch the item details.
    stale_keys = (
        items.select("rawKey", _unquote(pl.col("rawEtag")).alias("rawEtagBare"))
        .join(
            raw.filter(pl.col("judged")).select("key", _unquote(pl.col("etag")).alias("objectEtag")),
            left_on="rawKey",
            right_on="key",
            how="inner",
        )
        .filter(pl.col("rawEtagBare").ne_missing(pl.col("objectEtag")))
    )
    stale = items.join(stale_keys, on="rawKey", how="inner")
    parts.append(
        _finding(
            stale,
            Code.STALE_RESULT,
            _evidence(
                itemEtag=pl.col("rawEtagBare"),
                objectEtag=pl.col("objectEtag"),
                status=pl.col("status"),
                version=pl.col("version"),
            ),
            bucket=pl.lit(params.raw_bucket),
            key=pl.col("rawKey"),
            **_item_columns(),
        )
    )

    # ORPHAN_RESULT: a settled result.json with no item for its ids.
    parts.append(_untracked(valid_processed, items, "resultKey", Code.ORPHAN_RESULT))

    # MISSING_RESULT: the item promises a result.json that is not there.
    missing_result = items.filter(
        pl.col("status").is_in(RESULT_PROMISED) & (pl.col("updatedAt").is_null() | (pl.col("updatedAt") <= settled_before))
    ).join(valid_processed.select("key"), left_on="resultKey", right_on="key", how="anti")
    parts.append(
        _finding(
            missing_result,
            Code.MISSING_RESULT,
            _evidence(status=pl.col("status"), resultS3Uri=pl.col("resultS3Uri"), version=pl.col("version")),
            bucket=pl.lit(params.processed_bucket),
            key=pl.col("resultKey"),
            **_item_columns(),
        )
    )

    # STUCK_PROCESSING: a claim whose lease expired long ago (the worker died and no run retook it).
    stuck_before = layout.format_ts(params.as_of - params.stuck_after)
    stuck = items.filter(
        (pl.col("status") == Status.PROCESSING.value)
        & (pl.col("leaseExpiresAt").is_null() | (pl.col("leaseExpiresAt") < stuck_before))
    )
    parts.append(
        _finding(
            stuck,
            Code.STUCK_PROCESSING,
            _evidence(
                leaseOwner=pl.col("leaseOwner"),
                leaseExpiresAt=pl.col("leaseExpiresAt"),
                attempts=pl.col("attempts"),
                version=pl.col("version"),
            ),
            **_item_columns(),
        )
    )

    # INDEX_DRIFT: the status index attributes disagree with the item they index.
    expected_gsi1pk = t["status"].build(pl.col("status"))
    drift = items.filter(
        pl.col("gsi1pk").ne_missing(expected_gsi1pk) | pl.col("gsi1sk").ne_missing(pl.col("createdAt"))
    )
    parts.append(
        _finding(
            drift,
            Code.INDEX_DRIFT,
            _evidence(
                GSI1PK=pl.col("gsi1pk"),
                expectedGSI1PK=expected_gsi1pk,
                GSI1SK=pl.col("gsi1sk"),
                createdAt=pl.col("createdAt"),
                version=pl.col("version"),
            ),
            **_item_columns(),
        )
    )

    parts.append(_key_mismatches(items, params))
    if params.deep and inputs.results is not None:
        parts += _deep(inputs.results, valid_processed, items)

    # One rule at a time: each join still uses every core, and only one rule's hash tables are
    # alive at once (all at once cost ~0.8 GB more at a million items for no gain on 2 cores).
    collected = [part.collect() for part in parts]
    return pl.concat(collected, how="vertical").sort(SORT_COLUMNS, nulls_last=True)


def _key_mismatches(items: pl.LazyFrame, params: RuleParams) -> pl.LazyFrame:
    """Keys, id attributes and S3 URIs of one item must all name the same document."""
    t = templates()
    user, doc = pl.col("userId"), pl.col("documentId")
    raw_dir = t["raw"].parts[0] + "{u}" + t["raw"].parts[1] + "{d}" + t["raw"].parts[2]
    raw_dir_template = _split(raw_dir, "{u}", "{d}")
    raw_rest = pl.col("rawKey").str.strip_prefix(raw_dir_template.build(user, doc))
    expected_result_uri = pl.lit(layout.s3_uri(params.processed_bucket, "")) + pl.col("resultKey")
    checks = [
        (pl.col("pk").ne_missing(t["pk"].build(user)), "PK does not match userId"),
        (pl.col("sk").ne_missing(t["sk"].build(doc)), "SK does not match documentId"),
        (pl.col("rawKey").is_null(), "rawS3Uri is not in the raw bucket"),
        (
            pl.col("rawKey").is_not_null()
            & (
                ~pl.col("rawKey").str.starts_with(raw_dir_template.build(user, doc))
                | (raw_rest.str.len_chars() == 0)
                | raw_rest.str.contains("/", literal=True)
            ),
            "rawS3Uri does not name this document's raw object",
        ),
        (
            pl.col("resultS3Uri").is_not_null() & pl.col("resultS3Uri").ne_missing(expected_result_uri),
            "resultS3Uri does not name this document's result.json",
        ),
    ]
    # A cheap OR of the checks first; the readable problem list only for the few flagged rows.
    any_problem = pl.any_horizontal([cond.fill_null(True) for cond, _ in checks])
    problems = pl.concat_list(
        [pl.when(cond.fill_null(True)).then(pl.lit(text)) for cond, text in checks]
    ).list.drop_nulls()
    flagged = items.filter(any_problem).with_columns(problems.alias("problems"))
    return _finding(
        flagged,
        Code.KEY_MISMATCH,
        _evidence(
            problems=pl.col("problems").list.join("; "),
            rawS3Uri=pl.col("rawS3Uri"),
            resultS3Uri=pl.col("resultS3Uri"),
        ),
        **_item_columns(),
    )


_SUMMARY_FIELDS = ("status", "vendorName", "invoiceDate", "totalAmount")


def _deep(results: pl.LazyFrame, valid_processed: pl.LazyFrame, items: pl.LazyFrame) -> list[pl.LazyFrame]:
    """--deep: the summary item must repeat what its result.json says."""
    located = results.join(
        valid_processed.select("key", "bucket", pl.col("userId").alias("keyUserId"), pl.col("documentId").alias("keyDocumentId")),
        on="key",
        how="inner",
    )
    wrong_ids = located.filter(
        pl.col("userId").ne_missing(pl.col("keyUserId")) | pl.col("documentId").ne_missing(pl.col("keyDocumentId"))
    )
    key_mismatch = _finding(
        wrong_ids,
        Code.KEY_MISMATCH,
        _evidence(
            problems=pl.lit("result.json ids do not match its key"),
            resultUserId=pl.col("userId"),
            resultDocumentId=pl.col("documentId"),
        ),
        userId=pl.col("keyUserId"),
        documentId=pl.col("keyDocumentId"),
        bucket=pl.col("bucket"),
        key=pl.col("key"),
    )
    result_side = located.select(
        pl.col("keyUserId").alias("userId"),
        pl.col("keyDocumentId").alias("documentId"),
        "bucket",
        "key",
        *[pl.col(f).alias(f"result_{f}") for f in _SUMMARY_FIELDS],
    )
    # A PROCESSING item is being redone: its old result.json is about to be replaced.
    in_flight = pl.col("status") == Status.PROCESSING.value
    joined = items.filter(~in_flight).join(result_side, on=["userId", "documentId"], how="inner").with_columns(
        _canonical_amount(pl.col("totalAmount")).alias("totalAmount"),
        _canonical_amount(pl.col("result_totalAmount")).alias("result_totalAmount"),
    )
    differs = pl.concat_list(
        [pl.when(pl.col(f).ne_missing(pl.col(f"result_{f}"))).then(pl.lit(f)) for f in _SUMMARY_FIELDS]
    ).list.drop_nulls()
    mismatched = joined.with_columns(differs.alias("fields")).filter(pl.col("fields").list.len() > 0)
    summary_mismatch = _finding(
        mismatched,
        Code.SUMMARY_MISMATCH,
        _evidence(
            fields=pl.col("fields").list.join(","),
            item=pl.struct(*_SUMMARY_FIELDS),
            result=pl.struct(*[pl.col(f"result_{f}").alias(f) for f in _SUMMARY_FIELDS]),
        ),
        bucket=pl.col("bucket"),
        key=pl.col("key"),
        **_item_columns(),
    )
    return [key_mismatch, summary_mismatch]


def counts(findings: pl.DataFrame) -> dict[str, int]:
    """Findings per code, every code present (zeros included) in a fixed order."""
    seen = dict(findings.group_by("code").len().iter_rows()) if findings.height else {}
    return {code.value: int(seen.get(code.value, 0)) for code in Code}


def worst_severity(findings: pl.DataFrame) -> Severity | None:
    present = {Severity(s) for s in findings.get_column("severity").unique().to_list()} if findings.height else set()
    return max(present, key=lambda s: s.rank) if present else None
