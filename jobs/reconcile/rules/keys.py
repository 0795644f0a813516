"""Keys as the rules read them: templates from the layout builders, objects' keys classified.

Every key format is derived from the builders in `jobs.contract.layout` (a template is built with
placeholder ids and split around them), so neither the polars rules nor the SQL (`sql`) can drift
from the contract. `classify_keys` gives each object its ids, or marks its key outside the layout:
one regex pass vouches for the keys made only of characters the layout always accepts, and the
rest go through the layout's own parser one by one. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import polars as pl

from jobs.contract import layout
from jobs.errors import InvalidKeyError
from jobs.reconcile.rules.params import RuleParams


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
        "marker": split_template(layout.marker_sk(_MARKER_KIND, _MARKER_DIGEST), _MARKER_KIND, _MARKER_DIGEST),
    }


# Placeholders a marker's sort key accepts (an upper-case kind, a hex digest).
_MARKER_KIND, _MARKER_DIGEST = "KIND", "0" * 64


def is_marker() -> pl.Expr:
    """The rows of the items frame that are duplicate markers (their sort key's prefix)."""
    return pl.col("sk").str.starts_with(templates()["marker"].parts[0]).fill_null(False)


def marker_parts() -> list[pl.Expr]:
    """A marker row's kind and digest, read from its sort key (DUP#{kind}#{digest})."""
    prefix, between, _ = templates()["marker"].parts
    rest = pl.col("sk").str.strip_prefix(prefix)
    split = rest.str.splitn(between, 2)
    return [split.struct.field("field_0").alias("kind"), split.struct.field("field_1").alias("digest")]


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


def _fast_marked(objects: pl.LazyFrame, kind: str) -> pl.DataFrame:
    """Objects plus `_groups` (the fast pattern's ids) and `_fast` (the fast path vouches for them)."""
    groups = {"userId": SAFE_ID, "documentId": SAFE_ID}
    if kind == "raw":
        groups["filename"] = SAFE_FILENAME
    # One regex pass extracts every group; a null userId means the fast path did not match.
    parsed = pl.col("key").str.extract_groups(fast_pattern(templates()[kind], groups))
    groups_col = pl.col("_groups")
    fast_ok = groups_col.struct.field("userId").is_not_null()
    if kind == "raw":
        # validate_filename refuses "." and names starting with ".." (path components), which the
        # class allows (found by the engines' equivalence test: "..x" was read as a valid name).
        filename = groups_col.struct.field("filename")
        fast_ok = fast_ok & (filename != ".") & ~filename.str.starts_with("..")
    return objects.with_columns(parsed.alias("_groups")).with_columns(fast_ok.fill_null(False).alias("_fast")).collect()


def classify_keys(objects: pl.LazyFrame, kind: str) -> pl.LazyFrame:
    """Add userId, documentId and badKey (true when the key is outside the layout)."""
    marked = _fast_marked(objects, kind)
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


def result_key() -> pl.Expr:
    """The result key the item's ids imply: joins on one string beat joins on two."""
    return templates()["result"].build(pl.col("userId"), pl.col("documentId")).alias("resultKey")


def with_keys(items: pl.LazyFrame, params: RuleParams) -> pl.LazyFrame:
    """Items plus rawKey (null when rawS3Uri is not in the raw bucket) and resultKey; users'
    erasure markers (jobs.erasure) are not documents and are left out.
    """
    raw_uri_prefix = layout.s3_uri(params.raw_bucket, "")
    # Nor is the nights' Textract page counter (jobs.ingest.pages).
    documents = pl.col("sk").ne_missing(layout.erasure_sk()) & pl.col("pk").ne_missing(layout.textract_pages_pk())
    return items.filter(documents).with_columns(
        pl.when(pl.col("rawS3Uri").str.starts_with(raw_uri_prefix))
        .then(pl.col("rawS3Uri").str.strip_prefix(raw_uri_prefix))
        .alias("rawKey"),
        result_key(),
    )


def unquoted(expr: pl.Expr) -> pl.Expr:
    """jobs.contract.bare_etag, vectorised (a test holds the two to the same answers)."""
    return expr.str.strip_chars('"')
