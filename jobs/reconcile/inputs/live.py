"""The live input: a parallel Scan of the table and listings of both whole buckets, in memory.

The Scan runs one thread per segment, each turning its items into bounded frames; the listings
cover the whole buckets (not only their layout prefixes), which is what lets reconcile see
objects outside the layout. The three reads run at once, and every age is measured from the
run's start.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import polars as pl

from jobs.contract import ObjectInfo, bare_etag, layout
from jobs.reconcile.rules.frames import (
    DEEP_ONLY_COLUMNS,
    INTEGER_ITEM_COLUMNS,
    ITEM_ATTRIBUTE_OF,
    ITEMS_SCHEMA,
    OBJECTS_SCHEMA,
    Snapshot,
    chunked,
    concat,
)

if TYPE_CHECKING:
    from jobs.store.dynamo import DocumentTable
    from jobs.store.s3 import Buckets


def item_row(item: dict[str, Any], deep: bool) -> dict[str, Any]:
    """One deserialized item as a row of ITEMS_SCHEMA (numbers as DynamoDB spells them)."""
    row: dict[str, Any] = {}
    for column, attribute in ITEM_ATTRIBUTE_OF.items():
        if column in DEEP_ONLY_COLUMNS and not deep:
            row[column] = None
            continue
        value = item.get(attribute)
        if column in INTEGER_ITEM_COLUMNS:
            row[column] = int(value) if isinstance(value, Decimal | int) else None
        elif column == "totalAmount":
            row[column] = str(value) if isinstance(value, Decimal) else None
        else:
            row[column] = value if isinstance(value, str) else None
    return row


def live_items(table: DocumentTable, segments: int, deep: bool) -> pl.DataFrame:
    """Parallel Scan: one thread per segment, each building bounded frames."""

    def one(segment: int) -> list[pl.DataFrame]:
        rows = (item_row(item, deep) for item in table.scan(segment, segments))
        return list(chunked(rows, ITEMS_SCHEMA))

    with ThreadPoolExecutor(segments, thread_name_prefix="scan") as pool:
        parts = [frame for frames in pool.map(one, range(segments)) for frame in frames]
    return concat(parts, ITEMS_SCHEMA)


def object_rows(objects: Iterable[ObjectInfo]) -> Iterator[dict[str, Any]]:
    for obj in objects:
        yield {
            "bucket": obj.bucket,
            "key": obj.key,
            "etag": bare_etag(obj.etag),
            "size": obj.size,
            "lastModified": obj.last_modified.astimezone(UTC),
        }


def live_objects(buckets: Buckets, bucket: str) -> pl.DataFrame:
    """The whole bucket (not only its layout prefix), so objects outside the layout are seen."""
    objects = (obj for page in buckets.list_pages(bucket, "") for obj in page)
    return concat(list(chunked(object_rows(objects), OBJECTS_SCHEMA)), OBJECTS_SCHEMA)


def live_snapshot(
    table: DocumentTable, buckets: Buckets, raw_bucket: str, processed_bucket: str, segments: int, deep: bool
) -> Snapshot:
    started = layout.utc_now()
    with ThreadPoolExecutor(3, thread_name_prefix="live") as pool:
        items = pool.submit(live_items, table, segments, deep)
        raw = pool.submit(live_objects, buckets, raw_bucket)
        processed = pool.submit(live_objects, buckets, processed_bucket)
        snapshot = Snapshot(items.result(), raw.result(), processed.result())
    snapshot.taken_at = {"table": started, "raw": started, "processed": started}
    snapshot.inputs = {
        "table": "live Scan",
        "raw": f"live listing of {raw_bucket}",
        "processed": f"live listing of {processed_bucket}",
    }
    return snapshot
