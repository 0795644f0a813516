r"""The reconciliation rules in Trino SQL: what Athena runs, and DuckDB runs after sqlglot translates it.

One query reads three relations shaped like the Glue tables the stack declares (`Relations`): the
DynamoDB export (one column `item`, a struct of `{"S"|"N": value}` per attribute, as the export
writes it) and the raw and processed S3 Inventory tables (AWS's Parquet columns), plus, with
--deep, the result.json contents. It returns the engine-neutral wide rows of `findings`
(`WIDE_SCHEMA`), which `findings.render` turns into the report. Every literal comes from the
contract: key templates from `keys.templates()` (built by `jobs.contract.layout`), id rules from
`layout.validate_id`/`validate_filename` as regular expressions, thresholds from `RuleParams`.
The polars rules (`rules`) are the other implementation; an equivalence test holds the two to the
same findings, finding for finding. Pure: no I/O (sqlglot only transpiles text).

Regular expressions use `\\A`/`\\z` (not `^`/`$`, which are line anchors in Athena's Joni engine)
and Unicode classes that Joni, Java and RE2 (DuckDB) all know.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from jobs.contract import Status, layout
from jobs.contract.item import MARKER_FIELDS
from jobs.reconcile.rules.findings import SUMMARY_COLUMNS, SUMMARY_FIELDS, WIDE_SCHEMA, Code
from jobs.reconcile.rules.frames import (
    DEEP_ONLY_COLUMNS,
    INTEGER_ITEM_COLUMNS,
    ITEM_ATTRIBUTE_OF,
    NUMERIC_ITEM_COLUMNS,
    RESULTS_SCHEMA,
)
from jobs.reconcile.rules.keys import Template, templates
from jobs.reconcile.rules.params import RuleParams
from jobs.reconcile.rules.polars_rules import (
    KEY_PROBLEMS,
    RESULT_IDS_PROBLEM,
    RESULT_PROMISED,
    SETTLED_BY_REVIEW,
    TOMBSTONE,
)

# The literal and the DuckDB translation live in jobs.sql (the audit shares them); kept here by name
# for the engines and the benchmarks that say `sql.lit`, `sql.to_duckdb`.
from jobs.sql import lit as lit
from jobs.sql import to_duckdb as to_duckdb

# Trino types of the wide columns (Athena's UNLOAD writes them as Parquet).
_SQL_TYPES = {"String": "varchar", "Int64": "bigint", "Datetime": "timestamp"}


def sql_type(column: str) -> str:
    return _SQL_TYPES[type(WIDE_SCHEMA[column]).__name__]


def _ts(moment_text: str) -> str:
    """A TIMESTAMP literal (UTC wall time) from layout.format_ts text."""
    return f"TIMESTAMP {lit(moment_text.replace('T', ' ').rstrip('Z'))}"


def _concat(template: Template, *columns: str) -> str:
    pieces = [lit(template.parts[0])]
    for column, literal in zip(columns, template.parts[1:], strict=True):
        pieces += [column, lit(literal)]
    return "concat(" + ", ".join(p for p in pieces if p != "''") + ")"


# --- the contract's id rules as expressions (layout.validate_id / validate_filename) -------------
_FORBIDDEN_CLASSES = r"\p{Cc}\p{Cf}\p{Zl}\p{Zp}"  # layout._has_control
_EDGE_SPACE = r"\A\p{Zs}|\p{Zs}\z"  # what str.strip() removes beyond the control classes


_ID_CHARS = lit(r"\A[^#/\\" + _FORBIDDEN_CLASSES + "]{1," + str(layout.MAX_ID_LENGTH) + r"}\z")
_FILENAME_CHARS = lit(r"\A[^/\\" + _FORBIDDEN_CLASSES + r"]+\z")


# A dot as written or percent-encoded: validate_id refuses ids that *decode* (urllib's unquote,
# one level) to a traversal, and only these spellings decode to a dot.
_DOT = r"(\.|%2[eE])"
_TRAVERSAL = lit(_DOT + _DOT)
_ONLY_DOT = lit(r"\A" + _DOT + r"\z")


def valid_id(x: str) -> str:
    return (
        f"(regexp_like({x}, {_ID_CHARS}) AND NOT regexp_like({x}, {_TRAVERSAL})"
        f" AND NOT regexp_like({x}, {_ONLY_DOT}) AND NOT regexp_like({x}, '%(2[fF]|5[cC])')"
        f" AND {x} = normalize({x}, NFC) AND NOT regexp_like({x}, {lit(_EDGE_SPACE)}))"
    )


def valid_filename(x: str) -> str:
    return (
        f"(regexp_like({x}, {_FILENAME_CHARS}) AND NOT starts_with({x}, '..')"
        f" AND {x} <> '.' AND NOT regexp_like({x}, '%(2[fF]|5[cC])')"
        f" AND length(to_utf8({x})) <= {layout.MAX_FILENAME_LENGTH})"
    )


def _key_pattern(template: Template) -> str:
    """`raw/{u}/{d}/{f}` → a pattern capturing each placeholder as one path segment."""
    out = r"\A" + _escape(template.parts[0])
    for literal in template.parts[1:]:
        out += "([^/]*)" + _escape(literal)
    return out + r"\z"


def _escape(text: str) -> str:
    return "".join("\\" + c if c in r".^$*+?()[]{}|\\" else c for c in text)


def _classified(relation: str, kind: str, judged_before: str) -> str:
    """Objects with userId/documentId (null when the key is outside the layout) and `judged`."""
    template = templates()[kind]
    pattern = lit(_key_pattern(template))
    groups = len(template.parts) - 1

    def group(n: int) -> str:
        return f"CASE WHEN regexp_like(key, {pattern}) THEN regexp_extract(key, {pattern}, {n}) END"

    checks = [valid_id("g1"), valid_id("g2")] + ([valid_filename("g3")] if groups == 3 else [])
    extracted = ", ".join(f"{group(n)} AS g{n}" for n in range(1, groups + 1))
    return f"""(
  SELECT bucket, key, etag, size, lastModified,
         CASE WHEN valid THEN g1 END AS userId,
         CASE WHEN valid THEN g2 END AS documentId,
         lastModified <= {judged_before} AS judged
  FROM (
    SELECT *, coalesce({" AND ".join(checks)}, false) AS valid
    FROM (SELECT bucket, key, etag, size, lastModified, {extracted} FROM {relation})
  )
)"""


# --- the inputs ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Relations:
    """What the query reads: table names or parenthesised subqueries in the Glue tables' shapes."""

    export: str  # column `item`: struct<attribute: struct<S|N: varchar>>
    raw_inventory: str  # columns bucket, key, size, last_modified_date, e_tag
    processed_inventory: str
    results: str | None = None  # RESULTS_SCHEMA columns (--deep; DuckDB only)


