"""Pure definitions of the audit catalog: S3 Inventory fields and the Glue tables Athena reads.

Derived, never hand-listed twice: the inventory's columns come from one table of the fields the
configuration asks S3 for (name in the configuration, column in the Parquet report, Hive type),
and the export table's `item` struct from the contract (`jobs.contract.audit.item_image`: the
DocumentItem fields and the derived key attributes as DynamoDB JSON). Table locations and partition
projection follow the layouts AWS writes (S3 Inventory's `hive/dt=…` symlinks; a
DynamoDB export's `AWSDynamoDB/<exportId>/data/`); the names come from jobs.contract.layout.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from jobs.contract import layout
from jobs.contract.audit import glue_columns, hive, item_image


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


def export_item_type() -> str:
    """The `item` column: every contract attribute of the item (jobs.contract.audit.item_image,
    the same struct the change log's images have), names lowercased.
    """
    return hive(item_image())


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


def incremental_export_table(name: str, audit_bucket: str) -> GlueTable:
    """The incremental exports (gzip lines `{"Metadata": …, "Keys": {…}, "NewImage": {…}}`, no
    NewImage for a deleted item), one partition per export like the full exports' table: the
    nightly MERGE names the `export_id` it brings the state forward by.
    """
    exports = export_table(name, audit_bucket)
    keys = "struct<" + ",".join(f"{a.lower()}:struct<s:string>" for a in (layout.PK_ATTR, layout.SK_ATTR)) + ">"
    return replace(exports, columns=(("keys", keys), ("newimage", export_item_type())))


def state_table(name: str, audit_bucket: str) -> GlueTable:
    """The Iceberg table the nightly Athena run keeps (jobs/reconcile/engines/iceberg.py): one row per
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
        incremental_export_table(layout.GLUE_INCREMENTAL_TABLE, audit_bucket),
        state_table(layout.GLUE_STATE_TABLE, audit_bucket),
    ]


# --- the audit trail's tables (components/audit_trail.py) -------------------------------------
PARQUET_INPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUTPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
CLOUDTRAIL_INPUT = "com.amazon.emr.cloudtrail.CloudTrailInputFormat"
HCATALOG_JSON_SERDE = "org.apache.hive.hcatalog.data.JsonSerDe"
# The oldest delivery day a projected partition may name.
TRAIL_SINCE = "2026-01-01"


def changes_table(name: str, audit_bucket: str) -> GlueTable:
    """The change log: Firehose converts each stream record against these columns (the contract's
    `stream_record`) and writes Parquet under `changes/dt=<day>/`; Athena reads the same table,
    one projected `dt` partition per delivery day.
    """
    root = f"s3://{audit_bucket}/{layout.AUDIT_CHANGES_PREFIX}"
    day = layout.AUDIT_PARTITION
    return GlueTable(
        name=name,
        columns=glue_columns(),
        partition_keys=((day, "string"),),
        location=root,
        input_format=PARQUET_INPUT,
        output_format=PARQUET_OUTPUT,
        serde=PARQUET_SERDE,
        parameters={
            "EXTERNAL": "TRUE",
            "classification": "parquet",
            "projection.enabled": "true",
            f"projection.{day}.type": "date",
            f"projection.{day}.format": "yyyy-MM-dd",
            f"projection.{day}.range": f"{TRAIL_SINCE},NOW",
            f"projection.{day}.interval": "1",
            f"projection.{day}.interval.unit": "DAYS",
            "storage.location.template": f"{root}{day}=${{{day}}}/",
        },
    )


# The columns of a CloudTrail log record an auditor reads (Athena's documented CloudTrail table,
# the fields of S3 data events); CloudTrail writes more, which the SerDe skips.
ACCESS_COLUMNS = (
    ("eventversion", "string"),
    (
        "useridentity",
        "struct<type:string,principalid:string,arn:string,accountid:string,invokedby:string,"
        "accesskeyid:string,username:string,sessioncontext:struct<attributes:struct<"
        "mfaauthenticated:string,creationdate:string>,sessionissuer:struct<type:string,"
        "principalid:string,arn:string,accountid:string,username:string>,sourceidentity:string>>",
    ),
    ("eventtime", "string"),
    ("eventsource", "string"),
    ("eventname", "string"),
    ("awsregion", "string"),
    ("sourceipaddress", "string"),
    ("useragent", "string"),
    ("errorcode", "string"),
    ("errormessage", "string"),
    ("requestparameters", "string"),
    ("responseelements", "string"),
    ("additionaleventdata", "string"),
    ("requestid", "string"),
    ("eventid", "string"),
    ("readonly", "string"),
    ("resources", "array<struct<arn:string,accountid:string,type:string>>"),
    ("eventtype", "string"),
    ("recipientaccountid", "string"),
    ("sharedeventid", "string"),
    ("vpcendpointid", "string"),
    ("eventcategory", "string"),
    ("tlsdetails", "struct<tlsversion:string,ciphersuite:string,clientprovidedhostheader:string>"),
)


def access_table(name: str, trail_bucket: str, account_id: str, region: str) -> GlueTable:
    """The access trail: CloudTrail's log files of our data events, under
    `AWSLogs/<account>/CloudTrail/<region>/yyyy/MM/dd/`, one projected `timestamp` partition a day.
    """
    root = f"s3://{trail_bucket}/AWSLogs/{account_id}/CloudTrail/{region}/"
    return GlueTable(
        name=name,
        columns=ACCESS_COLUMNS,
        partition_keys=(("timestamp", "string"),),
        location=root,
        input_format=CLOUDTRAIL_INPUT,
        output_format=IGNORE_KEY_OUTPUT,
        serde=HCATALOG_JSON_SERDE,
        parameters={
            "EXTERNAL": "TRUE",
            "classification": "cloudtrail",
            "projection.enabled": "true",
            "projection.timestamp.type": "date",
            "projection.timestamp.format": "yyyy/MM/dd",
            "projection.timestamp.range": f"{TRAIL_SINCE.replace('-', '/')},NOW",
            "projection.timestamp.interval": "1",
            "projection.timestamp.interval.unit": "DAYS",
            "storage.location.template": root + "${timestamp}",
        },
    )
