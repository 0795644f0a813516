"""Pure definitions of the audit catalog: S3 Inventory fields and the Glue tables Athena reads.

Derived, never hand-listed twice: the inventory's columns come from one table of the fields the
configuration asks S3 for (name in the configuration, column in the Parquet report, Hive type),
and the export table's `item` struct from the contract's DocumentItem (its fields and the derived
key attributes, as DynamoDB JSON: `{"S": …}`, `{"N": …}`, `{"L": [...]}`). Table locations and
partition projection follow the layouts AWS writes (S3 Inventory's `hive/dt=…` symlinks; a
DynamoDB export's `AWSDynamoDB/<exportId>/data/`); the names come from jobs.contract.layout.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any

from jobs.contract import DocumentItem, layout


@dataclass(frozen=True)
class InventoryField:
    optional_field: str | None  # the configuration's OptionalFields name (None: always present)
    column: str  # the Parquet report's column
    hive_type: str


# Current versions only, so no version id, latest or delete-marker columns.
INVENTORY_FIELDS = (
    InventoryField(None, "bucket", "string"),
    InventoryField(None, "key", "string"),
    InventoryField("Size", "size", "bigint"),
    InventoryField("LastModifiedDate", "last_modified_date", "timestamp"),
    InventoryField("ETag", "e_tag", "string"),
    InventoryField("StorageClass", "storage_class", "string"),
    InventoryField("IsMultipartUploaded", "is_multipart_uploaded", "boolean"),
)
INVENTORY_OPTIONAL_FIELDS = tuple(f.optional_field for f in INVENTORY_FIELDS if f.optional_field)
# The oldest report a projected `dt` partition may name; later ones are generated up to NOW.
INVENTORY_SINCE = "2026-01-01-00-00"

PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
SYMLINK_INPUT = "org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat"
IGNORE_KEY_OUTPUT = "org.apache.hadoop.hive.ql.io.IgnoreKeyTextOutputFormat"
JSON_SERDE = "org.openx.data.jsonserde.JsonSerDe"
TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"


@dataclass(frozen=True)
class GlueTable:
    """One external table, in the shape of Glue's CreateTable (what the component passes on)."""

    name: str
    columns: tuple[tuple[str, str], ...]
    partition_keys: tuple[tuple[str, str], ...]
    location: str
    input_format: str
    output_format: str
    serde: str
    parameters: dict[str, str]
    iceberg: bool = False  # an Iceberg table Glue creates the metadata of (OpenTableFormatInput)


def inventory_table(name: str, audit_bucket: str, source_bucket: str) -> GlueTable:
    """S3 Inventory's Parquet reports of `source_bucket`, one `dt` partition per daily report."""
    hive = f"s3://{audit_bucket}/{layout.inventory_prefix(source_bucket)}hive/"
    return GlueTable(
        name=name,
        columns=tuple((f.column, f.hive_type) for f in INVENTORY_FIELDS),
        partition_keys=(("dt", "string"),),
        location=hive,
        # The hive/ tree holds symlink files that list the day's Parquet data files.
        input_format=SYMLINK_INPUT,
        output_format=IGNORE_KEY_OUTPUT,
        serde=PARQUET_SERDE,
        parameters={
            "EXTERNAL": "TRUE",
            "projection.enabled": "true",
            "projection.dt.type": "date",
            "projection.dt.format": "yyyy-MM-dd-HH-mm",
            "projection.dt.range": f"{INVENTORY_SINCE},NOW",
            "projection.dt.interval": "1",
            "projection.dt.interval.unit": "HOURS",
            "storage.location.template": hive + "dt=${dt}",
        },
    )


