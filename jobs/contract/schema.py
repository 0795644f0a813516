"""Table and bucket definitions shared by the Pulumi components and the local bootstrap.

Pure data: the Pulumi components translate it into pulumi-aws arguments, the local stack into
boto3 calls, so the emulated table and buckets are the ones AWS gets.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from jobs.contract import layout
from jobs.contract.retention import RetentionClass, RetentionPolicy


class TableSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    hash_key: str = layout.PK_ATTR
    range_key: str = layout.SK_ATTR
    index_name: str
    index_hash_key: str = layout.GSI1_PK_ATTR
    index_range_key: str = layout.GSI1_SK_ATTR
    index_projection: Literal["ALL", "KEYS_ONLY", "INCLUDE"] = "ALL"
    stream_view_type: Literal["NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"] = "NEW_AND_OLD_IMAGES"
    ttl_attribute: str = layout.TTL_ATTR

    @property
    def string_attributes(self) -> tuple[str, ...]:
        return (self.hash_key, self.range_key, self.index_hash_key, self.index_range_key)


def table_spec(stage: str) -> TableSpec:
    return TableSpec(name=layout.table_name(stage), index_name=layout.status_index_name(stage))


# Storage classes a GET reads at once. GLACIER and DEEP_ARCHIVE answer 403 InvalidObjectState
# until a RestoreObject completes (hours), which no reader of ours waits for: the frontend's
# presigned result.json, the jobs reading results and reports, a reprocess reading raw/.
READABLE_STORAGE_CLASSES = ("STANDARD", "STANDARD_IA", "INTELLIGENT_TIERING", "GLACIER_IR")
# S3 moves no object under 128 KB to another class (its default since September 2024, declared
# here so it is a decision): STANDARD_IA and Glacier IR bill at least 128 KB an object, so a
# smaller one would cost more there than in STANDARD (docs/capacity.md, "Storage tiers").
TRANSITION_MINIMUM_OBJECT_SIZE: Literal["all_storage_classes_128K"] = "all_storage_classes_128K"


class LifecycleSpec(BaseModel):
    """Storage tiers and the end of every version, as S3 lifecycle rules (days from creation, or
    from becoming noncurrent), built from the retention policy the items' TTL uses too.

    Tiers: STANDARD, STANDARD_IA after `infrequent_access_after_days`, Glacier Instant Retrieval
    after `glacier_after_days`: every tier stays GET-readable (READABLE_STORAGE_CLASSES), so the
    same rules serve raw, processed and reports (docs/lifecycle.md, "Storage tiers").
    """

    model_config = ConfigDict(frozen=True)

    infrequent_access_after_days: int = Field(default=30, ge=30)
    glacier_after_days: int = Field(default=365, ge=1)
    archive_storage_class: Literal["GLACIER_IR"] = "GLACIER_IR"
    retention: RetentionPolicy = RetentionPolicy()
    abort_multipart_days: int = Field(default=7, ge=1)

    def rules(self, prefix: str = "") -> list[dict[str, Any]]:
        """S3 lifecycle rules in the API's own shape (PutBucketLifecycleConfiguration).

        - Retention: a current version tagged `retention=<class>` expires that class's days after
          its creation (S3 puts a delete marker on it). S3 applies the earliest expiration when
          rules overlap and cannot exclude a tag, so each class has its own tag filter; an
          untagged object (not yet finished) is tiered but never expired.
        - Grace: a noncurrent version (hidden by a user's delete, by retention's delete marker,
          or replaced by a newer upload or result) is deleted for good `grace_days` after it
          became noncurrent, and a delete marker left with no versions is removed. A restore
          within the grace finds every version still there; after it nothing is left.
        - Object Lock: lifecycle never deletes a version under a legal hold (it may still put a
          delete marker over it); the version stays until the hold is released.
        Incomplete multipart uploads are aborted bucket-wide, not only under `prefix`: parts
        uploaded anywhere in the bucket are billed until aborted.
        """
        base = {"Prefix": prefix} if prefix else {}

        def tagged(value: RetentionClass) -> dict[str, Any]:
            tag = {"Key": layout.RETENTION_TAG, "Value": value.value}
            return {"And": {**base, "Tags": [tag]}} if prefix else {"Tag": tag}

        return [
            {
                "ID": "tiering",
                "Status": "Enabled",
                "Filter": base,
                "Transitions": [
                    {"Days": self.infrequent_access_after_days, "StorageClass": "STANDARD_IA"},
                    {"Days": self.glacier_after_days, "StorageClass": self.archive_storage_class},
                ],
            },
            {
                # ExpiredObjectDeleteMarker may not share a rule with a tag filter or with Days.
                "ID": GRACE_RULE,
                "Status": "Enabled",
                "Filter": base,
                "NoncurrentVersionExpiration": {"NoncurrentDays": self.retention.grace_days},
                "Expiration": {"ExpiredObjectDeleteMarker": True},
            },
            *(
                {
                    "ID": f"expire-{retention.value}",
                    "Status": "Enabled",
                    "Filter": tagged(retention),
                    "Expiration": {"Days": self.retention.days(retention)},
                }
                for retention in RetentionClass
            ),
            {
                "ID": ABORT_MULTIPART_RULE,
                "Status": "Enabled",
                "Filter": {},
                "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": self.abort_multipart_days},
            },
        ]


GRACE_RULE = "grace-period"
ABORT_MULTIPART_RULE = "abort-incomplete-multipart-uploads"
EXPIRE_LOG_RULE = "expire-after-retention"


# SQS hides a received message for at most 12 hours (VisibilityTimeout, ChangeMessageVisibility).
SQS_MAX_VISIBILITY_SECONDS = 12 * 3600


class QueueSpec(BaseModel):
    """The arrival queue: S3 ObjectCreated notifications for raw/ that the nightly ingest drains.

    The visibility timeout outlasts a document's lease (a message comes back only after its claim
    could have been taken over) and the drain renews it for what it holds; retention outlives
    missed nights; a message received `max_receive_count` times without being deleted moves to
    the dead-letter queue, which alarms (`ingest redrive` moves it back).

    The redrive threshold, 10. A drain task receives a message once (jobs/ingest/ledger.py); a
    receive that does not end in a delete comes from a task that stopped before the message's
    document was settled (SIGTERM, a Spot interruption, --max-docs or --max-minutes, a crash:
    one receive each), a dry run (one), or a document another claim held (one per deferral,
    each one lease long). SQS moves a message when a receive would be its 11th, so a valid
    message can go through 9 receives that do not settle it and still be worked by the 10th:
    for instance a dry run, five interrupted nights and three deferrals. A body no run can read
    is received once per task and night and reaches the dead-letter queue on the 11th night
    with one ingest task (sooner with more), inside the 14-day retention, where a person can
    read it. (At 5, five interrupted runs dead-lettered messages nobody had worked on.)
    """

    model_config = ConfigDict(frozen=True)

    name: str
    dead_letter_name: str
    events: tuple[str, ...] = ("s3:ObjectCreated:*",)
    filter_prefix: str = layout.RAW_PREFIX
    visibility_timeout_seconds: int = Field(default=30 * 60, ge=60, le=SQS_MAX_VISIBILITY_SECONDS)
    retention_seconds: int = Field(default=14 * 24 * 3600, ge=4 * 24 * 3600, le=14 * 24 * 3600)
    receive_wait_seconds: int = Field(default=20, ge=0, le=20)
    max_receive_count: int = Field(default=10, ge=1, le=1000)

    def redrive_policy(self, dead_letter_arn: str) -> str:
        return json.dumps({"deadLetterTargetArn": dead_letter_arn, "maxReceiveCount": self.max_receive_count})


def queue_spec(stage: str) -> QueueSpec:
    return QueueSpec(
        name=layout.arrivals_queue_name(stage), dead_letter_name=layout.arrivals_dead_letter_queue_name(stage)
    )


class ObjectLockSpec(BaseModel):
    """Default retention of new object versions in an Object Lock bucket (the audit reports).

    The stack may lengthen it or switch to COMPLIANCE (`docuflow:objectLockMode/Days`); the local
    stack applies these defaults, so a local run meets the same refusals as one on AWS.
    """

    model_config = ConfigDict(frozen=True)

    mode: Literal["GOVERNANCE", "COMPLIANCE"] = "GOVERNANCE"
    days: int = Field(default=365, ge=1, le=36500)

    def configuration(self) -> dict[str, Any]:
        """PutObjectLockConfiguration's ObjectLockConfiguration, in the API's own shape."""
        return {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": self.mode, "Days": self.days}}}


class ExpirySpec(BaseModel):
    """Lifecycle of a bucket of generated data (the audit-data bucket): each prefix expires after
    its own days; anything else (the Iceberg table's files, which Iceberg itself removes) is never
    expired by lifecycle. Noncurrent versions go soon, incomplete uploads are aborted bucket-wide.
    """

    model_config = ConfigDict(frozen=True)

    prefix_days: dict[str, int]
    noncurrent_days: int = Field(default=1, ge=1)
    abort_multipart_days: int = Field(default=7, ge=1)

    def rules(self) -> list[dict[str, Any]]:
        """S3 lifecycle rules in the API's own shape (PutBucketLifecycleConfiguration)."""
        expiries = [
            {
                "ID": f"expire-{prefix.strip('/').replace('/', '-')}",
                "Status": "Enabled",
                "Filter": {"Prefix": prefix},
                "Expiration": {"Days": days},
            }
            for prefix, days in self.prefix_days.items()
        ]
        return [
            *expiries,
            {
                "ID": ABORT_MULTIPART_RULE,
                "Status": "Enabled",
                "Filter": {},
                "NoncurrentVersionExpiration": {"NoncurrentDays": self.noncurrent_days},
                "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": self.abort_multipart_days},
            },
        ]


