"""DynamoDB exports (DYNAMODB_JSON) as item frames: the manifests checked, the data files parsed.

A full export is the whole table at its export time; an incremental export holds one line per
item changed in its window (its final image, none for a deleted item) and is read only to bring a
kept table state forward (`table_state`). Each data file is checked against its manifest entry,
then parsed by Arrow's JSON reader block by block with an explicit schema of just the attributes
reconcile reads, so memory stays at a few blocks whatever the file size; two files are parsed at
once. The file layout is described in docs/reconcile.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, BinaryIO

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from jobs.errors import ReconcileInputError
from jobs.reconcile.inputs.datafiles import (
    PARSE_BLOCK_BYTES,
    DataFile,
    bounded_map,
    json_object,
    opened,
    parse_time,
    refuse_duplicates,
    require,
)
from jobs.reconcile.inputs.location import Location
from jobs.reconcile.rules.frames import DEEP_ONLY_COLUMNS, ITEM_ATTRIBUTE_OF, ITEMS_SCHEMA, NUMERIC_ITEM_COLUMNS, empty

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

EXPORT_SUMMARY = "manifest-summary.json"
EXPORT_FILES = "manifest-files.json"
FULL_EXPORT = "FULL_EXPORT"
INCREMENTAL_EXPORT = "INCREMENTAL_EXPORT"
# An incremental export's lines carry the item's key and its image at the end of the window
# (absent when it was deleted): `_alive` says which.
CHANGE_COLUMNS: dict[str, pl.DataType] = {"_alive": pl.Boolean()}


def _attributes(deep: bool) -> pa.StructType:
    """The attributes reconcile reads, each as DynamoDB JSON ({"S": ...} or {"N": ...}).

    Anything else in a line (other attributes, other type tags) is ignored by the parser.
    """
    attrs = []
    for column, attribute in ITEM_ATTRIBUTE_OF.items():
        if column in DEEP_ONLY_COLUMNS and not deep:
            continue
        wire = "N" if column in NUMERIC_ITEM_COLUMNS else "S"
        attrs.append(pa.field(attribute, pa.struct([pa.field(wire, pa.string())])))
    return pa.struct(attrs)


def _export_schema(deep: bool, incremental: bool) -> pa.Schema:
    if not incremental:
        return pa.schema([pa.field("Item", _attributes(deep))])
    keys = pa.struct([pa.field(ITEM_ATTRIBUTE_OF[c], pa.struct([pa.field("S", pa.string())])) for c in ("pk", "sk")])
    return pa.schema([pa.field("Keys", keys), pa.field("NewImage", _attributes(deep))])


def _unwrapped(struct: pa.ChunkedArray[Any] | pa.Array[Any], pool: pa.MemoryPool) -> dict[str, pa.Array[Any]]:
    """{attr: {"S": v}} → {attr: v}, still in Arrow memory."""
    return {
        field.name: pc.struct_field(pc.struct_field(struct, [field.name], memory_pool=pool), [0], memory_pool=pool)
        for field in struct.type
    }


def _flatten(batch: pa.RecordBatch, where: str, incremental: bool) -> pa.Table:
    """One flat column per attribute (plus `_alive` for an incremental export)."""
    pool = pa.system_memory_pool()
    if not incremental:
        item = batch.column(0)
        if item.null_count:
            raise ReconcileInputError(f'{where}: a line has no "Item" (not a full DYNAMODB_JSON export)')
        return pa.table(_unwrapped(item, pool))
    keys, image = batch.column(0), batch.column(1)
    columns = _unwrapped(image, pool)
    key_columns = _unwrapped(keys, pool)
    if keys.null_count or any(column.null_count for column in key_columns.values()):
        raise ReconcileInputError(
            f'{where}: a line has no "Keys" with PK and SK (not an incremental DYNAMODB_JSON export)'
        )
    columns.update(key_columns)  # a deleted item's key is only in Keys
    columns["_alive"] = pc.is_valid(image, memory_pool=pool)
    return pa.table(columns)


def _export_table(stream: BinaryIO, where: str, deep: bool, incremental: bool = False) -> pa.Table | None:
    """One data file, parsed block by block: memory stays at a few blocks whatever the file size.

    pyarrow's JSON reader with an explicit schema parses these nested lines faster than polars'
    NDJSON reader, and keeping the blocks in Arrow (system allocator, which returns freed blocks
    to the OS) until one final conversion keeps peak RSS lower than converting each block to
    polars. Two files are parsed at once (`bounded_map`), so each parse is single-threaded: its
    own threads only added CPU for the same wall time. The figures are in docs/reconcile.md.
    """
    try:
        reader = pa_json.open_json(
            stream,
            read_options=pa_json.ReadOptions(block_size=PARSE_BLOCK_BYTES, use_threads=False),
            parse_options=pa_json.ParseOptions(
                explicit_schema=_export_schema(deep, incremental), unexpected_field_behavior="ignore"
            ),
            memory_pool=pa.system_memory_pool(),
        )
        tables = [_flatten(batch, where, incremental) for batch in reader]
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        if "Empty JSON stream" in str(exc):  # an export of an empty table segment
            return None
        raise ReconcileInputError(f"{where} is not DynamoDB JSON lines: {exc}") from exc
    except (OSError, EOFError) as exc:
        raise ReconcileInputError(f"{where} is not valid gzip: {exc}") from exc
    return pa.concat_tables(tables) if tables else None


def _items_from_arrow(table: pa.Table | None, deep: bool, extra: dict[str, pl.DataType] | None = None) -> pl.DataFrame:
    schema = {**ITEMS_SCHEMA, **(extra or {})}
    if table is None or table.num_rows == 0:
        return empty(schema)
    raw = pl.from_arrow(table)
    assert isinstance(raw, pl.DataFrame)
    columns = []
    for column, attribute in ITEM_ATTRIBUTE_OF.items():
        if column in DEEP_ONLY_COLUMNS and not deep:
            columns.append(pl.lit(None, pl.String).alias(column))
        else:
            columns.append(pl.col(attribute).cast(ITEMS_SCHEMA[column], strict=False).alias(column))
    return raw.select(*columns, *(extra or {}))


@dataclass(frozen=True)
class ExportManifest:
    where: str
    export_time: datetime  # a full export's point in time; an incremental export's window end
    item_count: int | None
    files: list[DataFile]
    export_type: str = FULL_EXPORT
    from_time: datetime | None = None  # an incremental export's window start (inclusive)
    table_arn: str | None = None

    @property
    def incremental(self) -> bool:
        return self.export_type == INCREMENTAL_EXPORT


def export_manifest(location_text: str, buckets: Buckets | None) -> ExportManifest:
    """A DYNAMODB_JSON export's manifests; LOCATION is the export directory or its summary."""
    base = Location(location_text, buckets)
    if not location_text.rstrip("/").endswith(EXPORT_SUMMARY):
        base = base.child(EXPORT_SUMMARY)
    summary = json_object(base)
    where = base.text
    fmt = summary.get("outputFormat", "DYNAMODB_JSON")
    if fmt != "DYNAMODB_JSON":
        raise ReconcileInputError(f"{where}: outputFormat {fmt!r} is not supported (use DYNAMODB_JSON)")
    # Only incremental exports name their type in the summary.
    export_type = str(summary.get("exportType") or FULL_EXPORT)
    if export_type not in (FULL_EXPORT, INCREMENTAL_EXPORT):
        raise ReconcileInputError(f"{where}: exportType {export_type!r} is not {FULL_EXPORT} or {INCREMENTAL_EXPORT}")
    from_time = None
    if export_type == INCREMENTAL_EXPORT:
        from_time = parse_time(str(require(summary, "exportFromTime", where)), where)
        export_time = parse_time(str(require(summary, "exportToTime", where)), where)
        if from_time >= export_time:
            raise ReconcileInputError(f"{where}: exportFromTime is not before exportToTime")
    else:
        export_time = parse_time(str(require(summary, "exportTime", where)), where)
    files_loc = base.bucket_key(str(require(summary, "manifestFilesS3Key", where)), summary.get("s3Bucket"))
    files = []
    for number, line in enumerate(files_loc.read().decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            key, count, md5 = str(entry["dataFileS3Key"]), entry.get("itemCount"), entry.get("md5Checksum")
        except (ValueError, KeyError, TypeError) as exc:
            raise ReconcileInputError(f"{files_loc.text} line {number} is not a manifest entry: {exc}") from exc
        files.append(
            DataFile(base.bucket_key(key, summary.get("s3Bucket")), None if count is None else int(count), md5=md5)
        )
    refuse_duplicates([f.location.text for f in files], files_loc.text)
    declared = summary.get("itemCount")
    table_arn = summary.get("tableArn")
    return ExportManifest(
        where,
        export_time,
        declared if isinstance(declared, int) else None,
        files,
        export_type,
        from_time,
        table_arn if isinstance(table_arn, str) and table_arn else None,
    )


def full_export_manifest(location_text: str, buckets: Buckets | None) -> ExportManifest:
    """A full export (the whole table at one point in time), what every engine reads as the table."""
    manifest = export_manifest(location_text, buckets)
    if manifest.incremental:
        raise ReconcileInputError(
            f"{manifest.where} is an incremental export (the changes of a window, not the table): "
            "give it with --table-state, the table as an earlier run kept it"
        )
    return manifest


def _data_frames(manifest: ExportManifest, deep: bool, extra: dict[str, pl.DataType] | None) -> Iterator[pl.DataFrame]:
    """The rows of each data file in turn, each file checked against its manifest entry and the
    total against the summary's itemCount once the last file is read.
    """

    def one(entry: DataFile) -> pl.DataFrame:
        with opened(entry.read()) as stream:
            table = _export_table(stream, entry.location.text, deep, manifest.incremental)
        rows = 0 if table is None else table.num_rows
        if entry.item_count is not None and rows != entry.item_count:
            raise ReconcileInputError(f"{entry.location.text} holds {rows} items, the manifest says {entry.item_count}")
        return _items_from_arrow(table, deep, extra)

    total = 0
    # Two data files at a time: inflating and parsing release the GIL.
    for frame in bounded_map(one, manifest.files):
        total += frame.height
        yield frame
    if manifest.item_count is not None and manifest.item_count != total:
        raise ReconcileInputError(f"{manifest.where} declares {manifest.item_count} items, the data files hold {total}")


def export_frames(manifest: ExportManifest, deep: bool) -> Iterator[pl.DataFrame]:
    """A full export's items (ITEMS_SCHEMA), data file by data file."""
    yield from _data_frames(manifest, deep, None)


def change_frames(manifest: ExportManifest) -> Iterator[pl.DataFrame]:
    """An incremental export's changed items: ITEMS_SCHEMA (every column; only pk and sk for a
    deleted item) plus `_alive` (false: deleted).
    """
    yield from _data_frames(manifest, True, CHANGE_COLUMNS)
