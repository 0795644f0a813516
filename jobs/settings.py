"""JobSettings: what every job reads from the environment, declared once and validated once (the
botocore Config built from it is jobs.store.clients.botocore_config: this module stays free of the
AWS SDK).

Each setting is one field: its type, bounds, default and description. Its environment variable is
derived from the field (pydantic-settings: DOCUFLOW_ + the field's name in capitals, or the alias it
declares), so the ENV_* names, JOB_ENV_VARS, `env()`/`env_of()` (what the task definitions set)
and `from_env()` (what a job reads) cannot drift apart, and docs/deploy.md's table of job settings
is generated from the same fields (tests/jobs/test_job_settings.py keeps it in step).

Only `from_env` reads an environment, the one it is given (the process's by default): settings
built in code (`JobSettings(stage=…)`) never do, so a test's settings do not depend on the process
it runs in. Two defaults follow from other variables in `from_env` only (`FromEnvironment`); names
left empty follow from the stage (`FromStage`).

The jobs reach AWS only through boto3's standard configuration: endpoints come from
AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_S3 when set (local stack), so no code path differs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings import SettingsError as SourceError
from pydantic_settings.sources.utils import parse_env_vars

from jobs.contract import layout
from jobs.contract.engines import OcrEngine
from jobs.contract.erasure import DataHoldings
from jobs.contract.retention import RetentionPolicy
from jobs.contract.schema import SQS_MAX_VISIBILITY_SECONDS, TABLE_STATE_DAYS, LifecycleSpec
from jobs.errors import SettingsError

ENV_PREFIX = "DOCUFLOW_"
_Rule = TypeVar("_Rule")


@dataclass(frozen=True)
class FromStage:
    """A name that, left empty, is the stage's (jobs.contract.layout): `name(stage)`."""

    name: Callable[[str], str]


@dataclass(frozen=True)
class FromEnvironment:
    """A default that `from_env` derives from other variables of the environment it reads.

    Settings built in code take the field's own default. `says` is how, for the settings table.
    """

    derive: Callable[[Mapping[str, str]], object]
    says: str


def _bucket(purpose: str) -> FromStage:
    return FromStage(lambda stage: layout.bucket_name(stage, purpose))