def _dynamodb_type(annotation: Any) -> str:
    """The DynamoDB JSON of a DocumentItem field (as DocumentItem.to_item writes it), in Hive."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (annotation,) = args  # Optional[X]: the attribute is absent when None
        args = list(typing.get_args(annotation))
    if typing.get_origin(annotation) is list:
        return f"struct<l:array<{_dynamodb_type(args[0])}>>"
    if annotation in (int, Decimal):
        return "struct<n:string>"
    if annotation is bool:
        return "struct<bool:boolean>"
    if annotation in (str, datetime, date) or (isinstance(annotation, type) and issubclass(annotation, Enum)):
        return "struct<s:string>"
    raise TypeError(f"no DynamoDB JSON type for {annotation!r}: extend components.catalog._dynamodb_type")


def export_item_type() -> str:
    """The `item` column: every contract attribute of the item, names lowercased (Hive's way;
    the JSON SerDe matches keys case-insensitively), derived from DocumentItem.
    """
    keys = dict.fromkeys((layout.PK_ATTR, layout.SK_ATTR, layout.GSI1_PK_ATTR, layout.GSI1_SK_ATTR), "struct<s:string>")
    keys[layout.TTL_ATTR] = "struct<n:string>"
    fields = {name: _dynamodb_type(field.annotation) for name, field in DocumentItem.model_fields.items()}
    return "struct<" + ",".join(f"{name.lower()}:{hive}" for name, hive in {**keys, **fields}.items()) + ">"


def export_table(name: str, audit_bucket: str) -> GlueTable:
    """The DynamoDB exports (DYNAMODB_JSON, gzip lines `{"Item": {...}}`), one partition per
    export: the query names its `export_id` (injected projection), so it reads that export only.
    """
    exports = f"s3://{audit_bucket}/{layout.DYNAMODB_EXPORTS_PREFIX}AWSDynamoDB/"
    return GlueTable(
        name=name,
        columns=(("item", export_item_type()),),
        partition_keys=(("export_id", "string"),),
        location=exports,
        input_format=TEXT_INPUT,
        output_format=IGNORE_KEY_OUTPUT,
        serde=JSON_SERDE,
        parameters={
            "EXTERNAL": "TRUE",
            "projection.enabled": "true",
            "projection.export_id.type": "injected",
            "storage.location.template": exports + "${export_id}/data/",
        },
    )


def changes_table(name: str, audit_bucket: str) -> GlueTable:
    """The incremental exports (gzip lines `{"Metadata": …, "Keys": {…}, "NewImage": {…}}`, no
    NewImage for a deleted item), one partition per export like the full exports' table: the
    nightly MERGE names the `export_id` it brings the state forward by.
    """
    exports = export_table(name, audit_bucket)
    keys = "struct<" + ",".join(f"{a.lower()}:struct<s:string>" for a in (layout.PK_ATTR, layout.SK_ATTR)) + ">"
    return replace(exports, columns=(("keys", keys), ("newimage", export_item_type())))


def state_table(name: str, audit_bucket: str) -> GlueTable:
    """The Iceberg table the nightly Athena run keeps (jobs/reconcile/iceberg.py): one row per
    item, the export's `item` struct unchanged, and the state row's times. Its files live under
    the audit-data bucket's Iceberg prefix, which no lifecycle rule expires (Iceberg's VACUUM
    removes what no snapshot holds).
    """
    return GlueTable(
        name=name,
        columns=(
            ("pk", "string"),
            ("sk", "string"),
            ("item", export_item_type()),
            ("as_of", "timestamp"),
            ("anchored_at", "timestamp"),
        ),
        partition_keys=(),
        location=f"s3://{audit_bucket}/{layout.iceberg_location(name)}",
        input_format="",
        output_format="",
        serde="",
        parameters={"table_type": "ICEBERG", "write_compression": "zstd"},
        iceberg=True,
    )


def audit_tables(audit_bucket: str, source_buckets: dict[str, str]) -> list[GlueTable]:
    """The catalog's tables: one inventory table per source bucket purpose, the full and the
    incremental exports, and the Iceberg table the nightly run merges them into.
    """
    return [
        *(inventory_table(layout.GLUE_INVENTORY_TABLES[p], audit_bucket, b) for p, b in source_buckets.items()),
        export_table(layout.GLUE_EXPORT_TABLE, audit_bucket),
        changes_table(layout.GLUE_CHANGES_TABLE, audit_bucket),
        state_table(layout.GLUE_STATE_TABLE, audit_bucket),
    ]
