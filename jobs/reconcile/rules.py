"""The reconciliation rules in polars: frames in, the engine-neutral wide findings frame out, no I/O.

Inputs are three (four with --deep) frames with the schemas below, built by `sources` from either
live reads or export/inventory files, so both paths meet here and yield the same findings. The
item schema is a projection of `DocumentItem` (names, DynamoDB wire types and dtypes come from the
contract); every key format is derived from the builders in `jobs.contract.layout` (by building a
template with placeholder ids and splitting it), so the vectorised checks cannot drift from the
contract. One function per rule; `find` runs them one at a time and `findings.render` makes the
report's frame. The same rules in Trino SQL (for Athena and DuckDB) are in `sql`; an equivalence
test keeps the two identical finding for finding.
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cache, cached_property
from typing import Union, get_args, get_origin

import polars as pl

from jobs.contract import DocumentItem, Status, layout
from jobs.errors import InvalidKeyError
from jobs.reconcile.findings import (
    FINDINGS_SCHEMA,
    SEVERITY,
    SORT_COLUMNS,
    SUMMARY_FIELDS,
    WIDE_SCHEMA,
    Code,
    Severity,
    counts,
    empty,
    render,
    worst_severity,
)

__all__ = [
    "FINDINGS_SCHEMA",
    "ITEMS_SCHEMA",
    "OBJECTS_SCHEMA",
    "RESULTS_SCHEMA",
    "SEVERITY",
    "SORT_COLUMNS",
    "Code",
    "Inputs",
    "RuleParams",
    "Severity",
    "counts",
    "empty",
    "find",
    "find_wide",
    "worst_severity",
]


# --- input schemas, derived from the contract --------------------------------------------------
def _types(field: str) -> tuple[object, ...]:
    annotation = DocumentItem.model_fields[field].annotation
    options = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    return tuple(o for o in options if o is not type(None))


def wire_type(field: str) -> str:
    """The DynamoDB type tag `DocumentItem.to_item` writes for `field` ("S", "N" or "L")."""
    options = _types(field)
    if any(o in (int, Decimal) for o in options):
        return "N"
    if any(get_origin(o) is list for o in options):
        return "L"
    return "S"


# The item fields the rules read (a projection of DocumentItem: a reconcile parses no more of
# each item than it needs), and the summary fields only --deep compares.
RULE_FIELDS = (
    "userId",
    "documentId",
    "status",
    "createdAt",
    "updatedAt",
    "rawS3Uri",
    "rawEtag",
    "resultS3Uri",
    "leaseOwner",
    "leaseExpiresAt",
    "version",
    "attempts",
)
DEEP_ONLY_COLUMNS = ("vendorName", "invoiceDate", "totalAmount")
# The derived key attributes, checked against the fields (column: DynamoDB attribute).
KEY_COLUMNS = {
    "pk": layout.PK_ATTR,
    "sk": layout.SK_ATTR,
    "gsi1pk": layout.GSI1_PK_ATTR,
    "gsi1sk": layout.GSI1_SK_ATTR,
}


def _dtype(field: str) -> pl.DataType:
    # Integers as integers; a Decimal keeps DynamoDB's spelling (compared canonically); times,
    # dates and enums as the text the item stores (ISO-8601 sorts in time order).
    return pl.Int64() if int in _types(field) else pl.String()


ITEMS_SCHEMA: dict[str, pl.DataType] = {
    **{column: pl.String() for column in KEY_COLUMNS},
    **{field: _dtype(field) for field in (*RULE_FIELDS, *DEEP_ONLY_COLUMNS)},
}
# The DynamoDB attribute each item column comes from, for the sources.
ITEM_ATTRIBUTE_OF = {**KEY_COLUMNS, **{field: field for field in (*RULE_FIELDS, *DEEP_ONLY_COLUMNS)}}
NUMERIC_ITEM_COLUMNS = frozenset(c for c in (*RULE_FIELDS, *DEEP_ONLY_COLUMNS) if wire_type(c) == "N")

OBJECTS_SCHEMA: dict[str, pl.DataType] = {
    "bucket": pl.String(),
    "key": pl.String(),
    "etag": pl.String(),  # bare (jobs.contract.bare_etag): inventories have no quotes
    "size": pl.Int64(),
    "lastModified": pl.Datetime("ms", "UTC"),
}

# result.json as --deep reads it (ResultDocument, see sources.result_row).
RESULTS_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.String(),
    "userId": pl.String(),
    "documentId": pl.String(),
    "status": pl.String(),
    "vendorName": pl.String(),
    "invoiceDate": pl.String(),
    "totalAmount": pl.String(),
    "sourceUri": pl.String(),  # the raw object it was extracted from (key and ETag: its identity)
    "sourceEtag": pl.String(),
    "readError": pl.String(),  # why it could not be read (gone since the listing, not a ResultDocument)
}

# Statuses whose item promises a result.json (FAILED items also get one, but the spec only
# holds the two readable outcomes to it: a FAILED document is retried or dead-lettered anyway).
RESULT_PROMISED = (Status.PROCESSED.value, Status.REVIEW_REQUIRED.value)
# A reviewer settles REVIEW_REQUIRED as PROCESSED on the item; result.json keeps what the
# extraction said. The item's status then agrees with its result.json's.
SETTLED_BY_REVIEW = (Status.REVIEW_REQUIRED.value, Status.PROCESSED.value)
# The tombstone of a document whose raw object is gone: item and result.json stay by design.
TOMBSTONE = Status.DELETED.value


@dataclass(frozen=True)
class RuleParams:
    raw_bucket: str
    processed_bucket: str
    as_of: datetime  # the snapshot time the ages are measured from
    grace: timedelta = timedelta(minutes=15)
    stuck_after: timedelta = timedelta(hours=6)
    retention: timedelta = timedelta(days=5 * 365)
    deep: bool = False

    # Thresholds as the stored text (items) or as times (objects): every engine gets the same.
    @property
    def judged_before(self) -> datetime:
        """Objects modified after this are within the grace period: not judged yet."""
        return self.as_of - self.grace

    @property
    def settled_before(self) -> str:
        """Items changed after this are not held against listings taken a little earlier."""
        return layout.format_ts(self.as_of - self.grace)

    @property
    def expired_before(self) -> str:
        """Items created before this had their raw object expired by lifecycle retention."""
        return layout.format_ts(self.as_of - self.retention)

    @property
    def stuck_before(self) -> str:
        return layout.format_ts(self.as_of - self.stuck_after)


@dataclass(frozen=True)
class Inputs:
    items: pl.LazyFrame
    raw_objects: pl.LazyFrame
    processed_objects: pl.LazyFrame
    results: pl.LazyFrame | None = None  # result.json contents, --deep only


# --- templates derived from the layout builders --------------------------------------------
@dataclass(frozen=True)
class Template:
    """A key format split around its placeholders: literal parts in order."""

    parts: tuple[str, ...]

    def build(self, *columns: pl.Expr) -> pl.Expr:
        pieces: list[pl.Expr] = [pl.lit(self.parts[0])]
        for column, literal in zip(columns, self.parts[1:], strict=True):
            pieces += [column, pl.lit(literal)]
        return pl.concat_str(pieces)


def split_template(text: str, *placeholders: str) -> Template:
    parts: list[str] = []
    rest = text
    for ph in placeholders:
        head, found, rest = rest.partition(ph)
        if not found:
            raise AssertionError(f"layout template {text!r} lost placeholder {ph!r}")
        parts.append(head)
    return Template((*parts, rest))


@cache
def templates() -> dict[str, Template]:
    # "{u}" etc. pass validate_id, so the real builders produce the templates.
    raw = split_template(layout.raw_key("{u}", "{d}", "{f}"), "{u}", "{d}", "{f}")
    return {
        "pk": split_template(layout.user_pk("{u}"), "{u}"),
        "sk": split_template(layout.document_sk("{d}"), "{d}"),
        "status": split_template(layout.status_pk("{s}"), "{s}"),
        "raw": raw,
        "raw_dir": Template((*raw.parts[:2], raw.parts[2])),  # raw/{u}/{d}/: this document's raw objects
        "result": split_template(layout.result_key("{u}", "{d}"), "{u}", "{d}"),
    }


# Ids and filenames made only of these characters always pass layout.validate_id /
# validate_filename, so the vectorised fast path accepts them; any other key goes through the
# layout parser itself, one Python call per key (rare in practice).
SAFE_ID = r"[A-Za-z0-9_@=+,:;~{}-]{1,128}"
SAFE_FILENAME = r"[A-Za-z0-9_.@=+,:;~() -]{1,255}"


def fast_pattern(template: Template, groups: dict[str, str]) -> str:
    out = "^" + re.escape(template.parts[0])
    for (name, group), literal in zip(groups.items(), template.parts[1:], strict=True):
        out += f"(?P<{name}>{group})" + re.escape(literal)
    return out + "$"


def _slow_ids(kind: str, key: str) -> tuple[str, str] | None:
    try:
        if kind == "raw":
            raw = layout.parse_raw_key(key)
            return raw.user_id, raw.document_id
        return layout.parse_result_key(key)
    except InvalidKeyError:
        return None


def classify_keys(objects: pl.LazyFrame, kind: str) -> pl.LazyFrame:
    """Add userId, documentId and badKey (true when the key is outside the layout)."""
    template = templates()[kind]
    groups = {"userId": SAFE_ID, "documentId": SAFE_ID}
    if kind == "raw":
        groups["filename"] = SAFE_FILENAME
    key = pl.col("key")
    # One regex pass extracts every group; a null userId means the fast path did not match.
    parsed = key.str.extract_groups(fast_pattern(template, groups))
    groups_col = pl.col("_groups")
    fast_ok = groups_col.struct.field("userId").is_not_null()
    if kind == "raw":
        # validate_filename refuses "." and names starting with ".." (path components), which the
        # class allows (found by the engines' equivalence test: "..x" was read as a valid name).
        filename = groups_col.struct.field("filename")
        fast_ok = fast_ok & (filename != ".") & ~filename.str.starts_with("..")
    marked = (
        objects.with_columns(parsed.alias("_groups")).with_columns(fast_ok.fill_null(False).alias("_fast")).collect()
    )
    # Only the keys the fast path could not vouch for pay for a Python call; their answers are
    # looked up by key, so the big frame is never split and copied.
    answers = {k: _slow_ids(kind, k) for k in marked.filter(~pl.col("_fast")).get_column("key").unique().to_list()}

    def slow(index: int) -> pl.Expr:
        mapping = {k: ids[index] for k, ids in answers.items() if ids is not None}
        if not mapping:
            return pl.lit(None, pl.String)
        return pl.col("key").replace_strict(mapping, default=None, return_dtype=pl.String)

    fast = pl.col("_fast")
    return (
        marked.lazy()
        .with_columns(
            pl.when(fast).then(pl.col("_groups").struct.field("userId")).otherwise(slow(0)).alias("userId"),
            pl.when(fast).then(pl.col("_groups").struct.field("documentId")).otherwise(slow(1)).alias("documentId"),
        )
        .with_columns(pl.col("userId").is_null().alias("badKey"))
        .drop("_fast", "_groups")
    )


# --- helpers ---------------------------------------------------------------------------------
def unquoted(expr: pl.Expr) -> pl.Expr:
    """jobs.contract.bare_etag, vectorised (a test holds the two to the same answers)."""
    return expr.str.strip_chars('"')


def canonical_amount(expr: pl.Expr) -> pl.Expr:
    """ "12.50" and "12.5" are one amount (DynamoDB normalises numbers, result.json does not)."""
    return pl.when(expr.str.contains(r"\.")).then(expr.str.replace(r"\.?0+$", "")).otherwise(expr)


def _ts(moment: datetime) -> pl.Expr:
    return pl.lit(moment).cast(pl.Datetime("ms", "UTC"))


def _row(frame: pl.LazyFrame, code: Code, **columns: pl.Expr) -> pl.LazyFrame:
    """Findings of `code` as wide rows: the given identity and evidence columns, the rest null."""
    return frame.select(pl.lit(code.value).alias("code"), *[expr.alias(name) for name, expr in columns.items()])


def _item_identity() -> dict[str, pl.Expr]:
    return {"user_id": pl.col("userId"), "document_id": pl.col("documentId"), "pk": pl.col("pk"), "sk": pl.col("sk")}


def _object_evidence() -> dict[str, pl.Expr]:
    return {"ev_etag": pl.col("etag"), "ev_size": pl.col("size"), "ev_last_modified": pl.col("lastModified")}


@dataclass(frozen=True)
class Prepared:
    """The inputs with the columns several rules share, derived once."""

    items: pl.LazyFrame  # + rawKey (null when rawS3Uri is not in the raw bucket), resultKey
    raw: pl.LazyFrame  # + userId, documentId, badKey, judged
    processed: pl.LazyFrame
    params: RuleParams

    @property
    def valid_processed(self) -> pl.LazyFrame:
        return self.processed.filter(~pl.col("badKey"))

    # Each side's rules share one join, of row numbers on hashes of the key: a full join of the
    # key strings took 3x the time and most of a run's peak memory (1 M x 1 M: 0.39 s -> 0.10 s,
    # measured). The raw-side rules then only filter the pairs.
    @cached_property
    def raw_pairs(self) -> pl.DataFrame:
        """Items and raw objects paired on rawKey = key: `_item`/`_object` are row numbers into
        `items`/`raw`, null on the side without a partner; ETags as hashes (`_itemEtag`,
        `_objectEtag`) and the object's `judged`.
        """
        items = self.items.select(
            *_key_hashes(pl.col("rawKey")), _etag_hash(pl.col("rawEtag")).alias("_itemEtag")
        ).with_row_index("_item")
        objects = self.raw.select(
            *_key_hashes(pl.col("key")), "judged", _etag_hash(pl.col("etag")).alias("_objectEtag")
        ).with_row_index("_object")
        return (
            items.join(objects, on=KEY_HASHES, how="full")
            .drop(KEY_HASHES, [f"{h}_right" for h in KEY_HASHES])
            .collect()
        )

    @cached_property
    def result_pairs(self) -> pl.DataFrame:
        """Items and valid result objects paired on resultKey = key (row numbers as in raw_pairs)."""
        items = self.items.select(*_key_hashes(pl.col("resultKey"))).with_row_index("_item")
        objects = (
            self.processed.select(*_key_hashes(pl.col("key")), "badKey")
            .with_row_index("_object")
            .filter(~pl.col("badKey"))
        )
        return (
            items.join(objects.drop("badKey"), on=KEY_HASHES, how="full")
            .drop(KEY_HASHES, [f"{h}_right" for h in KEY_HASHES])
            .collect()
        )


# Two independent 64-bit hashes stand for a key in the joins: two different keys agree on both
# with odds of about 2^-128 per pair (~1e-21 for a billion items against a billion objects).
# An ETag needs one: a replaced object whose new ETag collides with the old is a 2^-64 event.
KEY_HASHES = ["_h1", "_h2"]
_KEY_SEEDS = (0x5EED1, 0x5EED2)
_ETAG_SEED = 0x5EED3


def _key_hashes(key: pl.Expr) -> list[pl.Expr]:
    # A null key (an item whose rawS3Uri is elsewhere) hashes to null: it pairs with nothing.
    return [
        pl.when(key.is_not_null()).then(key.hash(seed)).alias(name)
        for name, seed in zip(KEY_HASHES, _KEY_SEEDS, strict=True)
    ]


def _etag_hash(etag: pl.Expr) -> pl.Expr:
    return pl.when(etag.is_not_null()).then(unquoted(etag).hash(_ETAG_SEED))


def _rows(frame: pl.LazyFrame, numbers: pl.DataFrame, column: str) -> pl.LazyFrame:
    """The rows of `frame` whose row numbers are in `numbers[column]` (with its other columns)."""
    return frame.with_row_index(column).join(numbers.lazy(), on=column, how="inner").drop(column)


def with_keys(items: pl.LazyFrame, params: RuleParams) -> pl.LazyFrame:
    """Items plus rawKey (null when rawS3Uri is not in the raw bucket) and resultKey."""
    raw_uri_prefix = layout.s3_uri(params.raw_bucket, "")
    return items.with_columns(
        pl.when(pl.col("rawS3Uri").str.starts_with(raw_uri_prefix))
        .then(pl.col("rawS3Uri").str.strip_prefix(raw_uri_prefix))
        .alias("rawKey"),
        result_key(),
    )


def result_key() -> pl.Expr:
    """The result key the item's ids imply: joins on one string beat joins on two."""
    return templates()["result"].build(pl.col("userId"), pl.col("documentId")).alias("resultKey")


