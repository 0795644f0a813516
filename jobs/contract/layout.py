"""The storage layout: every name, key format and S3 prefix of DocuFlow, spelled once.

Pulumi components, the batch jobs and the local bootstrap all build names and keys here, so
that a change of layout is one edit. Importable without boto3 or Pulumi.
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal

from jobs.errors import InvalidIdError, InvalidKeyError

APP = "docuflow"

# --- DynamoDB ------------------------------------------------------------------------------
PK_ATTR = "PK"
SK_ATTR = "SK"
GSI1_PK_ATTR = "GSI1PK"
GSI1_SK_ATTR = "GSI1SK"
TTL_ATTR = "expiresAt"  # epoch seconds: DynamoDB's TTL deletes the item some time after it
ENTITY_DOCUMENT = "DOCUMENT"
# Duplicate markers live beside a user's documents (same partition, their own sort keys): one per
# kind of identity a document claims, naming the document that holds it (jobs.contract.duplicates).
ENTITY_DUPLICATE_MARKER = "DUPLICATE_MARKER"
ENTITY_ERASURE = "ERASURE"

_USER_PREFIX = "USER#"
_DOC_PREFIX = "DOC#"
_STATUS_PREFIX = "STATUS#"
_MARKER_PREFIX = "DUP#"
# A marker's digest: lowercase hex of a SHA-256.
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
# The one erasure marker of a user, beside their documents in the user's partition.
_ERASURE_SK = "ERASURE"

# --- S3 ------------------------------------------------------------------------------------
RAW_PREFIX = "raw/"
PROCESSED_PREFIX = "processed/"
RESULT_FILENAME = "result.json"
RUNS_PREFIX = "runs/"
INGEST_RUNS_PREFIX = f"{RUNS_PREFIX}ingest/"
RECONCILIATION_PREFIX = "reconciliation/"
ERASURE_PREFIX = "erasure/"  # GDPR erasure receipts, one per erasure run
DRILL_RUNS_PREFIX = f"{RUNS_PREFIX}drill/"  # restore-drill reports: under runs/, so write-once too
# Audit evidence in the reports bucket: written once (If-None-Match), never overwritten or deleted.
WRITE_ONCE_REPORT_PREFIXES = (RECONCILIATION_PREFIX, RUNS_PREFIX, ERASURE_PREFIX)
# The object tag the lifecycle rules select on; its values are jobs.contract.retention.RetentionClass.
RETENTION_TAG = "retention"

MAX_ID_LENGTH = 128
MAX_FILENAME_LENGTH = 255


def stage_prefix(stage: str) -> str:
    """`docuflow-{stage}`: the start of every resource name of a stage (Pulumi names the rest)."""
    return f"{APP}-{stage}"


def table_name(stage: str) -> str:
    return f"{stage_prefix(stage)}-documents-table"


DRILL_TABLE_INFIX = "-drill-"


def drill_table_prefix(stage: str) -> str:
    """Tables a restore drill creates start with this: the drill role may write only these, never the live table."""
    return f"{table_name(stage)}{DRILL_TABLE_INFIX}"


def drill_table_name(stage: str, run_id: str) -> str:
    return f"{drill_table_prefix(stage)}{run_id.lower()}"


def status_index_name(stage: str) -> str:
    return f"{stage_prefix(stage)}-documents-status-createdAt-index"


def arrivals_queue_name(stage: str) -> str:
    """The SQS queue the raw bucket's ObjectCreated notifications land in (the nightly work)."""
    return f"{stage_prefix(stage)}-raw-arrivals"


def arrivals_dead_letter_queue_name(stage: str) -> str:
    return f"{arrivals_queue_name(stage)}-dlq"


def bucket_name(stage: str, purpose: str) -> str:
    """Default bucket name for `purpose` in ("raw", "processed", "reports", "access-logs", "audit-data",
    "audit-log", "access-trail").
    """
    return f"{stage_prefix(stage)}-{purpose}"


def stage_of_table(name: str) -> str | None:
    """The stage whose document table `name` is (the inverse of table_name), else None."""
    head, tail = f"{APP}-", table_name("")[len(stage_prefix("")) :]
    if not (name.startswith(head) and name.endswith(tail)):
        return None
    stage = name[len(head) : -len(tail)]
    return stage if stage and table_name(stage) == name else None


def replica_bucket_name(stage: str, purpose: str, region: str) -> str:
    """The replica of a bucket in the stack's second region (bucket names are global, so the region is in it)."""
    return f"{bucket_name(stage, purpose)}-{region}"