def export_columns(deep: bool) -> dict[str, str]:
    """The export attributes the query reads and their DynamoDB type tags (from the contract)."""
    return {
        attribute: ("N" if column in NUMERIC_ITEM_COLUMNS else "S")
        for column, attribute in ITEM_ATTRIBUTE_OF.items()
        if deep or column not in DEEP_ONLY_COLUMNS
    }


def _table_rows(relation: str, params: RuleParams) -> str:
    """Every row of the export as the items frame's columns (documents and duplicate markers)."""
    columns = []
    for column, attribute in ITEM_ATTRIBUTE_OF.items():
        if column in DEEP_ONLY_COLUMNS and not params.deep:
            columns.append(f"CAST(NULL AS varchar) AS {column}")
        elif column in INTEGER_ITEM_COLUMNS:
            columns.append(f"TRY_CAST(item.{attribute}.N AS bigint) AS {column}")
        else:
            columns.append(f"item.{attribute}.{'N' if column in NUMERIC_ITEM_COLUMNS else 'S'} AS {column}")
    return f"(SELECT {', '.join(columns)} FROM {relation})"


def _is_marker(sk: str) -> str:
    return f"coalesce(starts_with({sk}, {lit(templates()['marker'].parts[0])}), false)"


def _items(params: RuleParams) -> str:
    """The documents (every row but the duplicate markers and the users' erasure markers), with
    rawKey and resultKey.
    """
    raw_prefix = layout.s3_uri(params.raw_bucket, "")
    result_key = _concat(templates()["result"], "userId", "documentId")
    # Users' erasure markers (jobs.erasure) are not documents: left out, as the polars rules do.
    return f"""(
  SELECT *,
         CASE WHEN starts_with(rawS3Uri, {lit(raw_prefix)}) THEN substr(rawS3Uri, {len(raw_prefix) + 1}) END AS rawKey,
         {result_key} AS resultKey
  FROM table_rows WHERE NOT {_is_marker("sk")} AND sk IS DISTINCT FROM {lit(layout.erasure_sk())}
    AND pk IS DISTINCT FROM {lit(layout.textract_pages_pk())}
)"""


