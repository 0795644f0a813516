"""The job settings' sections, one per concern: each setting is one field (type, bounds, default,
description), and its variable is derived from the field (jobs.settings._base).

Field names are unique across the sections (tests/jobs/test_job_settings.py): a setting's name is
its variable's, and `env_name`, `env_of` and `JobSettings.changed` name settings by it.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_settings import NoDecode

from jobs.contract import layout
from jobs.contract.engines import OcrEngine
from jobs.contract.erasure import DataHoldings
from jobs.contract.retention import RetentionPolicy
from jobs.contract.schema import SQS_MAX_VISIBILITY_SECONDS, TABLE_STATE_DAYS, LifecycleSpec
from jobs.settings._base import FromEnvironment, FromStage, Section


def _bucket(purpose: str) -> FromStage:
    return FromStage(lambda stage: layout.bucket_name(stage, purpose))


def _with_zone(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError("give a time zone (e.g. 2026-01-01T00:00:00Z)")
    return value


class StoreSection(Section):
    """The stack's table, buckets and queue, what they keep and for how long, and how clients reach them
    (jobs.store.clients).
    """

    table_name: Annotated[str, FromStage(layout.table_name)] = Field(default="", description="The documents table.")
    index_name: Annotated[str, FromStage(layout.status_index_name)] = Field(
        default="", validation_alias="DOCUFLOW_STATUS_INDEX_NAME", description="The table's status index."
    )
    table_arn: str = Field(
        default="", description="The table's ARN: needed only to start a table export (ExportTableToPointInTime)."
    )
    raw_bucket: Annotated[str, _bucket("raw")] = Field(default="", description="Where documents arrive.")
    processed_bucket: Annotated[str, _bucket("processed")] = Field(
        default="", description="Where each document's result.json is written."
    )
    reports_bucket: Annotated[str, _bucket("reports")] = Field(
        default="", description="Where run summaries and reconcile reports are written (Object Lock)."
    )
    arrivals_queue_url: str = Field(
        default="",
        description="The SQS queue of raw/ ObjectCreated events (the stack or `local up` gives it); "
        "empty: only `ingest backfill` can run.",
    )
    # The stack's policy, which its lifecycle rules are built from too: items (TTL) and objects
    # expire on one clock. NoDecode: the JSON is read by _from_json, whose errors name the field.
    retention: Annotated[RetentionPolicy, NoDecode] = Field(
        default=RetentionPolicy(),
        description="The retention policy as JSON (jobs.contract.RetentionPolicy); unset: the contract's "
        "defaults (the local stack's rules).",
    )
    holdings: Annotated[DataHoldings, NoDecode] = Field(
        default=DataHoldings(),
        description="What still holds a user's data and how long, as JSON (jobs.contract.erasure.DataHoldings): "
        "the erasure's receipt names them.",
    )
    # Enough threads to hide request latency; fewer or more measured no better (README, Performance).
    io_threads: int = Field(default=32, ge=1, le=256, description="Threads for S3 and DynamoDB requests.")
    retry_mode: Literal["standard", "adaptive", "legacy"] = Field(
        default="standard", description="botocore's retry mode for every AWS client."
    )
    retry_attempts: int = Field(
        default=8, ge=1, le=20, description="botocore's total attempts per AWS request (first one included)."
    )

    @field_validator("retention", "holdings", mode="before")
    @classmethod
    def _from_json(cls, value: object, info: ValidationInfo) -> object:
        model = RetentionPolicy if info.field_name == "retention" else DataHoldings
        return model.model_validate_json(value) if isinstance(value, str) else value

    def lifecycle(self) -> LifecycleSpec:
        """The buckets' lifecycle rules for this retention policy (the local stack's)."""
        return LifecycleSpec(retention=self.retention)

    def bucket_names(self) -> dict[str, str]:
        """Bucket name per purpose, as jobs.contract.bucket_specs expects them."""
        return {"raw": self.raw_bucket, "processed": self.processed_bucket, "reports": self.reports_bucket}


class IngestSection(Section):
    """The nightly ingest: claims, attempts, workers, the backfill's shards, the night's verdict."""

    max_attempts: int = Field(
        default=3,
        ge=1,
        le=20,
        description="Attempts at one document that failed in the run itself (a crashed or timed-out extraction) "
        "before the ingest dead-letters it.",
    )
    # A document held by another claim defers its message for the lease: SQS hides a message
    # for 12 hours at most, so no longer lease could ever be deferred to.
    lease_seconds: int = Field(
        default=900,
        ge=1,
        le=SQS_MAX_VISIBILITY_SECONDS,
        description="How long an ingest's claim on a document lasts (at most SQS's 12 hours).",
    )
    extract_workers: int = Field(
        default=0, ge=0, le=64, description="Processes that extract documents; 0: one per core."
    )
    shard_index: int = Field(
        default=0,
        ge=0,
        validation_alias="SHARD_INDEX",
        description="This task's share of an `ingest backfill` sweep split over SHARD_COUNT tasks.",
    )
    shard_count: int = Field(
        default=1,
        ge=1,
        le=1000,
        validation_alias="SHARD_COUNT",
        description="The tasks an `ingest backfill` sweep is split over.",
    )
    # A bad image is never a silent night: the failed-ratio alarm fires too.
    failed_ratio_threshold: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="An ingest run whose FAILED documents pass this share of those it finished exits 1 "
        "(findings); judged from jobs.contract.metrics.MIN_DOCUMENTS_FOR_RATIO documents on.",
    )
    # moto has no move tasks; any SQS server answers the job's own receive-send-delete.
    sqs_move_tasks: Annotated[
        bool,
        FromEnvironment(lambda env: not env.get("AWS_ENDPOINT_URL_SQS"), "`true` unless AWS_ENDPOINT_URL_SQS is set"),
    ] = Field(
        default=False,
        description="`ingest redrive` uses SQS's message move task (StartMessageMoveTask) rather "
        "than its own receive-send-delete.",
    )

    @property
    def workers(self) -> int:
        return self.extract_workers or (os.cpu_count() or 1)


class ExtractionChoices(BaseModel):
    """What a stack chooses of every extraction; jobs.extract.ExtractionSettings adds the limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    confidence_threshold: float = Field(
        default=80.0, ge=0, le=100, description="A required field read with less confidence (%) goes to review."
    )
    ocr_engine: OcrEngine = Field(
        default=OcrEngine.OFF,
        description="Who reads scans and plain PDFs: Amazon Textract, the embedded tesseract, or nobody "
        "(`off`: they go to NEEDS_OCR).",
    )