def backup_vault_name(stage: str, region: str) -> str:
    """The stack's AWS Backup vault in `region` (the primary one, or the copies' in the second region)."""
    return f"{stage_prefix(stage)}-backups-{region}"


# --- the audit catalog (reconcile on Athena over S3 Inventory and DynamoDB exports) -----------
# The audit-data bucket holds what AWS generates for the reconcile: daily S3 Inventory reports of
# the raw and processed buckets and the table's exports. Athena's query results go to the reports
# bucket, under a prefix outside the write-once report prefixes.
AUDIT_DATA = "audit-data"  # the bucket's purpose: bucket_name(stage, AUDIT_DATA)
INVENTORY_PREFIX = "inventory/"
INVENTORY_CONFIGURATION_ID = "docuflow-daily"
DYNAMODB_EXPORTS_PREFIX = "exports/dynamodb/"
ATHENA_RESULTS_PREFIX = "athena/"
GLUE_INVENTORY_TABLES = {"raw": "raw_inventory", "processed": "processed_inventory"}
GLUE_EXPORT_TABLE = "documents_export"
# The nightly reconcile keeps the table it judged, brought forward by each night's incremental
# export: the polars engine as Parquet files under TABLE_STATE_PREFIX (a short lifecycle expiry:
# a state is read by the next night only), the Athena engine as an Iceberg table in the audit
# database whose files live under ICEBERG_PREFIX (never expired by lifecycle: Iceberg owns them),
# merged from the incremental exports' Glue table.
TABLE_STATE_PREFIX = "table-state/"
ICEBERG_PREFIX = "iceberg/"
GLUE_INCREMENTAL_TABLE = "documents_changes"
GLUE_STATE_TABLE = "documents_state"
# The Iceberg table's row that records, in the same transaction as each merge, when the table
# stands (the end of the last export merged), of which table, and when its chain was anchored.
STATE_ROW_PK = "TABLE-STATE#"
_STATE_TIME = "%Y-%m-%dT%H-%M-%SZ"


def inventory_prefix(source_bucket: str) -> str:
    """Where S3 Inventory writes the reports of `source_bucket` (manifests, data/, hive/)."""
    return f"{INVENTORY_PREFIX}{source_bucket}/{INVENTORY_CONFIGURATION_ID}/"


def table_state_prefix(engine: str, as_of: datetime) -> str:
    """Where the nightly reconcile keeps the table as of `as_of` (whole seconds, UTC): keys sort
    in time order, so the newest state is the greatest key under `table_state_root(engine)`.
    """
    return f"{table_state_root(engine)}{as_of.astimezone(UTC):{_STATE_TIME}}/"


def table_state_root(engine: str) -> str:
    return f"{TABLE_STATE_PREFIX}{engine}/"


def iceberg_location(table: str) -> str:
    """The Iceberg table's data and metadata prefix in the audit-data bucket."""
    return f"{ICEBERG_PREFIX}{table}/"


def dynamodb_export_prefix(export_id: str) -> str:
    """Where DynamoDB writes one export (manifest-summary.json, manifest-files.json, data/)."""
    return f"{DYNAMODB_EXPORTS_PREFIX}AWSDynamoDB/{export_id}/"


def glue_database_name(stage: str) -> str:
    """Glue and Athena names take lowercase letters, digits and underscores only."""
    return f"{APP}_{stage}_audit".replace("-", "_")


def athena_workgroup_name(stage: str) -> str:
    return f"{stage_prefix(stage)}-reconcile"


# --- the audit trail (docs/audit.md; the record schema is jobs.contract.audit) ----------------
# Every change of the table goes to the audit-log bucket (table stream -> Pipe -> Firehose ->
# Parquet), every read and write of raw/ and processed/ objects to the access-trail bucket
# (CloudTrail data events); both under Object Lock for the audit retention.
AUDIT_LOG = "audit-log"  # the bucket's purpose: bucket_name(stage, AUDIT_LOG)
ACCESS_TRAIL = "access-trail"
AUDIT_CHANGES_PREFIX = "changes/"
AUDIT_ERRORS_PREFIX = "errors/"  # records Firehose could not convert, as it writes them
AUDIT_PARTITION = "dt"  # the delivery day, yyyy-MM-dd (Firehose's !{timestamp:…}, UTC)
AUDIT_CONVERSION_FAILED = "format-conversion-failed"  # Firehose's !{firehose:error-output-type}
GLUE_CHANGES_TABLE = "changes"
GLUE_ACCESS_TABLE = "access"


