"""The frames every reconcile input yields and every engine reads: schemas derived from the contract.

Three frames (four with --deep) carry a reconcile's inputs: the table's items (`ITEMS_SCHEMA`, a
projection of `DocumentItem`: names, DynamoDB wire types and dtypes come from the contract; the
duplicate markers are rows of it too, told apart by their sort key, `keys.is_marker`), the
raw and processed buckets' objects (`OBJECTS_SCHEMA`) and, with --deep, the result.json contents
(`RESULTS_SCHEMA`). Live reads and export/inventory files both produce them, so the rules cannot
tell which source they were given. Also the two containers of frames (`Snapshot`: all inputs in
memory with their times; `Inputs`: the same as lazy frames for the rules) and the frame helpers
the inputs share. Pure: no I/O.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Union, get_args, get_origin

import polars as pl

from jobs.contract import DocumentItem, layout

# Rows are turned into frames this many at a time: a list of dicts never grows past it.
ROWS_PER_CHUNK = 50_000


def _types(field_name: str) -> tuple[object, ...]:
    annotation = DocumentItem.model_fields[field_name].annotation
    options = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    return tuple(o for o in options if o is not type(None))


def wire_type(field_name: str) -> str:
    """The DynamoDB type tag `DocumentItem.to_item` writes for `field_name` ("S", "N" or "L")."""
    options = _types(field_name)
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
    # The duplicate markers the document holds (a marker row has its own userId, documentId:
    # the holder, and createdAt).
    "contentMarker",
    "invoiceMarker",
    # A document's life (jobs.contract.lifecycle): when its retention ends, when a user's delete
    # becomes final, whether it is held, and its class (the objects' tag).
    "retentionClass",
    "retainUntil",
    "hardDeleteAt",
    "legalHoldAt",
)
DEEP_ONLY_COLUMNS = ("vendorName", "invoiceDate", "totalAmount")
# The derived key attributes, checked against the fields (column: DynamoDB attribute).
KEY_COLUMNS = {
    "pk": layout.PK_ATTR,
    "sk": layout.SK_ATTR,
    "gsi1pk": layout.GSI1_PK_ATTR,
    "gsi1sk": layout.GSI1_SK_ATTR,
}


def _dtype(field_name: str) -> pl.DataType:
    # Integers as integers; a Decimal keeps DynamoDB's spelling (compared canonically); times,
    # dates and enums as the text the item stores (ISO-8601 sorts in time order).
    return pl.Int64() if int in _types(field_name) else pl.String()


# The table's TTL attribute (epoch seconds), on a document and on each of its duplicate markers:
# once it has passed, DynamoDB's TTL removes either at any time (typically within days, not
# together), so the marker rules leave expired rows alone.
TTL_COLUMN = "expiresAt"

ITEMS_SCHEMA: dict[str, pl.DataType] = {
    **{column: pl.String() for column in KEY_COLUMNS},
    **{name: _dtype(name) for name in (*RULE_FIELDS, *DEEP_ONLY_COLUMNS)},
    TTL_COLUMN: pl.Int64(),
}
# The DynamoDB attribute each item column comes from, for the inputs.
ITEM_ATTRIBUTE_OF = {
    **KEY_COLUMNS,
    **{name: name for name in (*RULE_FIELDS, *DEEP_ONLY_COLUMNS)},
    TTL_COLUMN: layout.TTL_ATTR,
}
NUMERIC_ITEM_COLUMNS = frozenset({TTL_COLUMN, *(c for c in (*RULE_FIELDS, *DEEP_ONLY_COLUMNS) if wire_type(c) == "N")})
# The numeric columns held as integers (the others keep DynamoDB's spelling).
INTEGER_ITEM_COLUMNS = frozenset(c for c in NUMERIC_ITEM_COLUMNS if ITEMS_SCHEMA[c] == pl.Int64())

OBJECTS_SCHEMA: dict[str, pl.DataType] = {
    "bucket": pl.String(),
    "key": pl.String(),
    "etag": pl.String(),  # bare (jobs.contract.bare_etag): inventories have no quotes
    "size": pl.Int64(),
    "lastModified": pl.Datetime("ms", "UTC"),
}

# result.json as --deep reads it (ResultDocument, see inputs.results.result_row).
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


@dataclass
class Snapshot:
    """Every input in memory, plus when each was taken (the rules' ages are measured from it)."""

    items: pl.DataFrame
    raw_objects: pl.DataFrame
    processed_objects: pl.DataFrame
    taken_at: dict[str, datetime] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)

    @property
    def as_of(self) -> datetime:
        return min(self.taken_at.values())


@dataclass(frozen=True)
class Inputs:
    """The frames the rules read, lazily."""

    items: pl.LazyFrame
    raw_objects: pl.LazyFrame
    processed_objects: pl.LazyFrame
    results: pl.LazyFrame | None = None  # result.json contents, --deep only


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def detached(frame: pl.DataFrame) -> pl.DataFrame:
    """A few rows kept with their own string buffers: polars' strings are views into the buffers
    of the frame they were filtered from, so kept findings (or candidates) would pin their whole
    chunk (RSS grew linearly with the files read until this copy).
    """
    arrow = frame.to_arrow()  # views → contiguous Arrow strings: a copy of just these rows
    copied = pl.from_arrow(arrow)
    assert isinstance(copied, pl.DataFrame)
    return copied


def chunked(rows: Iterable[dict[str, Any]], schema: dict[str, pl.DataType]) -> Iterator[pl.DataFrame]:
    """Rows as frames of at most ROWS_PER_CHUNK rows, so a list of dicts stays bounded."""
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= ROWS_PER_CHUNK:
            yield pl.DataFrame(chunk, schema=schema, orient="row")
            chunk = []
    if chunk:
        yield pl.DataFrame(chunk, schema=schema, orient="row")


def concat(frames: list[pl.DataFrame], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """One frame of `frames` (rechunked), or an empty one of `schema`."""
    return pl.concat(frames, how="vertical", rechunk=True) if frames else empty(schema)