class ExtractionSection(Section, ExtractionChoices):
    """The extraction's choices and the ingest's Textract calls: rate, fallback, the night's page cap."""

    model_config = Section.model_config  # a section's, over the choices' own (frozen, extra="forbid" both)

    # Built without an environment, the job settings take the engine that never costs money and
    # still reads scans.
    ocr_engine: Annotated[
        OcrEngine,
        FromEnvironment(
            lambda env: OcrEngine.LOCAL if env.get("AWS_ENDPOINT_URL_S3") else OcrEngine.TEXTRACT,
            "`local` when AWS_ENDPOINT_URL_S3 is set, else `textract`",
        ),
    ] = Field(default=OcrEngine.LOCAL, description=ExtractionChoices.model_fields["ocr_engine"].description)
    textract_tps: float = Field(
        default=1.0, gt=0, le=50, description="Textract calls per second per worker, below the account's quota."
    )
    # Off in code (every call costs money); the stack sets it with ocrEngine textract (textractFallback).
    textract_fallback: bool = Field(
        default=False,
        description="Text-layer PDFs whose local reading would go to review are read by Textract AnalyzeExpense "
        "too, within the night's page cap, and its reading kept only when clean (jobs.extract.fallback).",
    )
    # A document's pages are reserved before its Textract call; one that would pass the cap waits
    # in the queue for the next night (jobs/ingest/pages.py).
    textract_max_pages: int | None = Field(
        default=None,
        ge=1,
        description="The Textract pages one night may spend, every ingest task, retry and manual run of it "
        "together (a counter in the table); unset: no cap.",
    )