def audit_changes_prefix(day: date) -> str:
    return f"{AUDIT_CHANGES_PREFIX}{AUDIT_PARTITION}={day:%Y-%m-%d}/"


def audit_errors_prefix(kind: str, day: date) -> str:
    return f"{AUDIT_ERRORS_PREFIX}{kind}/{AUDIT_PARTITION}={day:%Y-%m-%d}/"


def audit_delivery_name(stage: str) -> str:
    """The Firehose stream (and the local stand-in's object names) of the change log."""
    return f"{stage_prefix(stage)}-audit-changes"


def ttl_journal_name(table_name: str) -> str:
    """The local TTL stand-in's journal of the removals it made (DynamoDB Local only; no AWS resource)."""
    return f"{table_name}-standin-ttl"


def trail_database_name(stage: str) -> str:
    """The Glue database of the audit trail (changes and accesses), apart from the reconcile's."""
    return f"{APP}_{stage}_trail".replace("-", "_")


def audit_workgroup_name(stage: str) -> str:
    return f"{stage_prefix(stage)}-audit"


def access_trail_name(stage: str) -> str:
    return f"{stage_prefix(stage)}-access-trail"


# --- identifiers ---------------------------------------------------------------------------
def _has_control(value: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in value)


# Percent-encoded separators: harmless to S3, but a traversal to anything that URL-decodes keys.
_ENCODED_SEPARATORS = re.compile(r"%(2f|5c)", re.IGNORECASE)


def validate_id(value: object, kind: str = "id") -> str:
    """Return `value` if it is a safe userId/documentId, else raise InvalidIdError naming it.

    Ids are compared byte for byte (they are key parts), so an id must already be in Unicode
    NFC: the NFD spelling of the same name would otherwise be a second, different document.
    Filenames are not ids and are kept as uploaded (macOS, for one, writes NFD names).
    """
    if not isinstance(value, str) or not value:
        raise InvalidIdError(f"{kind} must be a non-empty string, got {value!r}")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidIdError(f"{kind} {value[:40]!r}… is {len(value)} characters (max {MAX_ID_LENGTH})")
    for bad in ("#", "/", "\\"):
        if bad in value:
            raise InvalidIdError(f"{kind} {value!r} contains {bad!r}")
    if ".." in value or value in (".",):
        raise InvalidIdError(f"{kind} {value!r} contains a path traversal ('..' or '.')")
    decoded = urllib.parse.unquote(value)
    if _ENCODED_SEPARATORS.search(value) or ".." in decoded or decoded == ".":
        raise InvalidIdError(f"{kind} {value!r} decodes to a path separator or traversal")
    if unicodedata.normalize("NFC", value) != value:
        raise InvalidIdError(f"{kind} {value!r} is not in Unicode NFC (normalize it before upload)")
    if _has_control(value):
        raise InvalidIdError(f"{kind} {value!r} contains a control or format character")
    if value != value.strip():
        raise InvalidIdError(f"{kind} {value!r} has leading or trailing whitespace")
    return value


def validate_filename(value: str) -> str:
    if not value or value in (".", "..") or value.startswith(".."):
        raise InvalidIdError(f"filename {value!r} is empty, a path component or starts with '..'")
    if _ENCODED_SEPARATORS.search(value):
        raise InvalidIdError(f"filename {value!r} contains a percent-encoded path separator")
    if len(value.encode()) > MAX_FILENAME_LENGTH:
        raise InvalidIdError(f"filename {value[:40]!r}… is longer than {MAX_FILENAME_LENGTH} bytes")
    if "/" in value or "\\" in value or _has_control(value):
        raise InvalidIdError(f"filename {value!r} contains a separator or control character")
    return value


# --- table keys ----------------------------------------------------------------------------
def user_pk(user_id: str) -> str:
    return _USER_PREFIX + validate_id(user_id, "userId")


def document_sk(document_id: str) -> str:
    return _DOC_PREFIX + validate_id(document_id, "documentId")


def status_pk(status: str) -> str:
    return _STATUS_PREFIX + status


def document_sk_prefix() -> str:
    """What every document's sort key starts with: a user's documents are `begins_with` it, so
    the other items of the partition (duplicate markers, the erasure marker) never reach a
    documents query.
    """
    return _DOC_PREFIX