def _markers() -> str:
    """The duplicate markers, with the kind and digest their sort key names (DUP#{kind}#{digest})."""
    prefix, between, _ = templates()["marker"].parts
    rest = f"substr(sk, {len(prefix) + 1})"
    return f"""(
  SELECT userId, documentId, pk, sk, createdAt, expiresAt,
         CASE WHEN strpos({rest}, {lit(between)}) > 0
              THEN substr({rest}, 1, strpos({rest}, {lit(between)}) - 1) ELSE {rest} END AS kind,
         CASE WHEN strpos({rest}, {lit(between)}) > 0
              THEN substr({rest}, strpos({rest}, {lit(between)}) + {len(between)}) END AS digest
  FROM table_rows WHERE {_is_marker("sk")}
)"""


def _claims() -> str:
    """What the documents say they hold: a row per document and kind of marker, tombstones apart."""
    held = "\n  UNION ALL\n".join(
        f"  SELECT userId, documentId, pk, sk, status, updatedAt, version, expiresAt, {lit(kind.value)} AS kind,"
        f" {column} AS digest FROM items WHERE {column} IS NOT NULL AND status IS DISTINCT FROM {lit(TOMBSTONE)}"
        for kind, column in MARKER_FIELDS.items()
    )
    return f"(\n{held}\n)"


def _objects(relation: str) -> str:
    return (
        f"(SELECT bucket, key, {_unquoted('e_tag')} AS etag, size, last_modified_date AS lastModified FROM {relation})"
    )


def _unquoted(x: str) -> str:
    """jobs.contract.bare_etag."""
    return f"""regexp_replace({x}, '\\A"+|"+\\z', '')"""


def _canonical_amount(x: str) -> str:
    return f"CASE WHEN strpos({x}, '.') > 0 THEN regexp_replace({x}, '\\.?0+\\z', '') ELSE {x} END"


# --- the rules, one SELECT each (each names only its own columns) --------------------------------
_ITEM_ID = "userId AS user_id, documentId AS document_id, pk, sk"
_OBJECT_EVIDENCE = "etag AS ev_etag, size AS ev_size, lastModified AS ev_last_modified"


def _expiring(params: RuleParams, kind: str) -> str:
    """rules.expiring: the object's retention is just ending (RuleParams.expiring)."""
    windows = [
        f"(lastModified > {_ts(layout.format_ts(after))} AND lastModified <= {_ts(layout.format_ts(until))})"
        for after, until in params.expiring(kind)
    ]
    return "(" + " OR ".join(windows) + ")" if windows else "false"


def _object_rules(params: RuleParams) -> dict[str, str]:
    """The rules of objects: outside the layout, or named by no item (unless just expiring)."""
    return {
        Code.BAD_KEY: f"""
  SELECT {lit(Code.BAD_KEY)} AS code, bucket, key, 'raw' AS ev_key_kind, size AS ev_size,
         lastModified AS ev_last_modified
  FROM raw WHERE userId IS NULL AND judged
  UNION ALL
  SELECT {lit(Code.BAD_KEY)}, bucket, key, 'result', size, lastModified
  FROM processed WHERE userId IS NULL AND judged""",
        Code.UNPROCESSED_RAW: f"""
  SELECT {lit(Code.UNPROCESSED_RAW)} AS code, userId AS user_id, documentId AS document_id, bucket, key,
         {_OBJECT_EVIDENCE}
  FROM raw o WHERE userId IS NOT NULL AND judged AND NOT {_expiring(params, "raw")}
    AND NOT EXISTS (SELECT 1 FROM items i WHERE i.rawKey = o.key)""",
        Code.ORPHAN_RESULT: f"""
  SELECT {lit(Code.ORPHAN_RESULT)} AS code, userId AS user_id, documentId AS document_id, bucket, key,
         {_OBJECT_EVIDENCE}
  FROM processed o
  WHERE userId IS NOT NULL AND judged AND NOT {_expiring(params, "result")}
    AND NOT EXISTS (SELECT 1 FROM items i WHERE i.resultKey = o.key)""",
    }


