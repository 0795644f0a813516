"""S3 Inventory reports (CSV or Parquet) as object frames: the manifest checked, the data files read.

One report per bucket: its manifest.json names the source bucket, the snapshot time, the format
and the data files (each checked for size and MD5). CSV files are parsed by Arrow (quoted,
gzipped lines, URL-encoded keys decoded), Parquet files by polars directly; versioned inventories
keep only current, non-delete-marker rows. The file layout is described in docs/reconcile.md.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa
import pyarrow.csv as pa_csv

from jobs.contract import layout
from jobs.errors import ReconcileInputError
from jobs.reconcile.inputs.datafiles import (
    PARSE_BLOCK_BYTES,
    DataFile,
    bounded_map,
    json_object,
    opened,
    refuse_duplicates,
    require,
    trim_heap,
)
from jobs.reconcile.inputs.location import Location
from jobs.reconcile.rules.frames import OBJECTS_SCHEMA, concat, empty

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

INVENTORY_MANIFEST = "manifest.json"


def field_name(name: str) -> str:
    """CSV fileSchema says "LastModifiedDate", Parquet columns say "last_modified_date"."""
    return name.strip().replace("_", "").lower()


# CSV inventories are handed on this many rows at a time (one Parquet file is its own chunk).
CHUNK_ROWS = 500_000
# Inventory fields reconcile reads (normalised names), and the version fields it filters on.
WANTED = ("bucket", "key", "size", "lastmodifieddate", "etag")
VERSION_FIELDS = ("islatest", "isdeletemarker")


def _csv_chunks(entry: DataFile, fields: list[str]) -> Iterator[pl.DataFrame]:
    """A CSV data file's rows, parsed by Arrow's streaming reader block by block (it reads the
    quoted, gzipped lines and ISO times in one pass) and handed on CHUNK_ROWS at a time, so memory
    stays at a chunk however large the file (AWS writes files of any size).
    """
    normalised = [field_name(f) for f in fields]
    types: dict[str, pa.DataType] = {name: pa.string() for name in normalised}
    # Arrow parses sizes and ISO times itself; the bucket repeats on every row.
    types.update(size=pa.int64(), lastmodifieddate=pa.timestamp("ms", tz="UTC"))
    types["bucket"] = pa.dictionary(pa.int32(), pa.string())
    with opened(entry.read()) as stream:
        reader = pa_csv.open_csv(
            stream,
            read_options=pa_csv.ReadOptions(column_names=normalised, block_size=PARSE_BLOCK_BYTES),
            convert_options=pa_csv.ConvertOptions(
                column_types=types,
                include_columns=[n for n in normalised if n in WANTED or n in VERSION_FIELDS],
                strings_can_be_null=False,
            ),
            memory_pool=pa.system_memory_pool(),
        )
        batches: list[pa.RecordBatch] = []
        rows = 0
        for batch in reader:
            batches.append(batch)
            rows += batch.num_rows
            if rows >= CHUNK_ROWS:
                yield _polars(batches)
                batches, rows = [], 0
        if batches:
            yield _polars(batches)


def _polars(batches: list[pa.RecordBatch]) -> pl.DataFrame:
    converted = pl.from_arrow(pa.Table.from_batches(batches))
    assert isinstance(converted, pl.DataFrame)
    return converted


def _parquet_table(entry: DataFile) -> pl.DataFrame:
    """A Parquet data file, read by polars (faster than Arrow and converting, with less memory:
    docs/reconcile.md, Performance), its columns named by `field_name`.
    """
    with opened(entry.read()) as stream:
        table = pl.read_parquet(stream)
    return table.rename({c: field_name(c) for c in table.columns})


def _inventory_tables(entry: DataFile, fmt: str, fields: list[str]) -> Iterator[pl.DataFrame]:
    """One data file's rows (a CSV file in chunks), only the fields reconcile reads."""
    where = entry.location.text
    try:
        for table in _csv_chunks(entry, fields) if fmt == "CSV" else iter([_parquet_table(entry)]):
            missing = [f for f in WANTED if f not in table.columns]
            if missing:
                raise ReconcileInputError(f"{where} lacks inventory fields {missing} (has {table.columns})")
            yield table.select([c for c in table.columns if c in WANTED or c in VERSION_FIELDS])
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        if fmt == "CSV" and "Empty CSV file" in str(exc):
            # S3 Inventory writes no empty data files: an empty one lost its rows.
            raise ReconcileInputError(f"{where} holds no rows (an empty data file): damaged inventory") from exc
        raise ReconcileInputError(f"{where} is not a {fmt} inventory file: {exc}") from exc
    except pl.exceptions.PolarsError as exc:
        raise ReconcileInputError(f"{where} is not a {fmt} inventory file: {exc}") from exc
    except (OSError, EOFError) as exc:
        raise ReconcileInputError(f"{where} is not valid gzip: {exc}") from exc