def marker_sk(kind: str, digest: str) -> str:
    """`DUP#{kind}#{digest}`: the marker of one identity (kind CONTENT or INVOICE, a SHA-256)."""
    if not kind.isalpha() or not kind.isupper():
        raise InvalidKeyError(f"marker kind {kind!r} is not an upper-case word")
    if not _DIGEST.match(digest):
        raise InvalidKeyError(f"marker digest {digest!r} is not a lowercase hex SHA-256")
    return f"{_MARKER_PREFIX}{kind}#{digest}"


def marker_sk_prefix() -> str:
    return _MARKER_PREFIX


def parse_marker_sk(sk: str) -> tuple[str, str]:
    """Split `DUP#{kind}#{digest}` into (kind, digest)."""
    kind, sep, digest = _strip(_MARKER_PREFIX, sk, "SK").partition("#")
    if not sep:
        raise InvalidKeyError(f"SK {sk!r} is not DUP#{{kind}}#{{digest}}")
    marker_sk(kind, digest)  # the same rules as when it was built
    return kind, digest


def erasure_key(user_id: str) -> dict[str, str]:
    """The key of a user's erasure marker (jobs.erasure): one per user, in their partition."""
    return {PK_ATTR: user_pk(user_id), SK_ATTR: _ERASURE_SK}


def erasure_sk() -> str:
    """The sort key of every user's erasure marker (reconcile leaves those items out)."""
    return _ERASURE_SK


# The night's Textract page budget (jobs.ingest.pages): one counter item per night that every
# ingest task, scheduler retry and manual backfill of that night reserves from; no document (no
# ids, no index attributes, no version), so the reconcile and the audit questions leave it out by
# its partition key; the TTL removes it some nights later.
_TEXTRACT_PAGES_PK = "BUDGET#TEXTRACT_PAGES"
_NIGHT_PREFIX = "NIGHT#"
ENTITY_TEXTRACT_PAGES = "TEXTRACT_PAGES"


def textract_pages_pk() -> str:
    """The partition of the nights' Textract page counters (nothing else lives there)."""
    return _TEXTRACT_PAGES_PK


def textract_pages_key(night: date) -> dict[str, str]:
    """`BUDGET#TEXTRACT_PAGES` / `NIGHT#{yyyy-mm-dd}`: the counter of one night's Textract pages."""
    return {PK_ATTR: _TEXTRACT_PAGES_PK, SK_ATTR: f"{_NIGHT_PREFIX}{night.isoformat()}"}


def is_document_sk(sk: str) -> bool:
    """Whether a sort key names a document (a user's partition also holds their duplicate markers
    and erasure marker).
    """
    return sk.startswith(_DOC_PREFIX)


def _strip(prefix: str, value: str, what: str) -> str:
    if not value.startswith(prefix):
        raise InvalidKeyError(f"{what} {value!r} does not start with {prefix!r}")
    return value[len(prefix) :]


def parse_user_pk(pk: str) -> str:
    return validate_id(_strip(_USER_PREFIX, pk, "PK"), "userId")


def parse_document_sk(sk: str) -> str:
    return validate_id(_strip(_DOC_PREFIX, sk, "SK"), "documentId")


def parse_status_pk(gsi1pk: str) -> str:
    return _strip(_STATUS_PREFIX, gsi1pk, "GSI1PK")


# --- timestamps ----------------------------------------------------------------------------
TS_PATTERN = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"  # what format_ts writes
_TS_RE = re.compile(f"^{TS_PATTERN}$")


def format_ts(moment: datetime) -> str:
    """ISO-8601 UTC with millisecond precision and a `Z`: sorts lexicographically in time order."""
    if moment.tzinfo is None:
        raise ValueError(f"naive datetime {moment!r}: DocuFlow times are timezone-aware UTC")
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_ts(value: str) -> datetime:
    if not _TS_RE.match(value):
        raise ValueError(f"timestamp {value!r} is not ISO-8601 UTC with milliseconds and Z")
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def utc_now() -> datetime:
    return datetime.now(UTC)


def epoch_seconds(moment: datetime) -> int:
    """A TTL attribute's value: whole seconds since the epoch (DynamoDB TTL reads a Number)."""
    if moment.tzinfo is None:
        raise ValueError(f"naive datetime {moment!r}: DocuFlow times are timezone-aware UTC")
    return int(moment.timestamp())