def _item_join_rules(params: RuleParams) -> dict[str, str]:
    """The rules of items against the objects they name: missing or replaced."""
    raw_b, proc_b = lit(params.raw_bucket), lit(params.processed_bucket)
    settled, as_of = lit(params.settled_before), lit(params.as_of_text)
    statuses = ", ".join(lit(s) for s in RESULT_PROMISED)
    item_etag, object_etag = _unquoted("i.rawEtag"), _unquoted("o.etag")
    return {
        Code.MISSING_RAW: f"""
  SELECT {lit(Code.MISSING_RAW)} AS code, {_ITEM_ID}, {raw_b} AS bucket, rawKey AS key,
         rawS3Uri AS ev_raw_s3_uri, status AS ev_status, createdAt AS ev_created_at, version AS ev_version
  FROM items i
  WHERE status <> {lit(TOMBSTONE)} AND rawKey IS NOT NULL
    AND coalesce(retainUntil > {as_of}, createdAt >= {lit(params.expired_before)}) AND createdAt <= {settled}
    AND NOT EXISTS (SELECT 1 FROM raw o WHERE o.key = i.rawKey)""",
        Code.STALE_RESULT: f"""
  SELECT {lit(Code.STALE_RESULT)} AS code, i.userId AS user_id, i.documentId AS document_id, i.pk, i.sk,
         {raw_b} AS bucket, i.rawKey AS key, {item_etag} AS ev_item_etag, {object_etag} AS ev_object_etag,
         i.status AS ev_status, i.version AS ev_version
  FROM items i JOIN raw o ON o.key = i.rawKey
  WHERE o.judged AND {item_etag} IS DISTINCT FROM {object_etag}""",
        Code.DELETED_RAW_EXISTS: f"""
  SELECT {lit(Code.DELETED_RAW_EXISTS)} AS code, i.userId AS user_id, i.documentId AS document_id, i.pk, i.sk,
         {raw_b} AS bucket, i.rawKey AS key, o.etag AS ev_etag, o.size AS ev_size,
         o.lastModified AS ev_last_modified, i.createdAt AS ev_created_at, i.version AS ev_version
  FROM items i JOIN raw o ON o.key = i.rawKey
  WHERE o.judged AND i.status = {lit(TOMBSTONE)}""",
        Code.MISSING_RESULT: f"""
  SELECT {lit(Code.MISSING_RESULT)} AS code, {_ITEM_ID}, {proc_b} AS bucket, resultKey AS key,
         status AS ev_status, resultS3Uri AS ev_result_s3_uri, version AS ev_version
  FROM items i
  WHERE status IN ({statuses}) AND (updatedAt IS NULL OR updatedAt <= {settled})
    AND (retainUntil IS NULL OR retainUntil > {as_of})
    AND NOT EXISTS (SELECT 1 FROM processed o WHERE o.userId IS NOT NULL AND o.key = i.resultKey)""",
    }


def _key_checks(params: RuleParams) -> list[str]:
    """KEY_MISMATCH's checks, in the order of KEY_PROBLEMS (each true when that problem is there)."""
    t = templates()
    raw_dir = _concat(t["raw_dir"], "userId", "documentId")
    rest = f"substr(rawKey, length({raw_dir}) + 1)"
    expected_result_uri = f"concat({lit(layout.s3_uri(params.processed_bucket, ''))}, resultKey)"
    return [
        f"pk IS DISTINCT FROM {_concat(t['pk'], 'userId')}",
        f"sk IS DISTINCT FROM {_concat(t['sk'], 'documentId')}",
        "rawKey IS NULL",
        f"rawKey IS NOT NULL AND (NOT starts_with(rawKey, {raw_dir}) OR length({rest}) = 0 OR strpos({rest}, '/') > 0)",
        f"resultS3Uri IS NOT NULL AND resultS3Uri IS DISTINCT FROM {expected_result_uri}",
    ]


