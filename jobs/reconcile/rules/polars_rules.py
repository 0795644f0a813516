"""The reconciliation rules in polars: one function per finding, prepared frames in, wide rows out.

Each rule reads the inputs `join.prepare` derived once (and the pairs of its side's one join) and
returns its findings as rows of the engine-neutral wide frame (`findings.WIDE_SCHEMA`), which
`findings.render` turns into the report's frame. The rules are grouped by what they read (one
item, one object, items joined with one side's objects, --deep's result.json contents), so the
polars engine can apply each group where its inputs meet: all at once in memory, or data file by
data file and partition by partition (`engines.partitions`). The same rules in Trino SQL (for
Athena and DuckDB) are in `sql`; an equivalence test keeps the two identical finding for finding.
Pure: no I/O.
"""

from __future__ import annotations

import polars as pl

from jobs.contract import Status, layout
from jobs.contract.item import MARKER_FIELDS
from jobs.reconcile.rules.findings import SUMMARY_COLUMNS, SUMMARY_FIELDS, Code
from jobs.reconcile.rules.frames import TTL_COLUMN
from jobs.reconcile.rules.join import Prepared, result_uris, rows_at
from jobs.reconcile.rules.keys import marker_parts, templates, unquoted
from jobs.reconcile.rules.params import RuleParams

# Statuses whose item promises a result.json (FAILED items also get one, but the spec only
# holds the two readable outcomes to it: a FAILED document is retried or dead-lettered anyway).
RESULT_PROMISED = (Status.PROCESSED.value, Status.REVIEW_REQUIRED.value)
# A reviewer settles REVIEW_REQUIRED as PROCESSED on the item; result.json keeps what the
# extraction said. The item's status then agrees with its result.json's.
SETTLED_BY_REVIEW = (Status.REVIEW_REQUIRED.value, Status.PROCESSED.value)
# The tombstone of a document whose raw object is gone: item and result.json stay by design.
TOMBSTONE = Status.DELETED.value
# KEY_MISMATCH problems, in the order they are listed.
KEY_PROBLEMS = (
    "PK does not match userId",
    "SK does not match documentId",
    "rawS3Uri is not in the raw bucket",
    "rawS3Uri does not name this document's raw object",
    "resultS3Uri does not name this document's result.json",
)
RESULT_IDS_PROBLEM = "result.json ids do not match its key"
# What pairs a duplicate marker with the document that holds it (jobs.contract.duplicates).
MARKER_KEY = ["userId", "documentId", "kind", "digest"]


def canonical_amount(expr: pl.Expr) -> pl.Expr:
    """Amounts "12.50" and "12.5" are one amount (DynamoDB normalises numbers, result.json does not)."""
    return pl.when(expr.str.contains(r"\.")).then(expr.str.replace(r"\.?0+$", "")).otherwise(expr)


def _row(frame: pl.LazyFrame, code: Code, **columns: pl.Expr) -> pl.LazyFrame:
    """Findings of `code` as wide rows: the given identity and evidence columns, the rest null."""
    return frame.select(pl.lit(code.value).alias("code"), *[expr.alias(name) for name, expr in columns.items()])


def _item_identity() -> dict[str, pl.Expr]:
    return {"user_id": pl.col("userId"), "document_id": pl.col("documentId"), "pk": pl.col("pk"), "sk": pl.col("sk")}


def _object_evidence() -> dict[str, pl.Expr]:
    return {"ev_etag": pl.col("etag"), "ev_size": pl.col("size"), "ev_last_modified": pl.col("lastModified")}


# --- the rules, one function each ---------------------------------------------------------------
def bad_key(p: Prepared) -> pl.LazyFrame:
    """BAD_KEY: objects outside the layout (only once they are older than the grace period)."""
    parts = []
    for frame, kind in ((p.raw, "raw"), (p.processed, "result")):
        bad = frame.filter(pl.col("badKey") & pl.col("judged"))
        parts.append(
            _row(
                bad,
                Code.BAD_KEY,
                bucket=pl.col("bucket"),
                key=pl.col("key"),
                ev_key_kind=pl.lit(kind),
                ev_size=pl.col("size"),
                ev_last_modified=pl.col("lastModified"),
            )
        )
    return pl.concat(parts)


def expiring(params: RuleParams, kind: str) -> pl.Expr:
    """True for an object whose retention is just ending (`RuleParams.expiring`)."""
    modified = pl.col("lastModified")
    windows = [
        (modified > pl.lit(after).cast(pl.Datetime("ms", "UTC")))
        & (modified <= pl.lit(until).cast(pl.Datetime("ms", "UTC")))
        for after, until in params.expiring(kind)
    ]
    return pl.any_horizontal(windows) if windows else pl.lit(False)