def from_epoch_seconds(value: int | float | str | Decimal) -> datetime:
    """The moment a TTL attribute names (its inverse of `epoch_seconds`)."""
    return datetime.fromtimestamp(int(value), tz=UTC)


# --- S3 keys -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RawKey:
    user_id: str
    document_id: str
    filename: str

    @property
    def key(self) -> str:
        return raw_key(self.user_id, self.document_id, self.filename)


def raw_key(user_id: str, document_id: str, filename: str) -> str:
    return (
        f"{RAW_PREFIX}{validate_id(user_id, 'userId')}/"
        f"{validate_id(document_id, 'documentId')}/{validate_filename(filename)}"
    )


def parse_raw_key(key: str) -> RawKey:
    """Split `raw/{userId}/{documentId}/{filename}`; InvalidKeyError for anything else."""
    rest = _strip(RAW_PREFIX, key, "raw key")
    parts = rest.split("/")
    if len(parts) != 3:
        raise InvalidKeyError(f"raw key {key!r} is not raw/{{userId}}/{{documentId}}/{{filename}}")
    try:
        return RawKey(
            validate_id(parts[0], "userId"),
            validate_id(parts[1], "documentId"),
            validate_filename(parts[2]),
        )
    except InvalidIdError as exc:
        raise InvalidKeyError(f"raw key {key!r}: {exc}") from exc


def result_key(user_id: str, document_id: str) -> str:
    return (
        f"{PROCESSED_PREFIX}{validate_id(user_id, 'userId')}/{validate_id(document_id, 'documentId')}/{RESULT_FILENAME}"
    )


def parse_result_key(key: str) -> tuple[str, str]:
    """Split `processed/{userId}/{documentId}/result.json` into (userId, documentId)."""
    rest = _strip(PROCESSED_PREFIX, key, "result key")
    parts = rest.split("/")
    if len(parts) != 3 or parts[2] != RESULT_FILENAME:
        raise InvalidKeyError(f"result key {key!r} is not processed/{{userId}}/{{documentId}}/{RESULT_FILENAME}")
    try:
        return validate_id(parts[0], "userId"), validate_id(parts[1], "documentId")
    except InvalidIdError as exc:
        raise InvalidKeyError(f"result key {key!r}: {exc}") from exc


def s3_uri(bucket: str, key: str) -> str:
    return f"s3://{bucket}/{key}"


def parse_s3_uri(uri: str) -> tuple[str, str]:
    rest = _strip("s3://", uri, "S3 URI")
    bucket, _, key = rest.partition("/")
    if not bucket or not key:
        raise InvalidKeyError(f"S3 URI {uri!r} has no bucket or key")
    return bucket, key


def ingest_run_key(run_date: str, run_id: str) -> str:
    return f"{INGEST_RUNS_PREFIX}{run_date}/{run_id}.json"


def reconciliation_prefix(run_date: str, run_id: str) -> str:
    return f"{RECONCILIATION_PREFIX}{run_date}/{run_id}/"


def raw_document_prefix(user_id: str, document_id: str) -> str:
    """`raw/{userId}/{documentId}/`: every raw upload of one document (any filename)."""
    return f"{RAW_PREFIX}{validate_id(user_id, 'userId')}/{validate_id(document_id, 'documentId')}/"


def result_document_prefix(user_id: str, document_id: str) -> str:
    """`processed/{userId}/{documentId}/`: the document's result.json (and nothing else)."""
    return f"{PROCESSED_PREFIX}{validate_id(user_id, 'userId')}/{validate_id(document_id, 'documentId')}/"


def user_prefixes(user_id: str) -> tuple[str, str]:
    """`raw/{userId}/` and `processed/{userId}/`: everything stored for one user in S3."""
    user = validate_id(user_id, "userId")
    return f"{RAW_PREFIX}{user}/", f"{PROCESSED_PREFIX}{user}/"


def erasure_receipt_key(user_id: str, run_id: str) -> str:
    """`erasure/{userId}/{runId}.json`: by user, so a later run finds the earlier receipts."""
    return f"{ERASURE_PREFIX}{validate_id(user_id, 'userId')}/{run_id}.json"


def erasure_receipts_prefix(user_id: str) -> str:
    return f"{ERASURE_PREFIX}{validate_id(user_id, 'userId')}/"


def drill_report_key(run_date: str, run_id: str) -> str:
    return f"{DRILL_RUNS_PREFIX}{run_date}/{run_id}.json"