def classified(objects: pl.LazyFrame, kind: str, params: RuleParams) -> pl.LazyFrame:
    """Objects plus userId, documentId, badKey and judged (older than the grace period)."""
    judged = (pl.col("lastModified") <= _ts(params.judged_before)).alias("judged")
    return classify_keys(objects, kind).with_columns(judged)


def prepare(inputs: Inputs, params: RuleParams) -> Prepared:
    items, raw, processed = (
        with_keys(inputs.items, params),
        classified(inputs.raw_objects, "raw", params),
        classified(inputs.processed_objects, "result", params),
    )
    # Prepared once, eagerly: each frame is joined by several rules, which then share the
    # derived columns instead of each re-deriving them.
    items_df, raw_df, processed_df = pl.collect_all([items, raw, processed])
    return Prepared(items_df.lazy(), raw_df.lazy(), processed_df.lazy(), params)


# --- the rules, one function each --------------------------------------------------------------
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


def _untracked(objects: pl.LazyFrame, pairs: pl.DataFrame, code: Code) -> pl.LazyFrame:
    """Settled objects in the layout that no item names (no partner in `pairs`)."""
    alone = pairs.filter(pl.col("_item").is_null()).select("_object")
    untracked = _rows(objects, alone, "_object").filter(~pl.col("badKey") & pl.col("judged"))
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
    return _untracked(p.raw, p.raw_pairs, Code.UNPROCESSED_RAW)


