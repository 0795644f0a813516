"""DocumentBuckets: the raw, processed and reports buckets, the audit trail's buckets when given,
and the access-log bucket they log to.

Every bucket gets the same hardening from one helper (public access blocked, owner-enforced
ownership, versioning, default encryption, a TLS-only policy, one lifecycle configuration);
the lifecycle rules come from jobs.contract.LifecycleSpec in S3's API shape and are translated
here, so the local stack and AWS tier and expire objects identically.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document
from components.settings import NONCURRENT_EXPIRATION_DAYS
from jobs.contract import BucketSpec, CorsSpec, LifecycleSpec, ObjectLockSpec, layout
from jobs.contract.schema import TRANSITION_MINIMUM_OBJECT_SIZE

ACCESS_LOGS = "access-logs"
_LIFECYCLE = LifecycleSpec()


@dataclass
class DocumentBucketsArgs:
    specs: Sequence[BucketSpec]
    access_log_bucket_name: str
    kms_key_arn: pulumi.Input[str]
    account_id: pulumi.Input[str]
    # The one role that may overwrite or delete write-once report keys (None: nobody may).
    break_glass_role_arn: str | None = None
    # Purpose → its bucket policy from the bucket's ARN, where it is not the data buckets' one
    # (the audit trail's buckets: components.audit_trail.audit_bucket_policies).
    policies: Mapping[str, Callable[[pulumi.Output[str]], pulumi.Output[str]]] = field(default_factory=dict)
    # The audit-data bucket (S3 Inventory reports, table exports and the nightly reconcile's
    # table states), with the contract's expiry per prefix; None: not created.
    audit_data: BucketSpec | None = None
    access_log_retention_days: int = 365
    # Noncurrent versions of the access-log bucket (the data buckets' own rules, with the delete
    # grace, and the audit-data bucket's expiries come from their specs).
    noncurrent_expiration_days: int = NONCURRENT_EXPIRATION_DAYS
    abort_multipart_days: int = _LIFECYCLE.abort_multipart_days
    protect: bool = True
    tags: dict[str, str] = field(default_factory=dict)


def bucket_arn(bucket_name: str) -> str:
    return f"arn:aws:s3:::{bucket_name}"


def lifecycle_rule_args(rule: Mapping[str, Any]) -> aws.s3.BucketLifecycleConfigurationRuleArgs:
    """One PutBucketLifecycleConfiguration rule (API shape) as pulumi-aws v7 arguments."""
    lc = aws.s3
    flt = rule.get("Filter", {})
    if "And" in flt:
        both = flt["And"]
        filter_args = lc.BucketLifecycleConfigurationRuleFilterArgs(
            and_=lc.BucketLifecycleConfigurationRuleFilterAndArgs(
                prefix=both.get("Prefix"), tags={t["Key"]: t["Value"] for t in both["Tags"]}
            )
        )
    elif "Tag" in flt:
        filter_args = lc.BucketLifecycleConfigurationRuleFilterArgs(
            tag=lc.BucketLifecycleConfigurationRuleFilterTagArgs(key=flt["Tag"]["Key"], value=flt["Tag"]["Value"])
        )
    else:
        # An empty filter applies the rule to every object (or to the prefix when one is set).
        filter_args = lc.BucketLifecycleConfigurationRuleFilterArgs(prefix=flt.get("Prefix"))
    expiration = rule.get("Expiration")
    noncurrent = rule.get("NoncurrentVersionExpiration")
    abort = rule.get("AbortIncompleteMultipartUpload")
    return lc.BucketLifecycleConfigurationRuleArgs(
        id=rule["ID"],
        status=rule["Status"],
        filter=filter_args,
        transitions=[
            lc.BucketLifecycleConfigurationRuleTransitionArgs(days=t["Days"], storage_class=t["StorageClass"])
            for t in rule.get("Transitions", [])
        ]
        or None,
        expiration=lc.BucketLifecycleConfigurationRuleExpirationArgs(
            days=expiration.get("Days"), expired_object_delete_marker=expiration.get("ExpiredObjectDeleteMarker")
        )
        if expiration
        else None,
        noncurrent_version_expiration=lc.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
            noncurrent_days=noncurrent["NoncurrentDays"]
        )
        if noncurrent
        else None,
        abort_incomplete_multipart_upload=lc.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
            days_after_initiation=abort["DaysAfterInitiation"]
        )
        if abort
        else None,
    )


def expiring_rules(rule_id: str, retention_days: int, noncurrent_days: int, abort_days: int) -> list[dict[str, Any]]:
    """A bucket whose every object expires (the access logs), in LifecycleSpec's API shape."""
    return [
        {
            "ID": rule_id,
            "Status": "Enabled",
            "Filter": {},
            "Expiration": {"Days": retention_days},
            "NoncurrentVersionExpiration": {"NoncurrentDays": noncurrent_days},
            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": abort_days},
        }
    ]