def _objects_from_frame(frame: pl.DataFrame | None, fmt: str, where: str) -> pl.DataFrame:
    if frame is None or frame.height == 0:
        return empty(OBJECTS_SCHEMA)
    # A versioned inventory lists every version; the current ones are what a listing shows.
    if "islatest" in frame.columns:
        frame = frame.filter(pl.col("islatest").cast(pl.String).str.to_lowercase() == "true")
    if "isdeletemarker" in frame.columns:
        frame = frame.filter(pl.col("isdeletemarker").cast(pl.String).str.to_lowercase() != "true")
    key = pl.col("key").cast(pl.String)
    if fmt == "CSV":
        # CSV inventories URL-encode keys; only the encoded ones pay for a Python decode (a
        # chunk's worth at most: the files are read CHUNK_ROWS at a time).
        encoded = frame.filter(key.str.contains(r"[%+]")).get_column("key").unique().to_list()
        if encoded:
            key = key.replace({k: urllib.parse.unquote_plus(k) for k in encoded})
    modified = pl.col("lastmodifieddate")
    if frame.schema["lastmodifieddate"] == pl.String:
        modified = modified.str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_unit="ms", time_zone="UTC", strict=False)
    try:
        out = frame.select(
            pl.col("bucket").cast(pl.String),
            key.alias("key"),
            pl.col("etag").cast(pl.String).str.strip_chars('"'),
            pl.col("size").cast(pl.Int64),
            modified.cast(pl.Datetime("ms", "UTC")).alias("lastModified"),
        ).select(list(OBJECTS_SCHEMA))
    except pl.exceptions.PolarsError as exc:
        raise ReconcileInputError(f"{where}: inventory fields have unexpected values: {exc}") from exc
    if out.get_column("lastModified").null_count() or out.get_column("key").null_count():
        raise ReconcileInputError(f"{where}: a row has no key or an unreadable LastModifiedDate")
    return out


@dataclass(frozen=True)
class Inventory:
    source_bucket: str
    created: datetime
    objects: pl.DataFrame
    manifest: str


@dataclass(frozen=True)
class InventoryManifest:
    where: str
    source_bucket: str
    created: datetime
    fmt: str  # CSV | Parquet
    fields: list[str]  # CSV column order
    files: list[DataFile]


def inventory_manifest(manifest_text: str, buckets: Buckets | None) -> InventoryManifest:
    """One S3 Inventory report's manifest.json (LOCATION: the file or its directory)."""
    base = Location(manifest_text, buckets)
    if not manifest_text.rstrip("/").endswith(INVENTORY_MANIFEST):
        base = base.child(INVENTORY_MANIFEST)
    manifest = json_object(base)
    where = base.text
    source = str(require(manifest, "sourceBucket", where))
    fmt = str(require(manifest, "fileFormat", where)).upper()
    fmt = {"PARQUET": "Parquet"}.get(fmt, fmt)
    if fmt not in ("CSV", "Parquet"):
        raise ReconcileInputError(f"{where}: fileFormat {fmt!r} is not supported (CSV or Parquet)")
    fields = [f.strip() for f in str(manifest.get("fileSchema", "")).split(",") if f.strip()]
    if fmt == "CSV" and not fields:
        raise ReconcileInputError(f"{where} has no fileSchema for its CSV files")
    try:
        created = datetime.fromtimestamp(int(require(manifest, "creationTimestamp", where)) / 1000, UTC)
    except (TypeError, ValueError) as exc:
        raise ReconcileInputError(f"{where}: creationTimestamp is not epoch milliseconds") from exc
    entries = require(manifest, "files", where)
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "key" in e for e in entries):
        raise ReconcileInputError(f"{where}: files is not a list of entries with a key")
    refuse_duplicates([str(e["key"]) for e in entries], where)
    destination = str(manifest.get("destinationBucket", "")).rpartition(":")[2] or None
    files = [
        DataFile(
            base.bucket_key(str(e["key"]), destination),
            size=None if e.get("size") is None else int(e["size"]),
            md5=e.get("MD5checksum"),
        )
        for e in entries
    ]
    return InventoryManifest(where, source, created, fmt, fields, files)