class JobSettings(BaseSettings):
    """Every job's settings; see the module docstring for where each value comes from."""

    model_config = SettingsConfigDict(
        frozen=True,
        extra="forbid",
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,  # an empty variable is unset, as a stack's optional setting is
        validate_by_name=True,  # code names fields; the environment names the aliases
        validate_by_alias=True,
    )

    stage: str = Field(
        default="dev",
        pattern=r"^[a-z][a-z0-9-]{0,20}$",
        description="The stack's stage: every name below left empty is derived from it.",
    )
    table_name: Annotated[str, FromStage(layout.table_name)] = Field(default="", description="The documents table.")
    index_name: Annotated[str, FromStage(layout.status_index_name)] = Field(
        default="", validation_alias="DOCUFLOW_STATUS_INDEX_NAME", description="The table's status index."
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
    # Enough threads to hide request latency; fewer or more measured no better (README, Performance).
    io_threads: int = Field(default=32, ge=1, le=256, description="Threads for S3 and DynamoDB requests.")
    extract_workers: int = Field(
        default=0, ge=0, le=64, description="Processes that extract documents; 0: one per core."
    )
    retry_mode: Literal["standard", "adaptive", "legacy"] = Field(
        default="standard", description="botocore's retry mode for every AWS client."
    )
    retry_attempts: int = Field(
        default=8, ge=1, le=20, description="botocore's total attempts per AWS request (first one included)."
    )
    confidence_threshold: float = Field(
        default=80.0, ge=0, le=100, description="A required field read with less confidence (%) goes to review."
    )
    # Built without an environment, the settings take the engine that never costs money.
    ocr_engine: Annotated[
        OcrEngine,
        FromEnvironment(
            lambda env: OcrEngine.LOCAL if env.get("AWS_ENDPOINT_URL_S3") else OcrEngine.TEXTRACT,
            "`local` when AWS_ENDPOINT_URL_S3 is set, else `textract`",
        ),
    ] = Field(
        default=OcrEngine.LOCAL,
        description="Who reads scans and plain PDFs: Amazon Textract, the embedded tesseract, or nobody "
        "(`off`: they go to NEEDS_OCR).",
    )
    textract_tps: float = Field(
        default=1.0, gt=0, le=50, description="Textract calls per second per worker, below the account's quota."
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
    # Set only by the schedule (EventBridge Scheduler's <aws.scheduler.scheduled-time>): a task started
    # late by the scheduler still stops draining in time for the reconcile, and a run without it is manual.
    scheduled_time: datetime | None = Field(
        default=None,
        description="When the schedule meant this run to start (with its zone); the drain's bound counts from "
        "it. Set only by the schedule: unset, the run is manual and its bound counts from its start.",
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
    # One stack setting turns Athena on.
    reconcile_engine: str = Field(
        default="polars",
        pattern=r"^(polars|duckdb|athena)$",
        description="The engine the reconcile runs on: `polars`, `duckdb` or `athena`.",
    )
    table_arn: str = Field(
        default="", description="The table's ARN: needed only to start a table export (ExportTableToPointInTime)."
    )
    report_signing_key: str = Field(
        default="",
        description="The KMS key (its ARN) that signs reconcile reports; unset: reports are written unsigned. "
        "`reports verify` accepts only signatures by this key, and refuses an alias (it can be moved).",
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
    review_lease_seconds: int = Field(
        default=1800, ge=60, le=24 * 3600, description="How long a reviewer's claim on a document in review lasts."
    )
    result_url_seconds: int = Field(
        default=300, ge=1, le=7 * 24 * 3600, description="How long a presigned result.json GET lives."
    )
    # The change log (docs/audit.md): components/audit_trail.py declares it.
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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Built in code, the settings are what the code gives: only from_env reads an environment.
        return (init_settings,)

    @field_validator("audit_log_since", "scheduled_time")
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
    def _names_from_stage(self) -> JobSettings:
        for name, rule in _rules(FromStage):
            if not getattr(self, name):
                object.__setattr__(self, name, rule.name(self.stage))
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
                f"use {ENV_OCR_ENGINE}=local (or off) on the embedded stack"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> JobSettings:
        """The settings in `environ` (the process's by default); unset and empty variables take defaults.

        A bad value is a SettingsError naming its variable, the text it held and what is wrong.
        """
        env = os.environ if environ is None else environ
        try:
            found = _Environment(cls, env)()
        except SourceError as exc:  # pydantic-settings' own reading (no field decodes JSON there)
            raise SettingsError(f"invalid job settings: {exc}") from exc
        values = {_field_of(key): value for key, value in found.items()}
        for name, rule in _rules(FromEnvironment):
            values.setdefault(name, rule.derive(env))
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(_problem(error, values) for error in exc.errors())
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

    def env_of(self, *fields: str) -> dict[str, str]:
        """These settings as the environment `from_env` reads them back: {variable: text}, in order.

        An unset optional setting is "" (which from_env reads as unset).
        """
        return {env_name(name): env_text(getattr(self, name)) for name in fields}

    def env(self) -> dict[str, str]:
        """The settings every job reads, as environment variables (JOB_ENV_VARS, in order)."""
        return self.env_of(*JOB_SETTINGS)


class _Environment(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of os.environ, reading
    exactly the declared variables: pydantic-settings alone would also take `docuflow_stage` (names
    match case-insensitively, the last spelling winning) and a field's prefixed name beside its
    alias (`DOCUFLOW_SHARD_INDEX` for SHARD_INDEX), none of which a task definition sets.
    """

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        declared = {env_name(field) for field in settings_cls.model_fields}
        self._environ = {name: value for name, value in environ.items() if name in declared}
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


def env_name(field: str) -> str:
    """The environment variable of a setting: its alias, else DOCUFLOW_ and the field's name in capitals."""
    if field not in JobSettings.model_fields:
        raise KeyError(f"no job setting {field!r}")
    alias = JobSettings.model_fields[field].validation_alias
    return alias if isinstance(alias, str) else f"{ENV_PREFIX}{field.upper()}"


def env_text(value: object) -> str:
    """A setting's value as its variable holds it (from_env reads it back to the same value)."""
    if value is None:
        return ""
    if isinstance(value, BaseModel):
        return value.model_dump_json(by_alias=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _field_of(key: str) -> str:
    """The field a key from the environment source stands for (aliased fields come by alias)."""
    aliases = {env_name(name): name for name in JobSettings.model_fields}
    return aliases.get(key, key)


def _rules(kind: type[_Rule]) -> list[tuple[str, _Rule]]:
    """The fields declaring a rule of this kind (FromStage, FromEnvironment), with the rule."""
    return [
        (name, rule) for name, f in JobSettings.model_fields.items() for rule in f.metadata if isinstance(rule, kind)
    ]


def _problem(error: ErrorDetails, values: Mapping[str, Any]) -> str:
    """One validation error as the variable, the text it held and what is wrong with it."""
    if not error["loc"]:
        return error["msg"]
    field, *within = (str(part) for part in error["loc"])
    if field not in JobSettings.model_fields:
        return f"{field}: {error['msg']}"
    given = values.get(field)
    shown = f"={given!r}" if isinstance(given, str) and len(given) <= 80 else ""
    path = f" (at {'.'.join(within)})" if within else ""
    return f"{env_name(field)}{shown}{path}: {error['msg']}"


# The settings the ECS task definitions pass and `local up` exports, in one list.
JOB_SETTINGS = (
    "stage",
    "table_name",
    "raw_bucket",
    "processed_bucket",
    "reports_bucket",
    "arrivals_queue_url",
    "review_lease_seconds",
    "result_url_seconds",
    "retention",
)
JOB_ENV_VARS = tuple(env_name(name) for name in JOB_SETTINGS)

# The variables code names directly (the task definitions, the local stack, checks); every other
# setting is reached through its field, and env_name(field) gives any variable.
ENV_STAGE = env_name("stage")
ENV_TABLE = env_name("table_name")
ENV_ARRIVALS_QUEUE_URL = env_name("arrivals_queue_url")
ENV_HOLDINGS = env_name("holdings")
ENV_WORKERS = env_name("extract_workers")
ENV_OCR_ENGINE = env_name("ocr_engine")
ENV_TEXTRACT_MAX_PAGES = env_name("textract_max_pages")
ENV_TABLE_ARN = env_name("table_arn")
ENV_REPORT_SIGNING_KEY = env_name("report_signing_key")
ENV_IMAGE_DIGEST = env_name("image_digest")
ENV_REPORTS_TOPIC_ARN = env_name("reports_topic_arn")
ENV_REANCHOR_DAYS = env_name("reconcile_reanchor_days")
ENV_CATCH_UP_DAYS = env_name("reconcile_catch_up_days")
ENV_TABLE_STATE_DAYS = env_name("table_state_days")
ENV_AUDIT_BUCKET = env_name("audit_bucket")