def retention_running(params: RuleParams) -> pl.Expr:
    """True while the item's retention runs; an item written before retention was recorded
    (no retainUntil) is judged by its age against the standard retention, as before.
    """
    return pl.coalesce(pl.col("retainUntil") > params.as_of_text, pl.col("createdAt") >= params.expired_before)


def _untracked(objects: pl.LazyFrame, pairs: pl.DataFrame, code: Code, kind: str, params: RuleParams) -> pl.LazyFrame:
    """Settled objects in the layout that no item names (no partner in `pairs`), unless their
    retention is just ending (the item's TTL came before the objects' lifecycle).
    """
    alone = pairs.filter(pl.col("_item").is_null()).select("_object")
    untracked = rows_at(objects, alone, "_object").filter(
        ~pl.col("badKey") & pl.col("judged") & ~expiring(params, kind)
    )
    return _row(
        untracked,
        code,
        user_id=pl.col("userId"),
        document_id=pl.col("documentId"),
        bucket=pl.col("bucket"),
        key=pl.col("key"),
        **_object_evidence(),
    )


def unprocessed_raw(p: Prepared) -> pl.LazyFrame:
    """UNPROCESSED_RAW: a settled raw object no item tracks (the item's rawS3Uri names it)."""
    return _untracked(p.raw, p.raw_pairs, Code.UNPROCESSED_RAW, "raw", p.params)


def orphan_result(p: Prepared) -> pl.LazyFrame:
    """ORPHAN_RESULT: a settled result.json with no item for its ids."""
    return _untracked(p.processed, p.result_pairs, Code.ORPHAN_RESULT, "result", p.params)


def missing_raw(p: Prepared) -> pl.LazyFrame:
    """MISSING_RAW: the item's raw object is gone, unless its retention is over (lifecycle may
    have hidden it before the TTL removed the item) or the item is DELETED (a tombstone, or a
    user's delete, whose objects are hidden behind delete markers).
    """
    params = p.params
    # Any object under the key counts as present, a bad or unjudged one included.
    alone = p.raw_pairs.filter(pl.col("_object").is_null()).select("_item")
    missing = rows_at(p.items, alone, "_item").filter(
        (pl.col("status") != TOMBSTONE)
        & pl.col("rawKey").is_not_null()
        & retention_running(params)
        & (pl.col("createdAt") <= params.settled_before)
    )
    return _row(
        missing,
        Code.MISSING_RAW,
        **_item_identity(),
        bucket=pl.lit(params.raw_bucket),
        key=pl.col("rawKey"),
        # rawS3Uri itself, rebuilt from rawKey (its tail in the raw bucket): a partitioned run
        # need not keep both columns.
        ev_raw_s3_uri=pl.lit(layout.s3_uri(params.raw_bucket, "")) + pl.col("rawKey"),
        ev_status=pl.col("status"),
        ev_created_at=pl.col("createdAt"),
        ev_version=pl.col("version"),
    )


def stale_result(p: Prepared) -> pl.LazyFrame:
    """STALE_RESULT: the raw object was replaced after the item recorded its ETag."""
    # Pairs are per item: two items naming one raw object (a KEY_MISMATCH) are judged each
    # against the object on their own ETag.
    stale = p.raw_pairs.filter(
        pl.col("_item").is_not_null()
        & pl.col("judged").fill_null(False)
        & pl.col("_itemEtag").ne_missing(pl.col("_objectEtag"))
    ).select("_item", "_object")
    objects = rows_at(
        p.raw.select(unquoted(pl.col("etag")).alias("objectEtag")), stale.select("_object", "_item"), "_object"
    )
    return _row(
        rows_at(p.items, objects.collect(), "_item"),
        Code.STALE_RESULT,
        **_item_identity(),
        bucket=pl.lit(p.params.raw_bucket),
        key=pl.col("rawKey"),
        ev_item_etag=unquoted(pl.col("rawEtag")),
        ev_object_etag=pl.col("objectEtag"),
        ev_status=pl.col("status"),
        ev_version=pl.col("version"),
    )


def deleted_raw_exists(p: Prepared) -> pl.LazyFrame:
    """DELETED_RAW_EXISTS: a DELETED tombstone whose raw object (the key it names) is back."""
    back = p.raw_pairs.filter(pl.col("_item").is_not_null() & pl.col("judged").fill_null(False))
    objects = rows_at(p.raw.select("etag", "size", "lastModified"), back.select("_object", "_item"), "_object")
    tombstones = rows_at(p.items, objects.collect(), "_item").filter(pl.col("status") == TOMBSTONE)
    return _row(
        tombstones,
        Code.DELETED_RAW_EXISTS,
        **_item_identity(),
        bucket=pl.lit(p.params.raw_bucket),
        key=pl.col("rawKey"),
        **_object_evidence(),
        ev_created_at=pl.col("createdAt"),
        ev_version=pl.col("version"),
    )