# An origin a browser may read results from: https anywhere, plain http only on localhost (a
# developer's frontend against the local stack).
CORS_ORIGIN = re.compile(r"^(https://[a-z0-9.-]+(:\d+)?|http://localhost(:\d+)?)$")


class CorsSpec(BaseModel):
    """Who may read the processed bucket's objects from a browser: the frontend fetches a
    result.json with a presigned GET (jobs.documents.url), from the stack's own origins only, and
    only reads. A simple GET sends no custom header, so no header is allowed beyond the safelisted.
    """

    model_config = ConfigDict(frozen=True)

    allowed_origins: tuple[str, ...] = Field(min_length=1)
    allowed_methods: tuple[Literal["GET"], ...] = ("GET",)
    expose_headers: tuple[str, ...] = ("ETag", "Content-Length")
    max_age_seconds: int = Field(default=3600, ge=0, le=86400)
    rule_id: str = "frontend-get-results"

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for origin in value:
            if not CORS_ORIGIN.match(origin):
                raise ValueError(f"{origin!r} is not an https origin (or http://localhost)")
        return value

    def configuration(self) -> dict[str, Any]:
        """PutBucketCors's CORSConfiguration, in the API's own shape."""
        return {
            "CORSRules": [
                {
                    "ID": self.rule_id,
                    "AllowedMethods": list(self.allowed_methods),
                    "AllowedOrigins": list(self.allowed_origins),
                    "ExposeHeaders": list(self.expose_headers),
                    "MaxAgeSeconds": self.max_age_seconds,
                }
            ]
        }


class BucketSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    purpose: str
    name: str
    prefix: str
    object_lock: bool = False
    lifecycle: LifecycleSpec = LifecycleSpec()
    # A bucket of generated data: these expiries instead of the tiering and retention above.
    expiry: ExpirySpec | None = None
    # With object_lock: the default retention of every new object version, or None for none
    # (the data buckets: Object Lock there only carries legal holds, placed version by version).
    retention: ObjectLockSpec | None = None
    # Keys under these prefixes are written once and never overwritten or deleted (the bucket
    # policy on AWS enforces it; the jobs write them with If-None-Match).
    write_once_prefixes: tuple[str, ...] = ()
    # Browsers may read objects of this bucket from these origins (None: from none).
    cors: CorsSpec | None = None
    # A log bucket: every object expires this many days after it was written (its Object Lock
    # retention), instead of the documents' tag-chosen retention.
    expire_after_days: int | None = Field(default=None, ge=1)

    def lifecycle_rules(self) -> list[dict[str, Any]]:
        """The bucket's lifecycle rules in the API's shape (what bootstrap and Pulumi apply)."""
        if self.expiry is not None:
            return self.expiry.rules()
        if self.expire_after_days is None:
            return self.lifecycle.rules(self.prefix)
        tiering, grace, *_, abort = self.lifecycle.rules()
        # Athena reads STANDARD_IA but not GLACIER: a log that is queried stays readable.
        tiering = {**tiering, "Transitions": tiering["Transitions"][:1]}
        return [
            tiering,
            grace,  # noncurrent versions (once their lock ends) and lone delete markers go too
            {"ID": EXPIRE_LOG_RULE, "Status": "Enabled", "Filter": {}, "Expiration": {"Days": self.expire_after_days}},
            abort,
        ]


