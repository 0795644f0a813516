"""JobSettings: what every job reads from the environment, validated once (the botocore Config
built from it is jobs.store.clients.botocore_config: this module stays free of the AWS SDK).

The jobs reach AWS only through boto3's standard configuration: endpoints come from
AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_S3 when set (local stack), so no code path differs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from jobs.contract import layout
from jobs.contract.engines import OcrEngine
from jobs.contract.erasure import DataHoldings
from jobs.contract.retention import RetentionPolicy
from jobs.contract.schema import SQS_MAX_VISIBILITY_SECONDS, TABLE_STATE_DAYS, LifecycleSpec
from jobs.errors import SettingsError

ENV_STAGE = "DOCUFLOW_STAGE"
ENV_TABLE = "DOCUFLOW_TABLE_NAME"
ENV_INDEX = "DOCUFLOW_STATUS_INDEX_NAME"
ENV_RAW_BUCKET = "DOCUFLOW_RAW_BUCKET"
ENV_PROCESSED_BUCKET = "DOCUFLOW_PROCESSED_BUCKET"
ENV_REPORTS_BUCKET = "DOCUFLOW_REPORTS_BUCKET"
ENV_ARRIVALS_QUEUE_URL = "DOCUFLOW_ARRIVALS_QUEUE_URL"
# The retention policy as JSON (jobs.contract.RetentionPolicy): the stack's, which its lifecycle
# rules are built from too; absent, the contract's defaults (the local stack's rules).
ENV_RETENTION = "DOCUFLOW_RETENTION"
# The erasure's receipt: what still holds a user's data and how long (jobs.contract.erasure.DataHoldings).
ENV_HOLDINGS = "DOCUFLOW_HOLDINGS"
ENV_MAX_ATTEMPTS = "DOCUFLOW_MAX_ATTEMPTS"
ENV_LEASE_SECONDS = "DOCUFLOW_LEASE_SECONDS"
ENV_IO_THREADS = "DOCUFLOW_IO_THREADS"
ENV_WORKERS = "DOCUFLOW_EXTRACT_WORKERS"
ENV_RETRY_MODE = "DOCUFLOW_RETRY_MODE"
ENV_RETRY_ATTEMPTS = "DOCUFLOW_RETRY_ATTEMPTS"
ENV_CONFIDENCE = "DOCUFLOW_CONFIDENCE_THRESHOLD"
ENV_OCR_ENGINE = "DOCUFLOW_OCR_ENGINE"
ENV_TEXTRACT_TPS = "DOCUFLOW_TEXTRACT_TPS"
# The reconcile's engines and the audit catalog the Athena engine queries (components/audit_catalog.py).
ENV_RECONCILE_ENGINE = "DOCUFLOW_RECONCILE_ENGINE"
ENV_TABLE_ARN = "DOCUFLOW_TABLE_ARN"
# The reconcile's reports: the KMS key (an alias) that signs them, the image digest they name.
ENV_REPORT_SIGNING_KEY = "DOCUFLOW_REPORT_SIGNING_KEY"
ENV_IMAGE_DIGEST = "DOCUFLOW_IMAGE_DIGEST"
ENV_REPORTS_TOPIC_ARN = "DOCUFLOW_REPORTS_TOPIC_ARN"  # where a written report is announced (SNS)
ENV_ATHENA_WORKGROUP = "DOCUFLOW_ATHENA_WORKGROUP"
ENV_GLUE_DATABASE = "DOCUFLOW_GLUE_DATABASE"
ENV_EXPORT_TABLE = "DOCUFLOW_GLUE_EXPORT_TABLE"
ENV_INCREMENTAL_TABLE = "DOCUFLOW_GLUE_INCREMENTAL_TABLE"
ENV_STATE_TABLE = "DOCUFLOW_GLUE_STATE_TABLE"
ENV_RAW_INVENTORY_TABLE = "DOCUFLOW_GLUE_RAW_INVENTORY_TABLE"
ENV_PROCESSED_INVENTORY_TABLE = "DOCUFLOW_GLUE_PROCESSED_INVENTORY_TABLE"
ENV_INVENTORY_BUCKET = "DOCUFLOW_INVENTORY_BUCKET"
ENV_INVENTORY_PREFIX = "DOCUFLOW_INVENTORY_PREFIX"
ENV_INVENTORY_CONFIG_ID = "DOCUFLOW_INVENTORY_CONFIG_ID"
ENV_INVENTORY_MAX_AGE_HOURS = "DOCUFLOW_INVENTORY_MAX_AGE_HOURS"
ENV_FIRST_INVENTORY_HOURS = "DOCUFLOW_FIRST_INVENTORY_HOURS"
ENV_EXPORT_BUCKET = "DOCUFLOW_EXPORT_BUCKET"
ENV_EXPORT_PREFIX = "DOCUFLOW_EXPORT_PREFIX"
ENV_TEXTRACT_FALLBACK = "DOCUFLOW_TEXTRACT_FALLBACK"
ENV_TEXTRACT_MAX_PAGES = "DOCUFLOW_TEXTRACT_MAX_PAGES"
ENV_FAILED_RATIO_THRESHOLD = "DOCUFLOW_FAILED_RATIO_THRESHOLD"
# The audit trail (docs/audit.md): the change log's bucket, since when it is complete, and where
# Athena finds it (components/audit_trail.py declares them; names from jobs.contract.layout).
ENV_AUDIT_BUCKET = "DOCUFLOW_AUDIT_BUCKET"
ENV_AUDIT_LOG_SINCE = "DOCUFLOW_AUDIT_LOG_SINCE"
ENV_AUDIT_WORKGROUP = "DOCUFLOW_AUDIT_WORKGROUP"
ENV_TRAIL_DATABASE = "DOCUFLOW_TRAIL_DATABASE"
ENV_SQS_MOVE_TASKS = "DOCUFLOW_SQS_MOVE_TASKS"
# The nightly reconcile's chain of table states (jobs/reconcile/nightly.py): where the states
# are kept, how often the chain starts over from a full export, how many missed nights one run
# may bring forward, and who makes the table's exports (DynamoDB, or the local stack's stand-in).
ENV_STATE_BUCKET = "DOCUFLOW_STATE_BUCKET"
ENV_REANCHOR_DAYS = "DOCUFLOW_RECONCILE_REANCHOR_DAYS"
ENV_CATCH_UP_DAYS = "DOCUFLOW_RECONCILE_CATCH_UP_DAYS"
ENV_TABLE_STATE_DAYS = "DOCUFLOW_TABLE_STATE_DAYS"
ENV_TABLE_EXPORTS = "DOCUFLOW_TABLE_EXPORTS"
# The review API: how long a reviewer's claim lasts, and a presigned result.json URL (stack settings).
ENV_REVIEW_LEASE_SECONDS = "DOCUFLOW_REVIEW_LEASE_SECONDS"
ENV_RESULT_URL_SECONDS = "DOCUFLOW_RESULT_URL_SECONDS"
ENV_SHARD_INDEX = "SHARD_INDEX"
ENV_SHARD_COUNT = "SHARD_COUNT"

# The settings the ECS task definitions pass and `local up` exports, in one list.
JOB_ENV_VARS = (
    ENV_STAGE,
    ENV_TABLE,
    ENV_RAW_BUCKET,
    ENV_PROCESSED_BUCKET,
    ENV_REPORTS_BUCKET,
    ENV_ARRIVALS_QUEUE_URL,
    ENV_REVIEW_LEASE_SECONDS,
    ENV_RESULT_URL_SECONDS,
    ENV_RETENTION,
)


def _default_ocr_engine(env: Mapping[str, str]) -> OcrEngine:
    return OcrEngine.LOCAL if env.get("AWS_ENDPOINT_URL_S3") else OcrEngine.TEXTRACT


# JobSettings field -> the environment variable it is read from (from_env).
_ENV_OF = {
    "stage": ENV_STAGE,
    "table_name": ENV_TABLE,
    "index_name": ENV_INDEX,
    "raw_bucket": ENV_RAW_BUCKET,
    "processed_bucket": ENV_PROCESSED_BUCKET,
    "reports_bucket": ENV_REPORTS_BUCKET,
    "arrivals_queue_url": ENV_ARRIVALS_QUEUE_URL,
    "retention": ENV_RETENTION,
    "holdings": ENV_HOLDINGS,
    "max_attempts": ENV_MAX_ATTEMPTS,
    "lease_seconds": ENV_LEASE_SECONDS,
    "io_threads": ENV_IO_THREADS,
    "extract_workers": ENV_WORKERS,
    "retry_mode": ENV_RETRY_MODE,
    "retry_attempts": ENV_RETRY_ATTEMPTS,
    "confidence_threshold": ENV_CONFIDENCE,
    "ocr_engine": ENV_OCR_ENGINE,
    "textract_tps": ENV_TEXTRACT_TPS,
    "reconcile_engine": ENV_RECONCILE_ENGINE,
    "table_arn": ENV_TABLE_ARN,
    "athena_workgroup": ENV_ATHENA_WORKGROUP,
    "glue_database": ENV_GLUE_DATABASE,
    "glue_export_table": ENV_EXPORT_TABLE,
    "glue_incremental_table": ENV_INCREMENTAL_TABLE,
    "glue_state_table": ENV_STATE_TABLE,
    "glue_raw_inventory_table": ENV_RAW_INVENTORY_TABLE,
    "glue_processed_inventory_table": ENV_PROCESSED_INVENTORY_TABLE,
    "inventory_bucket": ENV_INVENTORY_BUCKET,
    "inventory_prefix": ENV_INVENTORY_PREFIX,
    "inventory_config_id": ENV_INVENTORY_CONFIG_ID,
    "inventory_max_age_hours": ENV_INVENTORY_MAX_AGE_HOURS,
    "first_inventory_hours": ENV_FIRST_INVENTORY_HOURS,
    "export_bucket": ENV_EXPORT_BUCKET,
    "export_prefix": ENV_EXPORT_PREFIX,
    "state_bucket": ENV_STATE_BUCKET,
    "reconcile_reanchor_days": ENV_REANCHOR_DAYS,
    "reconcile_catch_up_days": ENV_CATCH_UP_DAYS,
    "table_state_days": ENV_TABLE_STATE_DAYS,
    "table_exports": ENV_TABLE_EXPORTS,
    "shard_index": ENV_SHARD_INDEX,
    "shard_count": ENV_SHARD_COUNT,
    "textract_fallback": ENV_TEXTRACT_FALLBACK,
    "textract_max_pages": ENV_TEXTRACT_MAX_PAGES,
    "failed_ratio_threshold": ENV_FAILED_RATIO_THRESHOLD,
    "audit_bucket": ENV_AUDIT_BUCKET,
    "audit_log_since": ENV_AUDIT_LOG_SINCE,
    "audit_workgroup": ENV_AUDIT_WORKGROUP,
    "trail_database": ENV_TRAIL_DATABASE,
    "sqs_move_tasks": ENV_SQS_MOVE_TASKS,
    "review_lease_seconds": ENV_REVIEW_LEASE_SECONDS,
    "result_url_seconds": ENV_RESULT_URL_SECONDS,
    "reports_topic_arn": ENV_REPORTS_TOPIC_ARN,
}


class JobSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: str = Field(default="dev", pattern=r"^[a-z][a-z0-9-]{0,20}$")
    table_name: str = ""
    index_name: str = ""
    raw_bucket: str = ""
    processed_bucket: str = ""
    reports_bucket: str = ""
    arrivals_queue_url: str = ""  # the SQS queue of raw/ ObjectCreated events (the stack or `local up` gives it)
    retention: RetentionPolicy = RetentionPolicy()
    holdings: DataHoldings = DataHoldings()  # the erasure job's only (its receipt)
    max_attempts: int = Field(default=3, ge=1, le=20)
    # A document held by another claim defers its message for the lease: SQS hides a message
    # for 12 hours at most, so no longer lease could ever be deferred to.
    lease_seconds: int = Field(default=900, ge=1, le=SQS_MAX_VISIBILITY_SECONDS)
    # Enough threads to hide request latency; fewer or more measured no better (README, Performance).
    io_threads: int = Field(default=32, ge=1, le=256)
    extract_workers: int = Field(default=0, ge=0, le=64)  # 0: one per core
    retry_mode: Literal["standard", "adaptive", "legacy"] = "standard"
    retry_attempts: int = Field(default=8, ge=1, le=20)
    confidence_threshold: float = Field(default=80.0, ge=0, le=100)
    # Scans and plain PDFs: Amazon Textract on AWS, the embedded tesseract beside a local S3.
    # Built without an environment, the settings take the engine that never costs money;
    # from_env derives it from the environment it is given (the stack sets it explicitly).
    ocr_engine: OcrEngine = OcrEngine.LOCAL
    # Client-side pace of Textract calls per worker, below the account's TPS quota.
    textract_tps: float = Field(default=1.0, gt=0, le=50)
    # A --backfill sweep split over N tasks (the scheduler sets SHARD_INDEX/SHARD_COUNT).
    shard_index: int = Field(default=0, ge=0)
    shard_count: int = Field(default=1, ge=1, le=1000)
    # Text-layer PDFs whose local reading leaves header fields missing may also go to Textract
    # AnalyzeExpense (jobs.extract.fallback decides which). Off by default: every call costs money.
    textract_fallback: bool = False
    # The Textract pages one ingest run may spend (None: no cap). A document's pages are reserved
    # before its Textract call; one that would pass the cap waits in the queue for the next night
    # (jobs/ingest/pages.py). Per task: a stack running N ingest tasks gives each its share.
    textract_max_pages: int | None = Field(default=None, ge=1)
    # An ingest night whose FAILED documents pass this share of those it finished ends with exit 1
    # (ExitCode.FINDINGS) and breaches the failed-ratio alarm: a bad image is never a silent night.
    # Judged from jobs.contract.metrics.MIN_DOCUMENTS_FOR_RATIO finished documents on.
    failed_ratio_threshold: float = Field(default=0.5, gt=0, le=1)
    # `ingest --redrive-dlq`: SQS's message move task (StartMessageMoveTask), or the job's own
    # receive-send-delete, which any SQS server answers (moto has no move tasks). Built without
    # an environment, the settings take the way that works anywhere; from_env takes the move
    # task unless AWS_ENDPOINT_URL_SQS points at another server.
    sqs_move_tasks: bool = False
    # Reconcile: the engine the schedule runs (one stack setting turns Athena on), and where the
    # Athena engine finds its catalog, the inventories and the table exports. Empty: from the stage.
    reconcile_engine: str = Field(default="polars", pattern=r"^(polars|duckdb|athena)$")
    table_arn: str = ""  # needed only to start a table export (ExportTableToPointInTime)
    # Names and places from jobs.contract.layout (what components/audit_catalog.py declares).
    athena_workgroup: str = ""
    glue_database: str = ""
    glue_export_table: str = layout.GLUE_EXPORT_TABLE
    glue_incremental_table: str = layout.GLUE_INCREMENTAL_TABLE  # incremental exports
    glue_state_table: str = layout.GLUE_STATE_TABLE  # the Iceberg table the nightly run keeps
    glue_raw_inventory_table: str = layout.GLUE_INVENTORY_TABLES["raw"]
    glue_processed_inventory_table: str = layout.GLUE_INVENTORY_TABLES["processed"]
    inventory_bucket: str = ""  # the audit-data bucket
    inventory_prefix: str = layout.INVENTORY_PREFIX  # S3 Inventory writes {prefix}{source bucket}/{config id}/…
    inventory_config_id: str = layout.INVENTORY_CONFIGURATION_ID
    # An inventory whose newest delivery is older than this is an error finding, never judged
    # against (S3 Inventory delivers daily: two missed days are a broken delivery, not a delay).
    inventory_max_age_hours: int = Field(default=48, ge=1)
    # Until this long after the inventory configuration, a missing first delivery is "nothing to
    # judge yet" rather than an error: AWS says a first report can take up to 48 hours.
    first_inventory_hours: int = Field(default=48, ge=0)
    export_bucket: str = ""  # the audit-data bucket
    export_prefix: str = layout.DYNAMODB_EXPORTS_PREFIX  # exports land in {prefix}AWSDynamoDB/{export id}/
    state_bucket: str = ""  # the audit-data bucket: table states under layout.TABLE_STATE_PREFIX
    # A chain anchored this many days ago starts over from a full export (monthly by default);
    # a newest state older than catch-up days does too (the nights in between are not brought
    # forward one export at a time). Both stay within PITR's 35 days and the states' expiry.
    reconcile_reanchor_days: int = Field(default=30, ge=1, le=35)
    reconcile_catch_up_days: int = Field(default=7, ge=1, le=30)
    # The states' lifecycle expiry (the stack's tableStateRetentionDays): how long a state may
    # keep an earlier state's data files follows from it (jobs.reconcile.nightly.files_kept_for).
    table_state_days: int = Field(default=TABLE_STATE_DAYS, ge=2, le=35)
    # "standin": the local stack's stand-in answers the table-export calls (DynamoDB Local has
    # none: jobs/local/standins/exports.py); anything else is DynamoDB's own.
    table_exports: Literal["aws", "standin"] = "aws"
    # A reviewer's claim on a document in review; the life of a presigned result.json GET.
    review_lease_seconds: int = Field(default=1800, ge=60, le=24 * 3600)
    result_url_seconds: int = Field(default=300, ge=1, le=7 * 24 * 3600)
    # Where a night's reconcile report is announced (the stack's alert topic); empty: not announced.
    reports_topic_arn: str = ""
    # The change log (empty names: from the stage). Versions written before `audit_log_since`
    # need no record (a stack whose table is older than its log); unset: every version does.
    audit_bucket: str = ""
    audit_log_since: datetime | None = None
    audit_workgroup: str = ""
    trail_database: str = ""

    @field_validator("audit_log_since")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("give a time zone (e.g. 2026-01-01T00:00:00Z)")
        return value

    @field_validator("retention", "holdings", mode="before")
    @classmethod
    def _from_json(cls, value: object, info: ValidationInfo) -> object:
        model = RetentionPolicy if info.field_name == "retention" else DataHoldings
        return model.model_validate_json(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _audit_defaults_from_stage(self) -> JobSettings:
        defaults = {
            "athena_workgroup": layout.athena_workgroup_name(self.stage),
            "glue_database": layout.glue_database_name(self.stage),
            "inventory_bucket": layout.bucket_name(self.stage, layout.AUDIT_DATA),
            "export_bucket": layout.bucket_name(self.stage, layout.AUDIT_DATA),
            "state_bucket": layout.bucket_name(self.stage, layout.AUDIT_DATA),
            "audit_bucket": layout.bucket_name(self.stage, layout.AUDIT_LOG),
            "audit_workgroup": layout.audit_workgroup_name(self.stage),
            "trail_database": layout.trail_database_name(self.stage),
        }
        for name, value in defaults.items():
            if not getattr(self, name):
                object.__setattr__(self, name, value)
        return self

    @model_validator(mode="after")
    def _defaults_from_stage(self) -> JobSettings:
        defaults = {
            "table_name": layout.table_name(self.stage),
            "index_name": layout.status_index_name(self.stage),
            "raw_bucket": layout.bucket_name(self.stage, "raw"),
            "processed_bucket": layout.bucket_name(self.stage, "processed"),
            "reports_bucket": layout.bucket_name(self.stage, "reports"),
        }
        for name, value in defaults.items():
            if not getattr(self, name):
                object.__setattr__(self, name, value)
        return self

    def check_endpoints(self, environ: Mapping[str, str] | None = None) -> None:
        """Refuse to send documents to the real Textract while S3 is an emulator on loopback.

        The process environment by default: it is where boto3 itself reads the endpoints.
        """
        env = os.environ if environ is None else environ
        if (
            self.ocr_engine == "textract"
            and env.get("AWS_ENDPOINT_URL_S3")
            and not env.get("AWS_ENDPOINT_URL_TEXTRACT")
        ):
            raise SettingsError(
                f"{ENV_OCR_ENGINE}=textract with a local S3 endpoint but no AWS_ENDPOINT_URL_TEXTRACT: "
                "use DOCUFLOW_OCR_ENGINE=local (or off) on the embedded stack"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> JobSettings:
        env = os.environ if environ is None else environ
        data: dict[str, Any] = {f: env[v] for f, v in _ENV_OF.items() if env.get(v)}
        data.setdefault("ocr_engine", _default_ocr_engine(env))
        data.setdefault("sqs_move_tasks", not env.get("AWS_ENDPOINT_URL_SQS"))
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"{_ENV_OF[str(e['loc'][0])] if e['loc'] else '?'}: {e['msg']}" for e in exc.errors())
            raise SettingsError(f"invalid job settings: {problems}") from exc

    @property
    def workers(self) -> int:
        return self.extract_workers or (os.cpu_count() or 1)

    def lifecycle(self) -> LifecycleSpec:
        """The buckets' lifecycle rules for this retention policy (the local stack's)."""
        return LifecycleSpec(retention=self.retention)

    def bucket_names(self) -> dict[str, str]:
        """Bucket name per purpose, as jobs.contract.bucket_specs expects them."""
        return {
            "raw": self.raw_bucket,
            "processed": self.processed_bucket,
            "reports": self.reports_bucket,
        }

    def env(self) -> dict[str, str]:
        """The settings every job reads, as environment variables (JOB_ENV_VARS, in order)."""
        return {
            ENV_STAGE: self.stage,
            ENV_TABLE: self.table_name,
            ENV_RAW_BUCKET: self.raw_bucket,
            ENV_PROCESSED_BUCKET: self.processed_bucket,
            ENV_REPORTS_BUCKET: self.reports_bucket,
            ENV_ARRIVALS_QUEUE_URL: self.arrivals_queue_url,
            ENV_REVIEW_LEASE_SECONDS: str(self.review_lease_seconds),
            ENV_RESULT_URL_SECONDS: str(self.result_url_seconds),
            ENV_RETENTION: self.retention.to_env(),
        }
