"""StackSettings: every value a stack is configured with, validated once before any resource exists.

`__main__.py` is the only reader of the stack config: it hands every key the engine passed the
program to `from_mapping` (so a `docuflow:` key no field reads is refused, naming the key it
resembles), and the components receive typed values. A wrong value fails the whole program with a message naming
the config key (`docuflow:shardCount`), not a pydantic field path.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from components.schedules import MIN_DRAIN_MINUTES, ScheduleError, drain_minutes, window_minutes
from jobs.contract import (
    BucketSpec,
    DocumentType,
    LifecycleSpec,
    ObjectLockSpec,
    QueueSpec,
    RetentionClass,
    RetentionPolicy,
    TableSpec,
    audit_data_spec,
    bucket_specs,
    layout,
    queue_spec,
    table_spec,
)
from jobs.contract.engines import OcrEngine
from jobs.contract.erasure import DataHoldings
from jobs.contract.schema import AUDIT_DATA_DAYS, AUDIT_RETENTION, CORS_ORIGIN, TABLE_STATE_DAYS, audit_bucket_spec

NAMESPACE = "docuflow"
REGION_KEY = "aws:region"

# The only retention periods CloudWatch Logs accepts from one year up.
LOG_RETENTION_DAYS = (365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)
# Fargate CPU units and the memory (MiB) range each allows.
FARGATE_MEMORY = {
    256: (512, 2048),
    512: (1024, 4096),
    1024: (2048, 8192),
    2048: (4096, 16384),
    4096: (8192, 30720),
    8192: (16384, 61440),
    16384: (32768, 122880),
}

_CRON = re.compile(r"^cron\(\S+ \S+ \S+ \S+ \S+ \S+\)$")
_SUBNET = re.compile(r"^subnet-[0-9a-f]{8,17}$")
_SG = re.compile(r"^sg-[0-9a-f]{8,17}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_TOPIC_ARN = re.compile(r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$")
_IMAGE_URI = re.compile(r"^[a-z0-9.-]+(:\d+)?/[a-z0-9._/-]+(:[\w.-]+|@sha256:[0-9a-f]{64})$")
_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")
_LIFECYCLE = LifecycleSpec()
_POLICY = RetentionPolicy()
_RETENTION = ObjectLockSpec()
# Noncurrent versions in the access-log and audit-data buckets (the data buckets use the grace).
NONCURRENT_EXPIRATION_DAYS = 90
# Data residency: a region's jurisdiction is its name's first part (eu-west-1: EU). A stack keeps
# its data in one jurisdiction, its second region included; another jurisdiction is another stack.
RESIDENCIES = {
    "eu": "EU",
    "us": "US",
    "ca": "CA",
    "ap": "APAC",
    "sa": "SA",
    "me": "ME",
    "af": "AF",
    "il": "IL",
    "mx": "MX",
}


def residency_of(region: str) -> str | None:
    """The jurisdiction a region belongs to (GovCloud regions are their own: `US-GOV`)."""
    head = region.split("-")[0]
    if "-gov-" in region:
        return f"{RESIDENCIES.get(head, head.upper())}-GOV"
    return RESIDENCIES.get(head)


class StackSettingsError(ValueError):
    """A stack config value is missing or wrong; the message names the `docuflow:` key."""


class StackSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    stage: str = Field(pattern=r"^[a-z][a-z0-9-]{0,20}$")
    region: str = Field(alias=REGION_KEY, pattern=_REGION.pattern)

    # Storage lifecycle: days from creation. Defaults are the contract's (LifecycleSpec and
    # RetentionPolicy, which the local stack uses too), so a stack without these keys keeps
    # objects and items as long as the jobs assume. The retention policy (days per class, the
    # class of each document type, the delete grace) builds the data buckets' lifecycle rules
    # and reaches every job as DOCUFLOW_RETENTION, so items and objects expire together.
    infrequent_access_after_days: int = Field(default=_LIFECYCLE.infrequent_access_after_days, ge=30)
    glacier_after_days: int = Field(default=_LIFECYCLE.glacier_after_days, ge=1)
    retention_days: int = Field(default=_POLICY.standard_days, ge=1)
    compliance_retention_days: int = Field(default=_POLICY.compliance_days, ge=1)
    retention_class_by_type: dict[DocumentType, RetentionClass] = Field(default_factory=dict)
    delete_grace_days: int = Field(default=_POLICY.grace_days, ge=1, le=3650)
    # Noncurrent versions of the access-log and audit-data buckets (the data buckets' noncurrent
    # versions are the deleted and replaced ones: they live the delete grace).
    noncurrent_expiration_days: int = Field(default=NONCURRENT_EXPIRATION_DAYS, ge=1)
    abort_multipart_days: int = Field(default=_LIFECYCLE.abort_multipart_days, ge=1)
    access_log_retention_days: int = Field(default=365, ge=1)
    bucket_names: dict[str, str] = Field(default_factory=dict)

    # Reports are audit evidence: Object Lock keeps their versions for this long (defaults: the
    # contract's, which the local stack applies too), and the reports bucket's policy refuses
    # overwrites and deletes of report keys to everyone but this break-glass role (if any).
    object_lock_mode: Literal["GOVERNANCE", "COMPLIANCE"] = _RETENTION.mode
    object_lock_days: int = Field(default=_RETENTION.days, ge=1, le=36500)
    break_glass_role_arn: str | None = Field(default=None, pattern=_ROLE_ARN.pattern)
    cors_origins: list[str] = Field(default_factory=list)
    # The review API: a reviewer's claim on a document, and the life of a presigned result.json GET
    # (the frontend fetches it at once; a short life limits what a leaked URL gives away).
    review_lease_seconds: int = Field(default=1800, ge=60, le=24 * 3600)
    result_url_seconds: int = Field(default=300, ge=1, le=7 * 24 * 3600)
    # The audit trail (change log and access trail) is kept this long under Object Lock, then
    # expires: GOVERNANCE in dev (lifted only with s3:BypassGovernanceRetention, which the
    # buckets' policies deny), COMPLIANCE in prod (nobody can, the root user included).
    audit_retention_mode: Literal["GOVERNANCE", "COMPLIANCE"] = AUDIT_RETENTION.mode
    audit_retention_days: int = Field(default=AUDIT_RETENTION.days, ge=1, le=36500)

    # Batch jobs. The task definitions name the image by digest (repository@sha256:…), so what
    # runs is what the stack file says, whatever is later pushed or re-tagged (docs/deploy.md);
    # the tag (or imageUri's) names the release for people. The stack's own repository keeps
    # the newest imageKeepCount images and every image tagged with a release prefix (the
    # calendar versions, 2026.11.29-1: "20"), and deploys only a release-tagged image.
    image_uri: str | None = None
    image_tag: str | None = Field(default=None, pattern=r"^[\w][\w.-]{0,127}$")
    image_digest: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    image_keep_count: int = Field(default=30, ge=1, le=1000)
    image_release_tag_prefixes: list[str] = Field(default_factory=lambda: ["20"], max_length=25)
    ingest_schedule: str = "cron(0 1 * * ? *)"
    reconcile_schedule: str = "cron(0 5 * * ? *)"
    schedule_timezone: str = "UTC"
    # Ingest tasks the nightly schedule starts: they drain the one arrival queue together (SQS
    # spreads the messages). RunTask starts at most 10 tasks per call.
    ingest_tasks: int = Field(default=4, ge=1, le=10)
    schedule_retry_attempts: int = Field(default=2, ge=0, le=185)
    schedule_max_event_age_seconds: int = Field(default=3600, ge=60, le=86400)
    # The nightly reconcile runs with --repair (its own task definition and role, which may put
    # items back conditionally); false: a read-only audit nightly, repairs run by hand.
    nightly_repair: bool = True
    subnet_ids: list[str] = Field(min_length=1, max_length=16)
    security_group_ids: list[str] = Field(min_length=1, max_length=5)
    assign_public_ip: bool = False
    fargate_spot: bool = False
    ingest_cpu: int = 1024
    ingest_memory: int = 2048
    reconcile_cpu: int = 1024
    reconcile_memory: int = 4096
    log_retention_days: int = 365
    # Scans and plain PDFs in the ingest (DOCUFLOW_OCR_ENGINE): "textract" also grants the task
    # role Textract's AnalyzeExpense actions; "local" runs the image's tesseract; "off" fails them.
    ocr_engine: OcrEngine = OcrEngine.TEXTRACT
    # The Textract pages one ingest task may spend a night (DOCUFLOW_TEXTRACT_MAX_PAGES); documents
    # beyond it wait in the queue for the next night, never failed. 0: no cap.
    textract_max_pages_per_night: int = Field(default=0, ge=0)
    # The second opinion (jobs/extract/fallback.py, DOCUFLOW_TEXTRACT_FALLBACK): a text-layer PDF
    # whose local reading would go to review is read by Textract too, its pages from the night's
    # cap. Asked only with ocrEngine textract (it is Textract's); false turns it off.
    textract_fallback: bool = True
    # The nightly reconcile (`reconcile --nightly`) keeps the table it judged and brings it forward
    # each night by DynamoDB's incremental exports, against daily S3 Inventory reports, with either
    # engine: "polars" in one task (the state as Parquet in the audit-data bucket), "athena" as
    # Athena queries (the state an Iceberg table in the audit catalog, which is then built, and
    # the reconcile and repair roles may use it).
    reconcile_engine: Literal["polars", "athena"] = "polars"
    # How long inventory reports and exports stay in the audit-data bucket, and the nightly table
    # states (short: the next night reads them; longer than the nights a chain may catch up).
    audit_data_retention_days: int = Field(default=AUDIT_DATA_DAYS, ge=2, le=365)
    table_state_retention_days: int = Field(default=TABLE_STATE_DAYS, ge=2, le=35)
    # The chain re-anchors with a full export this many days after the last (PITR keeps 35), and
    # when its newest state is older than catch-up days (missed nights beyond are read whole).
    reconcile_reanchor_days: int = Field(default=30, ge=1, le=35)
    reconcile_catch_up_days: int = Field(default=7, ge=1, le=30)
    # With athena: the most one query may scan (Athena cancels it beyond; bills per byte scanned).
    athena_bytes_scanned_cutoff: int = Field(default=1024**4, ge=10 * 1024**2)

    # Recovery. PITR keeps every change for this many days (1-35); it also bounds how long an
    # erased user's data survives in the table's continuous backups. AWS Backup takes a daily and
    # a monthly backup into a KMS-encrypted, locked vault, kept this many days each (the vault
    # lock refuses shorter and longer lifecycles); COMPLIANCE locks become immutable after 3 days.
    pitr_recovery_days: int = Field(default=35, ge=1, le=35)
    backup_daily_schedule: str = "cron(0 3 * * ? *)"
    backup_daily_retention_days: int = Field(default=30, ge=7, le=36500)
    backup_monthly_schedule: str = "cron(0 4 1 * ? *)"
    backup_monthly_retention_days: int = Field(default=365, ge=28, le=36500)
    backup_vault_lock: Literal["GOVERNANCE", "COMPLIANCE"] = "GOVERNANCE"
    # The second region (same jurisdiction): S3 replication of raw, processed and reports, a
    # DynamoDB global table replica, and copies of every backup. None: a single-region stack.
    residency: str | None = None
    replica_region: str | None = Field(default=None, pattern=_REGION.pattern)
    # The restore drill (python -m jobs drill) runs on this schedule: quarterly by default.
    drill_schedule: str = "cron(0 6 1 1,4,7,10 ? *)"

    # Alerts: an existing topic, or one this stack creates (optionally with an email subscriber).
    # An arrival older than arrivalsMaxAgeSeconds alarms (a stalled drain: arrivals wait up to a
    # day by design), and with a second region, a replication rule whose S3 ReplicationLatency
    # passes replicationLatencyAlarmSeconds (Replication Time Control promises 15 minutes).
    arrivals_max_age_seconds: int = Field(default=26 * 3600, ge=3600, le=14 * 86400)
    replication_latency_alarm_seconds: int = Field(default=900, ge=60, le=86400)
    alarm_topic_arn: str | None = Field(default=None, pattern=_TOPIC_ARN.pattern)
    alarm_email: str | None = Field(default=None, pattern=_EMAIL.pattern)

    # Cost: a monthly AWS Budgets cost budget of the resources tagged with this stage, alerting
    # the alarm topic on actual and forecast spend.
    monthly_budget_usd: Decimal = Field(gt=0, max_digits=12, decimal_places=2)
    # Textract's charges attach to no taggable resource, so the stage budget never sees them: a
    # second monthly budget filtered on the Textract service covers them. Unset: the monthly budget's
    # amount (a runaway that alone spends the stack's budget is seen at 80 % of it).
    textract_budget_usd: Decimal | None = Field(default=None, gt=0, max_digits=12, decimal_places=2)

    tags: dict[str, str] = Field(default_factory=dict)

    @field_validator(
        "bucket_names",
        "cors_origins",
        "subnet_ids",
        "security_group_ids",
        "tags",
        "retention_class_by_type",
        "image_release_tag_prefixes",
        mode="before",
    )
    @classmethod
    def _json(cls, value: Any) -> Any:
        # pulumi.Config.get returns structured YAML values as JSON text.
        return json.loads(value) if isinstance(value, str) else value

    @field_validator(
        "ingest_schedule", "reconcile_schedule", "backup_daily_schedule", "backup_monthly_schedule", "drill_schedule"
    )
    @classmethod
    def _cron(cls, value: str) -> str:
        if not _CRON.match(value):
            raise ValueError(f"{value!r} is not an EventBridge Scheduler cron(m h dom mon dow y)")
        return value

    @field_validator("schedule_timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"{value!r} is not an IANA time zone") from exc
        return value

    @field_validator("subnet_ids")
    @classmethod
    def _subnets(cls, value: list[str]) -> list[str]:
        return _each(value, _SUBNET, "subnet id")

    @field_validator("security_group_ids")
    @classmethod
    def _sgs(cls, value: list[str]) -> list[str]:
        return _each(value, _SG, "security group id")

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        return _each(value, CORS_ORIGIN, "https origin")

    @field_validator("image_uri")
    @classmethod
    def _image(cls, value: str | None) -> str | None:
        if value is not None and not _IMAGE_URI.match(value):
            raise ValueError(f"{value!r} is not registry/repository:tag or @sha256:digest")
        return value

    @field_validator("log_retention_days")
    @classmethod
    def _log_retention(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            raise ValueError(f"{value} is not a CloudWatch Logs retention of a year or more {LOG_RETENTION_DAYS}")
        return value

    @field_validator("bucket_names")
    @classmethod
    def _purposes(cls, value: dict[str, str]) -> dict[str, str]:
        # The audit-data bucket keeps its contract name: the jobs find it from the stage.
        unknown = set(value) - {"raw", "processed", "reports", "access-logs"}
        if unknown:
            raise ValueError(f"unknown bucket purpose(s) {sorted(unknown)}")
        return value

    @model_validator(mode="after")
    def _cross_field(self) -> StackSettings:
        for job in ("ingest", "reconcile"):
            cpu, memory = getattr(self, f"{job}_cpu"), getattr(self, f"{job}_memory")
            low, high = FARGATE_MEMORY.get(cpu, (0, -1))
            if not low <= memory <= high:
                raise ValueError(
                    f"{NAMESPACE}:{job}Cpu={cpu} / {NAMESPACE}:{job}Memory={memory} is not a Fargate task size"
                )
        if self.image_uri is None and self.image_tag is None:
            raise ValueError(
                f"{NAMESPACE}:imageTag is required when {NAMESPACE}:imageUri is not set "
                "(the tag pushed to the stack's ECR repository)"
            )
        self._check_image()
        if self.alarm_topic_arn and self.alarm_email:
            raise ValueError(f"set {NAMESPACE}:alarmTopicArn or {NAMESPACE}:alarmEmail, not both")
        self._check_chain()
        self._check_recovery()
        self._check_drain()
        # S3 keeps an object in STANDARD_IA at least 30 days before a later transition.
        if self.glacier_after_days < self.infrequent_access_after_days + 30:
            raise ValueError(
                f"{NAMESPACE}:glacierAfterDays must be at least {NAMESPACE}:infrequentAccessAfterDays + 30"
            )
        return self

    def _check_image(self) -> None:
        if self.image_uri and "@" in self.image_uri and not self.image_uri.endswith(f"@{self.image_digest}"):
            raise ValueError(f"{NAMESPACE}:imageUri names another digest than {NAMESPACE}:imageDigest")
        # The repository's lifecycle policy keeps release-tagged images only: a deployed image
        # must be one, or the policy could expire it under a running stack.
        tag = self.image_tag
        prefixes = self.image_release_tag_prefixes
        if self.image_uri is None and tag is not None and prefixes and not tag.startswith(tuple(prefixes)):
            raise ValueError(
                f"{NAMESPACE}:imageTag {tag!r} is not a release tag ({NAMESPACE}:imageReleaseTagPrefixes {prefixes}): "
                "the repository's lifecycle policy could expire it"
            )

    def _check_recovery(self) -> None:
        if self.backup_monthly_retention_days < self.backup_daily_retention_days:
            raise ValueError(
                f"{NAMESPACE}:backupMonthlyRetentionDays must be at least {NAMESPACE}:backupDailyRetentionDays"
            )
        home = residency_of(self.region)
        if self.residency is not None and self.residency != home:
            raise ValueError(f"{REGION_KEY} {self.region} is not in {NAMESPACE}:residency {self.residency}")
        if self.replica_region is None:
            return
        if self.replica_region == self.region:
            raise ValueError(f"{NAMESPACE}:replicaRegion must differ from {REGION_KEY} ({self.region})")
        if residency_of(self.replica_region) != home:
            raise ValueError(
                f"{NAMESPACE}:replicaRegion {self.replica_region} leaves the stack's residency {home} "
                f"({REGION_KEY} {self.region}): a second jurisdiction is a second stack"
            )

    def _check_chain(self) -> None:
        """The nightly chain's days fit the states' expiry and PITR's window (an incremental
        export must start inside it).
        """
        if self.table_state_retention_days <= self.reconcile_catch_up_days:
            raise ValueError(
                f"{NAMESPACE}:tableStateRetentionDays must be more than {NAMESPACE}:reconcileCatchUpDays "
                "(a state must outlive the nights the chain may bring forward)"
            )
        if self.reconcile_catch_up_days >= self.pitr_recovery_days:
            raise ValueError(
                f"{NAMESPACE}:reconcileCatchUpDays must be less than {NAMESPACE}:pitrRecoveryDays "
                "(an incremental export starts inside the point-in-time recovery window)"
            )

    def _check_drain(self) -> None:
        """The drain's time bound (derived from the two schedules) leaves it a night's work."""
        schedules = (
            f"{NAMESPACE}:ingestSchedule {self.ingest_schedule} and {NAMESPACE}:reconcileSchedule "
            f"{self.reconcile_schedule} ({NAMESPACE}:scheduleTimezone {self.schedule_timezone})"
        )
        try:
            minutes = self.drain_minutes
        except ScheduleError as exc:
            raise ValueError(f"{schedules}: {exc}") from exc
        if minutes < MIN_DRAIN_MINUTES:
            raise ValueError(
                f"{schedules} leave the drain {minutes} minutes before the reconcile starts, on the "
                f"shortest night of the year and less the margin: at least {MIN_DRAIN_MINUTES} are needed"
            )

    # --- derived values the components take -----------------------------------------------
    @property
    def drain_minutes(self) -> int:
        """The minutes a scheduled drain may take so it has stopped before the reconcile starts
        (components.schedules), on every night of the coming year.
        """
        today = datetime.now(UTC).date()
        return drain_minutes(self.ingest_schedule, self.reconcile_schedule, self.schedule_timezone, today)

    def job_windows(self) -> dict[str, int]:
        """Each nightly job's window in seconds, which its duration should stay under: the
        drain's bound, and the reconcile's time until the next drain starts.
        """
        today = datetime.now(UTC).date()
        reconcile = window_minutes(self.reconcile_schedule, self.ingest_schedule, self.schedule_timezone, today)
        return {"ingest": self.drain_minutes * 60, "reconcile": reconcile * 60}

    @property
    def protect(self) -> bool:
        """Only dev may be torn down by `pulumi destroy`; every other stage keeps its data."""
        return self.stage != "dev"

    def retention(self) -> RetentionPolicy:
        return RetentionPolicy(
            standard_days=self.retention_days,
            compliance_days=self.compliance_retention_days,
            by_type=self.retention_class_by_type,
            grace_days=self.delete_grace_days,
        )

    def holdings(self) -> DataHoldings:
        """The copies an erasure cannot reach and how long they live (its receipt's figures)."""
        return DataHoldings(
            point_in_time_recovery_days=self.pitr_recovery_days,
            backup_retention_days=max(self.backup_daily_retention_days, self.backup_monthly_retention_days),
            replica_region=self.replica_region,
            audit_data_retention_days=self.audit_data_retention_days,
            access_log_retention_days=self.access_log_retention_days,
            log_retention_days=self.log_retention_days,
            queue_retention_days=queue_spec(self.stage).retention_seconds // 86400,
            report_lock_days=self.object_lock_days,
            audit_trail_days=self.audit_retention_days,
        )

    def lifecycle(self) -> LifecycleSpec:
        return LifecycleSpec(
            infrequent_access_after_days=self.infrequent_access_after_days,
            glacier_after_days=self.glacier_after_days,
            retention=self.retention(),
            abort_multipart_days=self.abort_multipart_days,
        )

    def table(self) -> TableSpec:
        return table_spec(self.stage)

    def arrivals(self) -> QueueSpec:
        return queue_spec(self.stage)

    def buckets(self) -> list[BucketSpec]:
        """The contract's buckets with this stack's lifecycle, and its default retention where
        the contract has one (the reports; the data buckets carry only legal holds).
        """
        retention = ObjectLockSpec(mode=self.object_lock_mode, days=self.object_lock_days)
        return [
            spec if spec.retention is None else spec.model_copy(update={"retention": retention})
            for spec in bucket_specs(self.stage, self.bucket_names, self.lifecycle(), self.cors_origins)
        ]

    def audit_data(self) -> BucketSpec:
        """The audit-data bucket: inventories, exports and the nightly states (either engine)."""
        return audit_data_spec(self.stage, self.audit_data_retention_days, self.table_state_retention_days)

    def audit_buckets(self) -> list[BucketSpec]:
        """The change log's and the access trail's buckets, under the audit retention."""
        retention = ObjectLockSpec(mode=self.audit_retention_mode, days=self.audit_retention_days)
        return [audit_bucket_spec(self.stage, p, retention) for p in (layout.AUDIT_LOG, layout.ACCESS_TRAIL)]

    def access_log_bucket_name(self) -> str:
        return self.bucket_names.get("access-logs") or layout.bucket_name(self.stage, "access-logs")

    @property
    def erased_data_horizon_days(self) -> int:
        """How long an erased user's data can survive in backups: the longest of the PITR window
        and the backups' retention (what an erasure receipt must quote).
        """
        return max(self.pitr_recovery_days, self.backup_daily_retention_days, self.backup_monthly_retention_days)

    def image_repository(self) -> str | None:
        """The configured registry/repository without its tag or digest (None: the stack's own)."""
        if self.image_uri is None:
            return None
        name = self.image_uri.split("@")[0]
        registry, _, path = name.partition("/")
        return f"{registry}/{path.split(':')[0]}"

    @property
    def second_opinion(self) -> bool:
        """Whether text-layer PDFs bound for review are read by Textract too (textractFallback)."""
        return self.textract_fallback and self.ocr_engine == OcrEngine.TEXTRACT

    @property
    def textract_budget(self) -> Decimal:
        """The monthly amount of the Textract service budget."""
        return self.textract_budget_usd or self.monthly_budget_usd

    def resource_tags(self) -> dict[str, str]:
        return {"app": layout.APP, "stage": self.stage, **self.tags}

    # --- loading ----------------------------------------------------------------------------
    @classmethod
    def keys(cls) -> dict[str, str]:
        """Field name → the config key that sets it (`docuflow:shardCount`, `aws:region`)."""
        return {name: _config_key(field.alias) for name, field in cls.model_fields.items()}

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> StackSettings:
        """Build from fully-qualified config keys, as in a `Pulumi.<stack>.yaml` `config:` block."""
        keys = cls.keys()
        unknown = sorted(k for k in values if k.startswith(f"{NAMESPACE}:") and k not in keys.values())
        if unknown:
            raise StackSettingsError("unknown config key(s): " + "; ".join(_unknown(k, keys.values()) for k in unknown))
        # "" is unset: Pulumi.yaml can declare a key optional only by giving it a default.
        data = {name: values[key] for name, key in keys.items() if values.get(key) not in (None, "")}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            # Errors are located by field name, or by alias when a required value is missing.
            aliases = {cls.model_fields[n].alias or n: k for n, k in keys.items()}
            raise StackSettingsError(_describe(exc, {**keys, **aliases})) from exc


def _unknown(key: str, known: Iterable[str]) -> str:
    """An unknown key, and the known one it most resembles (a typo's likely intent)."""
    close = difflib.get_close_matches(key, list(known), n=1)
    return f"{key} (did you mean {close[0]}?)" if close else key


def _each(values: list[str], pattern: re.Pattern[str], what: str) -> list[str]:
    for value in values:
        if not pattern.match(value):
            raise ValueError(f"{value!r} is not a {what}")
    return values


def _describe(exc: ValidationError, keys: Mapping[str, str]) -> str:
    problems = []
    for error in exc.errors():
        loc = error["loc"]
        key = keys.get(str(loc[0]), str(loc[0])) if loc else "(stack settings)"
        problems.append(f"{key}: {error['msg']}")
    return "invalid stack config: " + "; ".join(problems)


def _config_key(alias: str | None) -> str:
    """A field's config key: its alias when that names a namespace (`aws:region`), else in ours."""
    return alias if alias and ":" in alias else f"{NAMESPACE}:{alias}"