def missing_result(p: Prepared) -> pl.LazyFrame:
    """MISSING_RESULT: the item promises a result.json that is not there."""
    settled = pl.col("updatedAt").is_null() | (pl.col("updatedAt") <= p.params.settled_before)
    alone = p.result_pairs.filter(pl.col("_object").is_null()).select("_item")
    # Past its retention, lifecycle may have hidden result.json before the TTL removed the item.
    running = pl.col("retainUntil").is_null() | (pl.col("retainUntil") > p.params.as_of_text)
    missing = rows_at(p.items, alone, "_item").filter(pl.col("status").is_in(RESULT_PROMISED) & settled & running)
    return _row(
        result_uris(p, missing),
        Code.MISSING_RESULT,
        **_item_identity(),
        bucket=pl.lit(p.params.processed_bucket),
        key=pl.col("resultKey"),
        ev_status=pl.col("status"),
        ev_result_s3_uri=pl.col("resultS3Uri"),
        ev_version=pl.col("version"),
    )


def stuck_processing(p: Prepared) -> pl.LazyFrame:
    """STUCK_PROCESSING: a claim whose lease expired long ago (the worker died, no run retook it)."""
    stuck = p.items.filter(
        (pl.col("status") == Status.PROCESSING.value)
        & (pl.col("leaseExpiresAt").is_null() | (pl.col("leaseExpiresAt") < p.params.stuck_before))
    )
    return _row(
        stuck,
        Code.STUCK_PROCESSING,
        **_item_identity(),
        ev_lease_owner=pl.col("leaseOwner"),
        ev_lease_expires_at=pl.col("leaseExpiresAt"),
        ev_attempts=pl.col("attempts"),
        ev_version=pl.col("version"),
    )


def index_drift(p: Prepared) -> pl.LazyFrame:
    """INDEX_DRIFT: the status index attributes disagree with the item they index."""
    expected = templates()["status"].build(pl.col("status"))
    drift = p.items.filter(pl.col("gsi1pk").ne_missing(expected) | pl.col("gsi1sk").ne_missing(pl.col("createdAt")))
    return _row(
        drift,
        Code.INDEX_DRIFT,
        **_item_identity(),
        ev_gsi1pk=pl.col("gsi1pk"),
        ev_expected_gsi1pk=expected,
        ev_gsi1sk=pl.col("gsi1sk"),
        ev_created_at=pl.col("createdAt"),
        ev_version=pl.col("version"),
    )


def key_mismatch(p: Prepared) -> pl.LazyFrame:
    """KEY_MISMATCH: keys, id attributes and S3 URIs of one item must all name the same document."""
    t = templates()
    user, doc = pl.col("userId"), pl.col("documentId")
    raw_dir = t["raw_dir"].build(user, doc)
    raw_rest = pl.col("rawKey").str.strip_prefix(raw_dir)
    expected_result_uri = pl.lit(layout.s3_uri(p.params.processed_bucket, "")) + pl.col("resultKey")
    checks = [
        pl.col("pk").ne_missing(t["pk"].build(user)),
        pl.col("sk").ne_missing(t["sk"].build(doc)),
        pl.col("rawKey").is_null(),
        pl.col("rawKey").is_not_null()
        & (
            ~pl.col("rawKey").str.starts_with(raw_dir)
            | (raw_rest.str.len_chars() == 0)
            | raw_rest.str.contains("/", literal=True)
        ),
        pl.col("resultS3Uri").is_not_null() & pl.col("resultS3Uri").ne_missing(expected_result_uri),
    ]
    # A cheap OR of the checks first; the readable problem list only for the few flagged rows.
    any_problem = pl.any_horizontal([cond.fill_null(True) for cond in checks])
    problems = pl.concat_list(
        [pl.when(cond.fill_null(True)).then(pl.lit(text)) for cond, text in zip(checks, KEY_PROBLEMS, strict=True)]
    ).list.drop_nulls()
    flagged = p.items.filter(any_problem).with_columns(problems.list.join("; ").alias("problems"))
    return _row(
        flagged,
        Code.KEY_MISMATCH,
        **_item_identity(),
        ev_problems=pl.col("problems"),
        ev_raw_s3_uri=pl.col("rawS3Uri"),
        ev_result_s3_uri=pl.col("resultS3Uri"),
    )