# Days the audit-data bucket keeps what AWS generates daily (inventories, exports) and the
# nightly reconcile's table states: longer than the nights a chain may miss and still be brought
# forward (`reconcile_catch_up_days`), and by as much again as a state keeps an earlier state's
# data files rather than write their rows again (jobs/reconcile/inputs/table_state.py: 14 days
# less 7 of catch-up less a day of margin leaves files kept up to 6 days).
AUDIT_DATA_DAYS = 14
TABLE_STATE_DAYS = 14


def audit_data_spec(
    stage: str, retention_days: int = AUDIT_DATA_DAYS, table_state_days: int = TABLE_STATE_DAYS
) -> BucketSpec:
    """The audit-data bucket: S3 Inventory reports, table exports, the nightly table states and
    the Iceberg table the Athena engine keeps, each prefix with its own expiry.
    """
    return BucketSpec(
        purpose=layout.AUDIT_DATA,
        name=layout.bucket_name(stage, layout.AUDIT_DATA),
        prefix="",
        expiry=ExpirySpec(
            prefix_days={
                layout.INVENTORY_PREFIX: retention_days,
                layout.DYNAMODB_EXPORTS_PREFIX: retention_days,
                layout.TABLE_STATE_PREFIX: table_state_days,
            }
        ),
    )


# The audit trail is kept two years (`001_…`: "Audit Logging … retention: 2 years"); dev stacks
# may lift GOVERNANCE with s3:BypassGovernanceRetention, prod's COMPLIANCE nobody can.
AUDIT_RETENTION = ObjectLockSpec(mode="GOVERNANCE", days=2 * 365)


def audit_bucket_spec(stage: str, purpose: str, retention: ObjectLockSpec = AUDIT_RETENTION) -> BucketSpec:
    """An audit-trail bucket (layout.AUDIT_LOG or layout.ACCESS_TRAIL): Object Lock with the audit
    retention on every object, which then expires.
    """
    return BucketSpec(
        purpose=purpose,
        name=layout.bucket_name(stage, purpose),
        prefix="",
        object_lock=True,
        retention=retention,
        expire_after_days=retention.days,
    )


def bucket_specs(
    stage: str,
    names: dict[str, str] | None = None,
    lifecycle: LifecycleSpec | None = None,
    cors_origins: tuple[str, ...] | list[str] = (),
) -> list[BucketSpec]:
    """The three data buckets; `names` overrides the default name per purpose, `lifecycle` the
    contract's default rules (the stack's and the local stack's retention policy); `cors_origins`,
    the stack's frontend origins, may read result.json from the processed bucket.

    Raw and processed have Object Lock on, without a default retention: a legal hold
    (`documents hold`) is set on each version of a held document, and nothing else is locked.
    """
    names = names or {}
    lifecycle = lifecycle or LifecycleSpec()
    cors = CorsSpec(allowed_origins=tuple(cors_origins)) if cors_origins else None

    def name(purpose: str) -> str:
        return names.get(purpose) or layout.bucket_name(stage, purpose)

    return [
        BucketSpec(purpose="raw", name=name("raw"), prefix=layout.RAW_PREFIX, object_lock=True, lifecycle=lifecycle),
        BucketSpec(
            purpose="processed",
            name=name("processed"),
            prefix=layout.PROCESSED_PREFIX,
            object_lock=True,
            lifecycle=lifecycle,
            cors=cors,
        ),
        BucketSpec(
            purpose="reports",
            name=name("reports"),
            prefix="",
            object_lock=True,
            lifecycle=lifecycle,
            retention=ObjectLockSpec(),
            write_once_prefixes=layout.WRITE_ONCE_REPORT_PREFIXES,
        ),
    ]