def inventory_frames(manifest: InventoryManifest, width: int = 2) -> Iterator[pl.DataFrame]:
    """The objects (OBJECTS_SCHEMA) of each data file in turn, each file checked (Parquet files
    `width` at a time).
    """

    def objects(entry: DataFile, table: pl.DataFrame) -> pl.DataFrame:
        found = _objects_from_frame(table, manifest.fmt, entry.location.text)
        others = found.filter(pl.col("bucket") != manifest.source_bucket).height
        if others:
            raise ReconcileInputError(
                f"{manifest.where}: {others} rows name a bucket other than sourceBucket {manifest.source_bucket!r}"
            )
        return found

    if manifest.fmt == "CSV":
        # One file at a time, streamed (Arrow's reader parses a file's blocks on its own threads).
        for entry in manifest.files:
            for table in _inventory_tables(entry, manifest.fmt, manifest.fields):
                yield objects(entry, table)
        return
    # Parquet files are read whole, two at a time by default (decoding releases the GIL).
    yield from bounded_map(
        lambda entry: objects(entry, next(_inventory_tables(entry, manifest.fmt, manifest.fields))),
        manifest.files,
        width,
    )


def read_inventory(manifest_text: str, buckets: Buckets | None) -> Inventory:
    """One S3 Inventory report (manifest.json and its CSV or Parquet data files)."""
    manifest = inventory_manifest(manifest_text, buckets)
    objects = concat(list(inventory_frames(manifest)), OBJECTS_SCHEMA)
    trim_heap()
    return Inventory(manifest.source_bucket, manifest.created, objects, manifest.where)


def inventory_pair(
    manifests: list[str], buckets: Buckets | None, raw_bucket: str, processed_bucket: str
) -> tuple[InventoryManifest, InventoryManifest]:
    """The raw and the processed bucket's inventory manifests among `manifests` (one each,
    nothing else): what every files engine reads.
    """
    by_bucket: dict[str, InventoryManifest] = {}
    for text in manifests:
        manifest = inventory_manifest(text, buckets)
        if manifest.source_bucket not in (raw_bucket, processed_bucket):
            raise ReconcileInputError(
                f"{manifest.where} inventories {manifest.source_bucket!r}, "
                f"neither the raw ({raw_bucket}) nor the processed ({processed_bucket}) bucket"
            )
        if manifest.source_bucket in by_bucket:
            raise ReconcileInputError(f"two inventories of {manifest.source_bucket!r} given")
        by_bucket[manifest.source_bucket] = manifest
    for needed in (raw_bucket, processed_bucket):
        if needed not in by_bucket:
            raise ReconcileInputError(f"no --s3-inventory manifest for bucket {needed!r}")
    return by_bucket[raw_bucket], by_bucket[processed_bucket]


def newest_manifest(buckets: Buckets, bucket: str, prefix: str, config_id: str, source_bucket: str) -> str | None:
    """The newest S3 Inventory manifest of `source_bucket` delivered under `prefix` of `bucket`
    (S3 Inventory writes `{prefix}{source bucket}/{config id}/YYYY-MM-DDTHH-MMZ/manifest.json`),
    or None when none was delivered yet.
    """
    folder = f"{prefix}{source_bucket}/{config_id}/"
    # Dated folders sort in time order; "2" skips data/ and hive/ (years 2000-2999).
    keys = [
        o.key
        for page in buckets.list_pages(bucket, folder + "2")
        for o in page
        if o.key.endswith("/" + INVENTORY_MANIFEST)
    ]
    return layout.s3_uri(bucket, max(keys)) if keys else None


def latest_manifest(buckets: Buckets, bucket: str, prefix: str, config_id: str, source_bucket: str) -> str:
    """`newest_manifest`, which must exist (ReconcileInputError when none was delivered)."""
    found = newest_manifest(buckets, bucket, prefix, config_id, source_bucket)
    if found is None:
        raise ReconcileInputError(f"no S3 Inventory manifest under s3://{bucket}/{prefix}{source_bucket}/{config_id}/")
    return found


def delivered_at(manifest: str) -> datetime:
    """When S3 Inventory delivered a report: its folder's name (`…/2026-11-30T01-00Z/manifest.json`)."""
    folder = manifest.rstrip("/").rsplit("/", 2)[-2]
    try:
        return datetime.strptime(folder, "%Y-%m-%dT%H-%MZ").replace(tzinfo=UTC)
    except ValueError as exc:
        raise ReconcileInputError(
            f"{manifest}: not an S3 Inventory manifest path (…/YYYY-MM-DDTHH-MMZ/manifest.json)"
        ) from exc