def orphan_result(p: Prepared) -> pl.LazyFrame:
    """ORPHAN_RESULT: a settled result.json with no item for its ids."""
    return _untracked(p.processed, p.result_pairs, Code.ORPHAN_RESULT)


def missing_raw(p: Prepared) -> pl.LazyFrame:
    """MISSING_RAW: the item's raw object is gone, unless lifecycle retention expired it by now."""
    params = p.params
    # Any object under the key counts as present, a bad or unjudged one included.
    alone = p.raw_pairs.filter(pl.col("_object").is_null()).select("_item")
    missing = _rows(p.items, alone, "_item").filter(
        (pl.col("status") != TOMBSTONE)
        & pl.col("rawKey").is_not_null()
        & (pl.col("createdAt") >= params.expired_before)
        & (pl.col("createdAt") <= params.settled_before)
    )
    return _row(
        missing,
        Code.MISSING_RAW,
        **_item_identity(),
        bucket=pl.lit(params.raw_bucket),
        key=pl.col("rawKey"),
        ev_raw_s3_uri=pl.col("rawS3Uri"),
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
    objects = _rows(
        p.raw.select(unquoted(pl.col("etag")).alias("objectEtag")), stale.select("_object", "_item"), "_object"
    )
    return _row(
        _rows(p.items, objects.collect(), "_item"),
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
    objects = _rows(p.raw.select("etag", "size", "lastModified"), back.select("_object", "_item"), "_object")
    tombstones = _rows(p.items, objects.collect(), "_item").filter(pl.col("status") == TOMBSTONE)
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
    missing = _rows(p.items, alone, "_item").filter(pl.col("status").is_in(RESULT_PROMISED) & settled)
    return _row(
        missing,
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


# KEY_MISMATCH problems, in the order they are listed.
KEY_PROBLEMS = (
    "PK does not match userId",
    "SK does not match documentId",
    "rawS3Uri is not in the raw bucket",
    "rawS3Uri does not name this document's raw object",
    "resultS3Uri does not name this document's result.json",
)
RESULT_IDS_PROBLEM = "result.json ids do not match its key"


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


_SNAKE = {"status": "status", "vendorName": "vendor_name", "invoiceDate": "invoice_date", "totalAmount": "total_amount"}


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
        **{f"ev_item_{_SNAKE[f]}": pl.col(f) for f in SUMMARY_FIELDS},
        **{f"ev_result_{_SNAKE[f]}": pl.col(f"result_{f}") for f in SUMMARY_FIELDS},
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


# Rules of one item alone, of one object alone, and those that join items with objects: a
# partitioned run (`partitioned`) applies each group where its inputs meet.
ITEM_RULES = (stuck_processing, index_drift, key_mismatch)
OBJECT_RULES = (bad_key,)
RAW_JOIN_RULES = (unprocessed_raw, missing_raw, stale_result, deleted_raw_exists)
RESULT_JOIN_RULES = (orphan_result, missing_result)
RULES = OBJECT_RULES + RAW_JOIN_RULES + RESULT_JOIN_RULES + ITEM_RULES
DEEP_RULES = (result_ids_mismatch, summary_mismatch, result_source_mismatch, result_unreadable)


def find_wide(inputs: Inputs, params: RuleParams) -> pl.DataFrame:
    """Every rule's findings as wide rows (findings.WIDE_SCHEMA), unsorted."""
    p = prepare(inputs, params)
    parts = [rule(p) for rule in RULES]
    if params.deep and inputs.results is not None:
        parts += [rule(p, inputs.results) for rule in DEEP_RULES]
    # One rule at a time: each join still uses every core, and only one rule's hash tables are
    # alive at once (all at once cost ~0.8 GB more at a million items for no gain on 2 cores).
    collected = [part.collect() for part in parts]
    return pl.concat(collected, how="diagonal_relaxed") if collected else empty(WIDE_SCHEMA)


def find(inputs: Inputs, params: RuleParams) -> pl.DataFrame:
    """All findings, rendered and sorted; the frame has FINDINGS_SCHEMA."""
    return render(find_wide(inputs, params))