def _item_rules(params: RuleParams) -> dict[str, str]:
    """The rules of one item alone: a stuck claim, index drift, keys that name another document."""
    expected_gsi1pk = _concat(templates()["status"], "status")
    checks = _key_checks(params)
    problems = ", ".join(
        f"CASE WHEN coalesce({c}, true) THEN {lit(text)} END" for c, text in zip(checks, KEY_PROBLEMS, strict=True)
    )
    return {
        Code.STUCK_PROCESSING: f"""
  SELECT {lit(Code.STUCK_PROCESSING)} AS code, {_ITEM_ID}, leaseOwner AS ev_lease_owner,
         leaseExpiresAt AS ev_lease_expires_at, attempts AS ev_attempts, version AS ev_version
  FROM items
  WHERE status = {lit(Status.PROCESSING)}
    AND (leaseExpiresAt IS NULL OR leaseExpiresAt < {lit(params.stuck_before)})""",
        Code.INDEX_DRIFT: f"""
  SELECT {lit(Code.INDEX_DRIFT)} AS code, {_ITEM_ID}, gsi1pk AS ev_gsi1pk, {expected_gsi1pk} AS ev_expected_gsi1pk,
         gsi1sk AS ev_gsi1sk, createdAt AS ev_created_at, version AS ev_version
  FROM items WHERE gsi1pk IS DISTINCT FROM {expected_gsi1pk} OR gsi1sk IS DISTINCT FROM createdAt""",
        Code.KEY_MISMATCH: f"""
  SELECT {lit(Code.KEY_MISMATCH)} AS code, {_ITEM_ID},
         array_join(filter(ARRAY[{problems}], x -> x IS NOT NULL), '; ') AS ev_problems,
         rawS3Uri AS ev_raw_s3_uri, resultS3Uri AS ev_result_s3_uri
  FROM items WHERE {" OR ".join(f"coalesce({c}, true)" for c in checks)}""",
    }


_SAME_MARKER = "c.userId = m.userId AND c.documentId = m.documentId AND c.kind = m.kind AND c.digest = m.digest"


def _marker_rules(params: RuleParams) -> dict[str, str]:
    """Duplicate markers against the documents that say they hold them (rules.MARKER_KEY)."""
    settled = lit(params.settled_before)
    # rules.not_expired: past its TTL, a marker or its document may go at any time, apart.
    alive = f"(expiresAt IS NULL OR expiresAt > {layout.epoch_seconds(params.as_of)})"
    return {
        Code.ORPHAN_MARKER: f"""
  SELECT {lit(Code.ORPHAN_MARKER)} AS code, {_ITEM_ID}, kind AS ev_marker_kind, digest AS ev_marker_digest,
         createdAt AS ev_created_at
  FROM markers m
  WHERE (createdAt IS NULL OR createdAt <= {settled}) AND {alive}
    AND NOT EXISTS (SELECT 1 FROM claims c WHERE {_SAME_MARKER})""",
        Code.MISSING_MARKER: f"""
  SELECT {lit(Code.MISSING_MARKER)} AS code, {_ITEM_ID}, kind AS ev_marker_kind, digest AS ev_marker_digest,
         status AS ev_status, version AS ev_version
  FROM claims c
  WHERE (updatedAt IS NULL OR updatedAt <= {settled}) AND {alive}
    AND NOT EXISTS (SELECT 1 FROM markers m WHERE {_SAME_MARKER})""",
    }


def _rules(params: RuleParams, deep: bool) -> dict[str, str]:
    """Every rule's SELECT by name (a finding code, or a name of its own for a code's second shape)."""
    rules: dict[str, str] = {
        **_object_rules(params),
        **_item_join_rules(params),
        **_marker_rules(params),
        **_item_rules(params),
    }
    if deep:
        rules.update(_deep_rules())
    return rules


# --deep: result.json contents beside the ids their key names, and the items compared with them.
_LOCATED = (
    "SELECT r.*, o.bucket, o.userId AS keyUserId, o.documentId AS keyDocumentId "
    "FROM results r JOIN processed o ON o.key = r.key AND o.userId IS NOT NULL"
)
_PAIR_ID = "i.userId AS user_id, i.documentId AS document_id, i.pk, i.sk, r.bucket, r.key"


def _pair() -> str:
    """FROM clause: each compared item (not PROCESSING, not a tombstone) with its readable result.json."""
    compared = f"SELECT * FROM items WHERE status NOT IN ({lit(Status.PROCESSING)}, {lit(TOMBSTONE)})"
    return (
        f"FROM ({compared}) i JOIN ({_LOCATED} WHERE r.readError IS NULL) r "
        "ON r.keyUserId = i.userId AND r.keyDocumentId = i.documentId"
    )