class ReconcileSection(Section):
    """The reconcile: the Athena catalog, the inventories, the exports and the nightly chain. The
    engine is the command's (`reconcile nightly|athena|files --engine`), chosen for the schedule by
    the stack setting docuflow:reconcileEngine.
    """

    # Where the Athena engine finds its catalog, the inventories and the table exports: the names
    # and places components/audit_catalog.py declares, from jobs.contract.layout.
    athena_workgroup: Annotated[str, FromStage(layout.athena_workgroup_name)] = Field(
        default="", description="The Athena workgroup of the reconcile's queries."
    )
    glue_database: Annotated[str, FromStage(layout.glue_database_name)] = Field(
        default="", description="The Glue database of the audit catalog."
    )
    glue_export_table: str = Field(default=layout.GLUE_EXPORT_TABLE, description="The catalog's table export table.")
    glue_incremental_table: str = Field(
        default=layout.GLUE_INCREMENTAL_TABLE, description="The catalog's incremental export table."
    )
    glue_state_table: str = Field(
        default=layout.GLUE_STATE_TABLE, description="The Iceberg table of table states the nightly run keeps."
    )
    glue_raw_inventory_table: str = Field(
        default=layout.GLUE_INVENTORY_TABLES["raw"], description="The catalog's table of the raw bucket's inventory."
    )
    glue_processed_inventory_table: str = Field(
        default=layout.GLUE_INVENTORY_TABLES["processed"],
        description="The catalog's table of the processed bucket's inventory.",
    )
    inventory_bucket: Annotated[str, _bucket(layout.AUDIT_DATA)] = Field(
        default="", description="Where S3 Inventory delivers the data buckets' inventories."
    )
    inventory_prefix: str = Field(
        default=layout.INVENTORY_PREFIX,
        description="S3 Inventory writes {prefix}{source bucket}/{configuration id}/….",
    )
    inventory_config_id: str = Field(
        default=layout.INVENTORY_CONFIGURATION_ID, description="The data buckets' inventory configuration."
    )
    # S3 Inventory delivers daily: two missed days are a broken delivery, not a delay.
    inventory_max_age_hours: int = Field(
        default=48,
        ge=1,
        description="An inventory whose newest delivery is older is an error finding, never judged against.",
    )
    # AWS says a first report can take up to 48 hours.
    first_inventory_hours: int = Field(
        default=48,
        ge=0,
        description='How long after the inventory configuration a missing first delivery is "nothing to '
        'judge yet" rather than an error.',
    )
    export_bucket: Annotated[str, _bucket(layout.AUDIT_DATA)] = Field(
        default="", description="Where DynamoDB's table exports land."
    )
    export_prefix: str = Field(
        default=layout.DYNAMODB_EXPORTS_PREFIX, description="Exports land in {prefix}AWSDynamoDB/{export id}/."
    )
    state_bucket: Annotated[str, _bucket(layout.AUDIT_DATA)] = Field(
        default="", description="Where the nightly reconcile keeps its table states (layout.TABLE_STATE_PREFIX)."
    )
    # Both stay within PITR's 35 days and the states' expiry.
    reconcile_reanchor_days: int = Field(
        default=30,
        ge=1,
        le=35,
        description="The nightly chain starts over from a full export this many days after its anchor.",
    )
    reconcile_catch_up_days: int = Field(
        default=7,
        ge=1,
        le=30,
        description="A newest table state older than this starts the chain over too, instead of bringing "
        "each missed night forward.",
    )
    # How long a state may keep an earlier state's data files follows from it
    # (jobs.reconcile.nightly.files_kept_for).
    table_state_days: int = Field(
        default=TABLE_STATE_DAYS,
        ge=2,
        le=35,
        description="The table states' lifecycle expiry (the stack's tableStateRetentionDays).",
    )


class ReviewSection(Section):
    """The review desk's leases and the frontend's result URLs."""

    review_lease_seconds: int = Field(
        default=1800, ge=60, le=24 * 3600, description="How long a reviewer's claim on a document in review lasts."
    )
    result_url_seconds: int = Field(
        default=300, ge=1, le=7 * 24 * 3600, description="How long a presigned result.json GET lives."
    )


class AuditSection(Section):
    """The change log (docs/audit.md), as components/audit_trail.py declares it."""

    audit_bucket: Annotated[str, _bucket(layout.AUDIT_LOG)] = Field(default="", description="The change log's bucket.")
    # A stack whose table is older than its log.
    audit_log_since: datetime | None = Field(
        default=None,
        description="Versions written before this time (with its zone) need no change-log record; "
        "unset: every version does.",
    )
    audit_workgroup: Annotated[str, FromStage(layout.audit_workgroup_name)] = Field(
        default="", description="The Athena workgroup of the audit trail's queries."
    )
    trail_database: Annotated[str, FromStage(layout.trail_database_name)] = Field(
        default="", description="The Glue database of the audit trail."
    )

    @field_validator("audit_log_since")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return _with_zone(value)


class RunSection(Section):
    """One run as the stack started it: when the schedule meant it, in which zone, from which image, and
    where its report is announced and by which key signed.
    """

    # Set only by the schedule (EventBridge Scheduler's <aws.scheduler.scheduled-time>): a task started
    # late by the scheduler still stops draining in time for the reconcile, and a run without it is manual.
    scheduled_time: datetime | None = Field(
        default=None,
        description="When the schedule meant this run to start (with its zone); the drain's bound counts from "
        "it. Set only by the schedule: unset, the run is manual and its bound counts from its start.",
    )
    # The reports' nights are the schedule's local dates (an evening run in a DST zone falls on
    # different UTC dates in summer and winter): `reports verify` and `reports pack` read them so.
    schedule_timezone: str = Field(
        default="UTC",
        description="The stack's schedule time zone (docuflow:scheduleTimezone, IANA name): a report's "
        "night is its start's date there.",
    )
    image_digest: str = Field(
        default="", description="The job image's digest, named in each report's provenance; unset: the git commit."
    )
    reports_topic_arn: str = Field(
        default="", description="The SNS topic a written reconcile report is announced on; unset: not announced."
    )
    report_signing_key: str = Field(
        default="",
        description="The KMS key (its ARN) that signs reconcile reports; unset: reports are written unsigned. "
        "`reports verify` accepts only signatures by this key, and refuses an alias (it can be moved).",
    )

    @field_validator("scheduled_time")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return _with_zone(value)