class DocumentBuckets(pulumi.ComponentResource):
    bucket_names: dict[str, pulumi.Output[str]]
    bucket_arns: dict[str, pulumi.Output[str]]
    access_log_bucket_name: pulumi.Output[str]

    def __init__(self, name: str, args: DocumentBucketsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:document_buckets:DocumentBuckets", name, None, opts)
        self._name = name
        self._args = args

        self._log_bucket = self._access_log_bucket()
        self.bucket_names = {}
        self.bucket_arns = {}
        for spec in args.specs:
            bucket = self._data_bucket(spec)
            self.bucket_names[spec.purpose] = bucket.bucket
            self.bucket_arns[spec.purpose] = bucket.arn

        if args.audit_data is not None:
            audit = self._audit_data_bucket(args.audit_data)
            self.bucket_names[layout.AUDIT_DATA] = audit.bucket
            self.bucket_arns[layout.AUDIT_DATA] = audit.arn

        self.access_log_bucket_name = self._log_bucket.bucket
        self.register_outputs(
            {
                **{f"{p}_bucket_name": n for p, n in self.bucket_names.items()},
                **{f"{p}_bucket_arn": a for p, a in self.bucket_arns.items()},
                "access_log_bucket_name": self.access_log_bucket_name,
            }
        )

    def _access_log_bucket(self) -> aws.s3.Bucket:
        """The bucket the others log to; its logs expire after the access-log retention."""
        args = self._args
        logged = [*args.specs, *([args.audit_data] if args.audit_data else [])]
        # S3 server access logging delivers only to SSE-S3 buckets, hence AES256 here.
        return self._bucket(
            ACCESS_LOGS,
            args.access_log_bucket_name,
            sse=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                sse_algorithm="AES256"
            ),
            bucket_key=False,
            rules=expiring_rules(
                "expire-access-logs",
                args.access_log_retention_days,
                args.noncurrent_expiration_days,
                args.abort_multipart_days,
            ),
            policy=lambda arn: json_document(
                policies.access_log_bucket_policy,
                log_bucket_arn=arn,
                source_bucket_arns=[bucket_arn(spec.name) for spec in logged],
                account_id=args.account_id,
            ),
        )

    def _data_bucket(self, spec: BucketSpec) -> aws.s3.Bucket:
        """A data bucket from its contract spec, with its CORS rules when it has some."""
        args = self._args
        bucket = self._kms_bucket(
            spec.purpose,
            spec.name,
            rules=spec.lifecycle_rules(),
            policy=args.policies.get(spec.purpose) or _data_bucket_policy(spec, args.break_glass_role_arn),
            object_lock=spec.object_lock,
            lock_retention=spec.retention,
        )
        if spec.cors is not None:
            self._cors(spec.purpose, bucket, spec.cors)
        return bucket

    def _audit_data_bucket(self, spec: BucketSpec) -> aws.s3.Bucket:
        """The audit-data bucket (S3 Inventory reports, table exports, the nightly table states);
        its objects expire after their prefix's days (the spec's expiry).
        """
        args = self._args
        inventoried = [bucket_arn(s.name) for s in args.specs if s.purpose in layout.GLUE_INVENTORY_TABLES]
        return self._kms_bucket(
            layout.AUDIT_DATA,
            spec.name,
            rules=spec.lifecycle_rules(),
            policy=lambda arn: json_document(
                policies.audit_data_bucket_policy,
                audit_bucket_arn=arn,
                inventoried_bucket_arns=inventoried,
                account_id=args.account_id,
            ),
        )

    def _cors(self, purpose: str, bucket: aws.s3.Bucket, cors: CorsSpec) -> None:
        """The bucket's CORS rules from the contract (the local stack applies the same spec): the
        frontend reads result.json straight from S3 with a presigned GET.
        """
        aws.s3.BucketCorsConfiguration(
            f"{self._name}-{purpose}-cors",
            bucket=bucket.id,
            cors_rules=[
                aws.s3.BucketCorsConfigurationCorsRuleArgs(
                    id=rule["ID"],
                    allowed_methods=rule["AllowedMethods"],
                    allowed_origins=rule["AllowedOrigins"],
                    expose_headers=rule["ExposeHeaders"],
                    max_age_seconds=rule["MaxAgeSeconds"],
                )
                for rule in cors.configuration()["CORSRules"]
            ],
            opts=child(self),
        )

    def _kms_bucket(
        self,
        purpose: str,
        bucket_name: str,
        *,
        rules: Sequence[Mapping[str, Any]],
        policy: Callable[[pulumi.Output[str]], pulumi.Output[str]],
        object_lock: bool = False,
        lock_retention: ObjectLockSpec | None = None,
    ) -> aws.s3.Bucket:
        """A bucket encrypted with the stack's key, logging to the access-log bucket."""
        bucket = self._bucket(
            purpose,
            bucket_name,
            sse=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                sse_algorithm="aws:kms", kms_master_key_id=self._args.kms_key_arn
            ),
            # A bucket key cuts KMS requests (and cost) by reusing a data key per bucket.
            bucket_key=True,
            rules=rules,
            policy=policy,
            object_lock=object_lock,
            lock_retention=lock_retention,
        )
        aws.s3.BucketLogging(
            f"{self._name}-{purpose}-logging",
            bucket=bucket.id,
            target_bucket=self._log_bucket.id,
            target_prefix=f"{purpose}/",
            target_object_key_format=aws.s3.BucketLoggingTargetObjectKeyFormatArgs(
                partitioned_prefix=aws.s3.BucketLoggingTargetObjectKeyFormatPartitionedPrefixArgs(
                    partition_date_source="EventTime"
                )
            ),
            opts=child(self),
        )
        return bucket

    def _bucket(
        self,
        purpose: str,
        bucket_name: str,
        *,
        sse: aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs,
        bucket_key: bool,
        rules: Sequence[Mapping[str, Any]],
        policy: Callable[[pulumi.Output[str]], pulumi.Output[str]],
        object_lock: bool = False,
        lock_retention: ObjectLockSpec | None = None,
    ) -> aws.s3.Bucket:
        """One bucket with the hardening every DocuFlow bucket shares (and Object Lock, with the
        default retention `lock_retention` or none, when `object_lock`).
        """
        prefix = f"{self._name}-{purpose}"
        args = self._args
        bucket = aws.s3.Bucket(
            prefix,
            bucket=bucket_name,
            # Switching Object Lock on here replaces an existing bucket: only the reports bucket,
            # locked since it was created, says so. The data buckets, created before legal
            # holds, get it in place from their lock configuration (S3 allows that on a
            # versioned bucket), below.
            object_lock_enabled=True if lock_retention is not None else None,
            tags={**args.tags, "purpose": purpose},
            opts=child(self, protect=args.protect),
        )
        versioning = self._hardening(prefix, bucket, sse=sse, bucket_key=bucket_key, policy=policy)
        if object_lock:
            self._object_lock(prefix, bucket, versioning, lock_retention)
        # The single lifecycle owner of this bucket; noncurrent-version rules need versioning on.
        aws.s3.BucketLifecycleConfiguration(
            f"{prefix}-lifecycle",
            bucket=bucket.id,
            rules=[lifecycle_rule_args(rule) for rule in rules],
            transition_default_minimum_object_size=TRANSITION_MINIMUM_OBJECT_SIZE,
            opts=child(self, depends_on=[versioning]),
        )
        return bucket

    def _hardening(
        self,
        prefix: str,
        bucket: aws.s3.Bucket,
        *,
        sse: aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs,
        bucket_key: bool,
        policy: Callable[[pulumi.Output[str]], pulumi.Output[str]],
    ) -> aws.s3.BucketVersioning:
        """What every bucket shares: public access blocked, owner-enforced ownership, versioning,
        default encryption and its policy. Returns the versioning, which later configurations need.
        """
        public_access = aws.s3.BucketPublicAccessBlock(
            f"{prefix}-public-access",
            bucket=bucket.id,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=child(self),
        )
        aws.s3.BucketOwnershipControls(
            f"{prefix}-ownership",
            bucket=bucket.id,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=child(self),
        )
        versioning = aws.s3.BucketVersioning(
            f"{prefix}-versioning",
            bucket=bucket.id,
            versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
            opts=child(self),
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{prefix}-encryption",
            bucket=bucket.id,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=sse, bucket_key_enabled=bucket_key
                )
            ],
            opts=child(self),
        )
        aws.s3.BucketPolicy(
            f"{prefix}-policy",
            bucket=bucket.id,
            policy=policy(bucket.arn),
            # Putting a policy while the public access block is still being applied can race.
            opts=child(self, depends_on=[public_access]),
        )
        return versioning

    def _object_lock(
        self,
        prefix: str,
        bucket: aws.s3.Bucket,
        versioning: aws.s3.BucketVersioning,
        lock_retention: ObjectLockSpec | None,
    ) -> None:
        """Object Lock on the bucket, with the default retention `lock_retention` or none."""
        aws.s3.BucketObjectLockConfiguration(
            f"{prefix}-object-lock",
            bucket=bucket.id,
            object_lock_enabled="Enabled",
            rule=aws.s3.BucketObjectLockConfigurationRuleArgs(
                default_retention=aws.s3.BucketObjectLockConfigurationRuleDefaultRetentionArgs(
                    mode=lock_retention.mode, days=lock_retention.days
                )
            )
            if lock_retention is not None
            else None,
            opts=child(self, depends_on=[versioning]),
        )


def _data_bucket_policy(
    spec: BucketSpec, break_glass_role_arn: str | None
) -> Callable[[pulumi.Output[str]], pulumi.Output[str]]:
    """A data bucket's policy, built once the bucket's ARN is known."""
    return lambda arn: json_document(
        policies.data_bucket_policy,
        bucket_arn=arn,
        write_once_prefixes=list(spec.write_once_prefixes),
        break_glass_role_arn=break_glass_role_arn,
    )