def _summary_mismatch() -> str:
    def compare(field: str) -> str:
        left, right = (
            (_canonical_amount(f"i.{field}"), _canonical_amount(f"r.{field}"))
            if field == "totalAmount"
            else (f"i.{field}", f"r.{field}")
        )
        differs = f"{left} IS DISTINCT FROM {right}"
        if field == "status":
            review, processed = (lit(s) for s in SETTLED_BY_REVIEW)
            differs += f" AND NOT (r.status = {review} AND i.status = {processed})"
        return f"CASE WHEN {differs} THEN {lit(field)} END"

    def shown(side: str, field: str) -> str:  # amounts in evidence as compared: canonical
        return _canonical_amount(f"{side}.{field}") if field == "totalAmount" else f"{side}.{field}"

    fields = f"filter(ARRAY[{', '.join(compare(f) for f in SUMMARY_FIELDS)}], x -> x IS NOT NULL)"
    evidence = [(f"ev_item_{SUMMARY_COLUMNS[f]}", f"ev_result_{SUMMARY_COLUMNS[f]}", f) for f in SUMMARY_FIELDS]
    computed = ", ".join(f"{shown('i', f)} AS {item}, {shown('r', f)} AS {result}" for item, result, f in evidence)
    return f"""
  SELECT {lit(Code.SUMMARY_MISMATCH)} AS code, user_id, document_id, pk, sk, bucket, key,
         array_join(fields, ',') AS ev_fields, {", ".join(f"{item}, {result}" for item, result, _ in evidence)}
  FROM (SELECT {_PAIR_ID}, {fields} AS fields, {computed} {_pair()})
  WHERE cardinality(fields) > 0"""


def _deep_rules() -> dict[str, str]:
    """The rules of result.json contents (--deep)."""
    item_etag, result_etag = _unquoted("i.rawEtag"), _unquoted("r.sourceEtag")
    return {
        "KEY_MISMATCH_RESULT": f"""
  SELECT {lit(Code.KEY_MISMATCH)} AS code, keyUserId AS user_id, keyDocumentId AS document_id, bucket, key,
         {lit(RESULT_IDS_PROBLEM)} AS ev_problems, userId AS ev_result_user_id, documentId AS ev_result_document_id
  FROM ({_LOCATED} WHERE r.readError IS NULL)
  WHERE userId IS DISTINCT FROM keyUserId OR documentId IS DISTINCT FROM keyDocumentId""",
        Code.SUMMARY_MISMATCH: _summary_mismatch(),
        Code.RESULT_SOURCE_MISMATCH: f"""
  SELECT {lit(Code.RESULT_SOURCE_MISMATCH)} AS code, {_PAIR_ID}, i.rawS3Uri AS ev_raw_s3_uri,
         r.sourceUri AS ev_result_source_uri, {item_etag} AS ev_item_etag, {result_etag} AS ev_result_etag,
         i.status AS ev_status, i.version AS ev_version
  {_pair()} WHERE r.sourceUri IS DISTINCT FROM i.rawS3Uri OR {result_etag} IS DISTINCT FROM {item_etag}""",
        Code.RESULT_UNREADABLE: f"""
  SELECT {lit(Code.RESULT_UNREADABLE)} AS code, keyUserId AS user_id, keyDocumentId AS document_id, bucket, key,
         readError AS ev_error
  FROM ({_LOCATED} WHERE r.readError IS NOT NULL)""",
    }


def _widened(rule_sql: str) -> str:
    """The rule's rows with every wide column, in WIDE_SCHEMA order (nulls of the right type)."""
    parsed = sqlglot.parse_one(rule_sql, read="trino")
    if not isinstance(parsed, exp.Query):
        raise AssertionError(f"a rule is not a query: {rule_sql[:80]}")
    own = set(parsed.named_selects)
    unknown = own - WIDE_SCHEMA.keys()
    if unknown:
        raise AssertionError(f"a rule selects columns outside the wide schema: {sorted(unknown)}")
    columns = [c if c in own else f"CAST(NULL AS {sql_type(c)}) AS {c}" for c in WIDE_SCHEMA]
    return f"SELECT {', '.join(columns)} FROM ({rule_sql}\n)"


def query(relations: Relations, params: RuleParams) -> str:
    """The whole reconcile as one Trino query returning WIDE_SCHEMA rows."""
    deep = params.deep and relations.results is not None
    judged = _ts(layout.format_ts(params.judged_before))
    ctes = {
        "table_rows": _table_rows(relations.export, params),
        "items": _items(params),
        "markers": _markers(),
        "claims": _claims(),
        "raw": _classified(_objects(relations.raw_inventory), "raw", judged),
        "processed": _classified(_objects(relations.processed_inventory), "result", judged),
    }
    if deep:
        ctes["results"] = f"(SELECT {', '.join(RESULTS_SCHEMA)} FROM {relations.results})"
    with_clause = ",\n".join(f"{name} AS {body}" for name, body in ctes.items())
    union = "\nUNION ALL\n".join(_widened(sql) for sql in _rules(params, deep).values())
    return f"WITH {with_clause}\n{union}"
