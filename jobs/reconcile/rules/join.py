"""The machinery the polars rules share: inputs prepared once, each side joined once, on key hashes.

`prepare` derives the columns several rules read (items' rawKey and resultKey, objects' ids,
badKey and `judged`) once. Each side's rules then share one join (`Prepared.raw_pairs`,
`Prepared.result_pairs`): row numbers of items and objects paired on two 64-bit hashes of the key
rather than on the key strings, which is much cheaper in time and memory (docs/reconcile.md,
Performance); the rules only filter the pairs and look rows up by number (`rows_at`). The hashes
are seeded but not cryptographic, and keys are chosen by users, so a pair is never trusted on its
hashes alone: the key strings of every matched pair are compared (only matched rows, a chunk at a
time), and a pair whose keys differ is split back into an item and an object without a partner.
An ETag is compared by one hash: a replaced object whose new ETag collides with the old in 64
bits is a 2^-64 event per replacement. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import polars as pl

from jobs.contract import layout
from jobs.reconcile.rules.frames import Inputs
from jobs.reconcile.rules.keys import classify_keys, is_marker, unquoted, with_keys
from jobs.reconcile.rules.params import RuleParams

KEY_HASHES = ["_h1", "_h2"]
_KEY_SEEDS = (0x5EED1, 0x5EED2)
_ETAG_SEED = 0x5EED3
# Matched pairs whose key strings are gathered and compared at a time.
VERIFY_CHUNK = 500_000
# A partitioned run's result side holds an item's resultS3Uri only where it is not the one its ids
# imply (`Prepared.odd_uris`), and this flag where it is: held whole, the URIs were a third of the
# side's bytes, and only MISSING_RESULT's evidence reads them (`result_uris`).
URI_AS_IMPLIED = "_resultUriAsImplied"


def key_hashes(key: pl.Expr) -> list[pl.Expr]:
    """The two hash columns that stand for `key` in a join."""
    # A null key (an item whose rawS3Uri is elsewhere) hashes to null: it pairs with nothing.
    return [
        pl.when(key.is_not_null()).then(key.hash(seed)).alias(name)
        for name, seed in zip(KEY_HASHES, _KEY_SEEDS, strict=True)
    ]


def etag_hash(etag: pl.Expr) -> pl.Expr:
    return pl.when(etag.is_not_null()).then(unquoted(etag).hash(_ETAG_SEED))


def rows_at(frame: pl.LazyFrame, numbers: pl.DataFrame, column: str) -> pl.LazyFrame:
    """The rows of `frame` whose row numbers are in `numbers[column]` (with its other columns)."""
    return frame.with_row_index(column).join(numbers.lazy(), on=column, how="inner").drop(column)


def _collided(pairs: pl.DataFrame, item_keys: pl.Series, object_keys: pl.Series) -> pl.Series:
    """True for each matched pair whose key strings differ (hashes that collided): the strings
    are gathered for the pairs only, VERIFY_CHUNK pairs at a time, so memory stays bounded.
    """
    parts = []
    for start in range(0, pairs.height, VERIFY_CHUNK):
        chunk = pairs.slice(start, VERIFY_CHUNK)
        item, obj = chunk.get_column("_item"), chunk.get_column("_object")
        left, right = item_keys.gather(item), object_keys.gather(obj)
        parts.append(item.is_not_null() & obj.is_not_null() & left.ne_missing(right))
    return pl.concat(parts) if parts else pl.Series(dtype=pl.Boolean)


def _paired(items: pl.LazyFrame, objects: pl.LazyFrame, item_keys: pl.Series, object_keys: pl.Series) -> pl.DataFrame:
    """A full join of item and object row numbers on KEY_HASHES (the hashes dropped), every
    matched pair checked on its key strings (`item_keys`/`object_keys`, by row number): a pair
    whose keys differ is dropped, and its item and its object each come back alone unless they
    have a true partner, as a join on the strings would have them.
    """
    pairs = (
        items.join(objects, on=KEY_HASHES, how="full").drop(KEY_HASHES, [f"{h}_right" for h in KEY_HASHES]).collect()
    )
    collided = _collided(pairs, item_keys, object_keys)
    if not collided.any():
        return pairs
    wrong, right = pairs.filter(collided), pairs.filter(~collided)
    item_columns = [c for c in items.collect_schema().names() if c not in KEY_HASHES]
    object_columns = [c for c in objects.collect_schema().names() if c not in KEY_HASHES]
    alone = [
        wrong.select(columns).unique(number).join(right.select(number).drop_nulls(), on=number, how="anti")
        for columns, number in ((item_columns, "_item"), (object_columns, "_object"))
    ]
    return pl.concat([right, *alone], how="diagonal_relaxed")


def _column(frame: pl.LazyFrame, name: str) -> pl.Series:
    return frame.select(name).collect().get_column(name)


@dataclass(frozen=True)
class Prepared:
    """The inputs with the columns several rules share, derived once."""

    items: pl.LazyFrame  # + rawKey (null when rawS3Uri is not in the raw bucket), resultKey
    raw: pl.LazyFrame  # + userId, documentId, badKey, judged
    processed: pl.LazyFrame
    params: RuleParams
    # The duplicate markers (rows of the table's items frame apart from the documents; the result
    # key their holder's ids imply, so a partitioned run meets them beside their holder).
    markers: pl.LazyFrame | None = None
    # pk, sk and resultS3Uri of the items whose URI is not the implied one, when the items hold
    # URI_AS_IMPLIED instead of resultS3Uri (None: they hold resultS3Uri).
    odd_uris: pl.LazyFrame | None = None

    @property
    def valid_processed(self) -> pl.LazyFrame:
        return self.processed.filter(~pl.col("badKey"))

    @cached_property
    def raw_pairs(self) -> pl.DataFrame:
        """Items and raw objects paired on rawKey = key: `_item`/`_object` are row numbers into
        `items`/`raw`, null on the side without a partner; ETags as hashes (`_itemEtag`,
        `_objectEtag`) and the object's `judged`.
        """
        items = self.items.select(
            *key_hashes(pl.col("rawKey")), etag_hash(pl.col("rawEtag")).alias("_itemEtag")
        ).with_row_index("_item")
        objects = self.raw.select(
            *key_hashes(pl.col("key")), "judged", etag_hash(pl.col("etag")).alias("_objectEtag")
        ).with_row_index("_object")
        return _paired(items, objects, _column(self.items, "rawKey"), _column(self.raw, "key"))

    @cached_property
    def result_pairs(self) -> pl.DataFrame:
        """Items and valid result objects paired on resultKey = key (row numbers as in raw_pairs)."""
        items = self.items.select(*key_hashes(pl.col("resultKey"))).with_row_index("_item")
        objects = (
            self.processed.select(*key_hashes(pl.col("key")), "badKey")
            .with_row_index("_object")
            .filter(~pl.col("badKey"))
        )
        return _paired(items, objects.drop("badKey"), _column(self.items, "resultKey"), _column(self.processed, "key"))


def result_uris(p: Prepared, items: pl.LazyFrame) -> pl.LazyFrame:
    """`items` (rows of `p.items`) with their resultS3Uri, rebuilt where the run holds the flag."""
    if p.odd_uris is None:
        return items
    implied = pl.lit(layout.s3_uri(p.params.processed_bucket, "")) + pl.col("resultKey")
    odd = p.odd_uris.select("pk", "sk", pl.col("resultS3Uri").alias("_odd"))
    uri = pl.when(pl.col(URI_AS_IMPLIED)).then(implied).otherwise(pl.col("_odd")).alias("resultS3Uri")
    return items.join(odd, on=["pk", "sk"], how="left").with_columns(uri).drop("_odd")


def classified(objects: pl.LazyFrame, kind: str, params: RuleParams) -> pl.LazyFrame:
    """Objects plus userId, documentId, badKey and judged (older than the grace period)."""
    judged = (pl.col("lastModified") <= pl.lit(params.judged_before).cast(pl.Datetime("ms", "UTC"))).alias("judged")
    return classify_keys(objects, kind).with_columns(judged)


def documents_and_markers(items: pl.LazyFrame, params: RuleParams) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The table's rows split: the documents (every rule of items reads them), and the markers."""
    keyed = with_keys(items, params)
    return keyed.filter(~is_marker()), keyed.filter(is_marker())


def prepare(inputs: Inputs, params: RuleParams) -> Prepared:
    items, markers = documents_and_markers(inputs.items, params)
    raw = classified(inputs.raw_objects, "raw", params)
    processed = classified(inputs.processed_objects, "result", params)
    # Prepared once, eagerly: each frame is joined by several rules, which then share the
    # derived columns instead of each re-deriving them.
    items_df, markers_df, raw_df, processed_df = pl.collect_all([items, markers, raw, processed])
    return Prepared(items_df.lazy(), raw_df.lazy(), processed_df.lazy(), params, markers_df.lazy())