def _located_results(p: Prepared, results: pl.LazyFrame, readable: bool = True) -> pl.LazyFrame:
    """result.json contents beside the ids its key names (the readable ones, or the others)."""
    keyed = p.valid_processed.select(
        "key", "bucket", pl.col("userId").alias("keyUserId"), pl.col("documentId").alias("keyDocumentId")
    )
    read = pl.col("readError").is_null()
    return results.filter(read if readable else ~read).join(keyed, on="key", how="inner")


def _compared_items(p: Prepared) -> pl.LazyFrame:
    """Items --deep holds to their result.json: not one being redone (PROCESSING: its old
    result.json is about to be replaced), not a tombstone (its result.json stays as evidence).
    """
    return p.items.filter(~pl.col("status").is_in([Status.PROCESSING.value, TOMBSTONE]))


def result_ids_mismatch(p: Prepared, results: pl.LazyFrame) -> pl.LazyFrame:
    """KEY_MISMATCH (--deep): a result.json whose ids disagree with its key."""
    located = _located_results(p, results)
    wrong = located.filter(
        pl.col("userId").ne_missing(pl.col("keyUserId")) | pl.col("documentId").ne_missing(pl.col("keyDocumentId"))
    )
    return _row(
        wrong,
        Code.KEY_MISMATCH,
        user_id=pl.col("keyUserId"),
        document_id=pl.col("keyDocumentId"),
        bucket=pl.col("bucket"),
        key=pl.col("key"),
        ev_problems=pl.lit(RESULT_IDS_PROBLEM),
        ev_result_user_id=pl.col("userId"),
        ev_result_document_id=pl.col("documentId"),
    )


def summary_mismatch(p: Prepared, results: pl.LazyFrame) -> pl.LazyFrame:
    """SUMMARY_MISMATCH (--deep): the summary item must repeat what its result.json says."""
    result_side = _located_results(p, results).select(
        pl.col("keyUserId").alias("userId"),
        pl.col("keyDocumentId").alias("documentId"),
        "bucket",
        "key",
        *[pl.col(f).alias(f"result_{f}") for f in SUMMARY_FIELDS],
    )
    joined = (
        _compared_items(p)
        .join(result_side, on=["userId", "documentId"], how="inner")
        .with_columns(
            canonical_amount(pl.col("totalAmount")).alias("totalAmount"),
            canonical_amount(pl.col("result_totalAmount")).alias("result_totalAmount"),
        )
    )
    settled = (pl.col("result_status") == SETTLED_BY_REVIEW[0]) & (pl.col("status") == SETTLED_BY_REVIEW[1])

    def differs_on(field: str) -> pl.Expr:
        differs = pl.col(field).ne_missing(pl.col(f"result_{field}"))
        return differs & ~settled if field == "status" else differs

    differs = pl.concat_list([pl.when(differs_on(f)).then(pl.lit(f)) for f in SUMMARY_FIELDS]).list.drop_nulls()
    mismatched = joined.with_columns(differs.alias("fields")).filter(pl.col("fields").list.len() > 0)
    return _row(
        mismatched,
        Code.SUMMARY_MISMATCH,
        **_item_identity(),
        bucket=pl.col("bucket"),
        key=pl.col("key"),
        ev_fields=pl.col("fields").list.join(","),
        **{f"ev_item_{SUMMARY_COLUMNS[f]}": pl.col(f) for f in SUMMARY_FIELDS},
        **{f"ev_result_{SUMMARY_COLUMNS[f]}": pl.col(f"result_{f}") for f in SUMMARY_FIELDS},
    )


def result_source_mismatch(p: Prepared, results: pl.LazyFrame) -> pl.LazyFrame:
    """RESULT_SOURCE_MISMATCH (--deep): result.json was extracted from another raw object (key or
    ETag) than the one the item names: a writer whose claim was taken over left its bytes.
    """
    result_side = _located_results(p, results).select(
        pl.col("keyUserId").alias("userId"),
        pl.col("keyDocumentId").alias("documentId"),
        "bucket",
        "key",
        "sourceUri",
        "sourceEtag",
    )
    joined = _compared_items(p).join(result_side, on=["userId", "documentId"], how="inner")
    foreign = joined.filter(
        pl.col("sourceUri").ne_missing(pl.col("rawS3Uri"))
        | unquoted(pl.col("sourceEtag")).ne_missing(unquoted(pl.col("rawEtag")))
    )
    return _row(
        foreign,
        Code.RESULT_SOURCE_MISMATCH,
        **_item_identity(),
        bucket=pl.col("bucket"),
        key=pl.col("key"),
        ev_raw_s3_uri=pl.col("rawS3Uri"),
        ev_result_source_uri=pl.col("sourceUri"),
        ev_item_etag=unquoted(pl.col("rawEtag")),
        ev_result_etag=unquoted(pl.col("sourceEtag")),
        ev_status=pl.col("status"),
        ev_version=pl.col("version"),
    )


def result_unreadable(p: Prepared, results: pl.LazyFrame) -> pl.LazyFrame:
    """RESULT_UNREADABLE (--deep): a listed result.json that is gone or not a ResultDocument."""
    unreadable = _located_results(p, results, readable=False)
    return _row(
        unreadable,
        Code.RESULT_UNREADABLE,
        user_id=pl.col("keyUserId"),
        document_id=pl.col("keyDocumentId"),
        bucket=pl.col("bucket"),
        key=pl.col("key"),
        ev_error=pl.col("readError"),
    )


def _claims(p: Prepared) -> pl.LazyFrame:
    """What the documents say they hold: a row per document and kind of marker, tombstones apart."""
    live = p.items.filter(pl.col("status").ne_missing(TOMBSTONE))
    return pl.concat(
        [
            live.filter(pl.col(column).is_not_null()).with_columns(
                pl.lit(kind.value).alias("kind"), pl.col(column).alias("digest")
            )
            for kind, column in MARKER_FIELDS.items()
        ]
    )


def _markers(p: Prepared) -> pl.LazyFrame:
    """The marker rows with the kind and digest their sort key names (none when there are none)."""
    if p.markers is None:
        return p.items.head(0).with_columns(
            pl.lit(None, pl.String).alias("kind"), pl.lit(None, pl.String).alias("digest")
        )
    return p.markers.with_columns(*marker_parts())


def not_expired(params: RuleParams) -> pl.Expr:
    """Rows whose TTL has not passed: past it, DynamoDB removes a marker and its document at any
    time and not together (typically within days), so neither's absence is a finding yet.
    """
    return pl.col(TTL_COLUMN).is_null() | (pl.col(TTL_COLUMN) > layout.epoch_seconds(params.as_of))


def orphan_marker(p: Prepared) -> pl.LazyFrame:
    """ORPHAN_MARKER: a duplicate marker its document does not hold (gone, a tombstone, or holding
    another digest): it would flag the next upload of that identity against a document that is not.
    """
    settled = pl.col("createdAt").is_null() | (pl.col("createdAt") <= p.params.settled_before)
    orphans = (
        _markers(p)
        .filter(settled & not_expired(p.params))
        .join(_claims(p).select(MARKER_KEY), on=MARKER_KEY, how="anti")
    )
    return _row(
        orphans,
        Code.ORPHAN_MARKER,
        **_item_identity(),
        ev_marker_kind=pl.col("kind"),
        ev_marker_digest=pl.col("digest"),
        ev_created_at=pl.col("createdAt"),
    )


def missing_marker(p: Prepared) -> pl.LazyFrame:
    """MISSING_MARKER: a document says it holds an identity whose marker is gone or names another
    document: its duplicates would go unflagged.
    """
    settled = pl.col("updatedAt").is_null() | (pl.col("updatedAt") <= p.params.settled_before)
    missing = (
        _claims(p)
        .filter(settled & not_expired(p.params))
        .join(_markers(p).select(MARKER_KEY), on=MARKER_KEY, how="anti")
    )
    return _row(
        missing,
        Code.MISSING_MARKER,
        **_item_identity(),
        ev_marker_kind=pl.col("kind"),
        ev_marker_digest=pl.col("digest"),
        ev_status=pl.col("status"),
        ev_version=pl.col("version"),
    )


# Rules of one item alone, of one object alone, and those that join items with objects: a
# partitioned run (`engines.partitions`) applies each group where its inputs meet.
ITEM_RULES = (stuck_processing, index_drift, key_mismatch)
OBJECT_RULES = (bad_key,)
RAW_JOIN_RULES = (unprocessed_raw, missing_raw, stale_result, deleted_raw_exists)
RESULT_JOIN_RULES = (orphan_result, missing_result)
# Markers meet their documents by the result key of their holder's ids: the result side.
MARKER_RULES = (orphan_marker, missing_marker)
RULES = OBJECT_RULES + RAW_JOIN_RULES + RESULT_JOIN_RULES + MARKER_RULES + ITEM_RULES
DEEP_RULES = (result_ids_mismatch, summary_mismatch, result_source_mismatch, result_unreadable)
