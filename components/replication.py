"""SecondRegion: the stack's second region, a copy of its data that a lost region leaves behind.

A second `aws.Provider` manages the region; under it, the same components as at home build the
replica key (`DataKey`) and the replica buckets (`DocumentBuckets`: the same hardening, lifecycle,
write-once report policy and Object Lock defaults as their sources, under names that carry the
region, since bucket names are global). S3 replicates the raw and processed prefixes and the reports bucket into
them: delete markers too (a deletion reaches the replica), each version's Object Lock retention
and tags (the lifecycle's retention expiry keys on the tag), SSE-KMS objects re-encrypted with the
replica key, and Replication Time Control (99.99 % of objects within 15 minutes, with the metrics
and missed-threshold events that prove it). The table's replica in this region is declared on the
table itself (`DocumentStore`, a global table replica encrypted with this region's key); the
backup copies live in the second region's vault (`TableBackups`).

Writes stay in the home region (docs/recovery.md: claims and fenced writes rely on conditional
writes in one region); the second region is read-only until a failover promotes it.

A replica that falls behind is heard of: for each replicated bucket, an alarm in the home region
(where S3 publishes a rule's Replication Time Control metrics, AWS/S3 `ReplicationLatency` by
SourceBucket, DestinationBucket and RuleId) on the alert topic when the latency stays over the
stack's threshold for three 5-minute periods; no data (nothing written) is no alarm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components import policies, recovery_policies
from components._pulumi import child, json_document
from components.document_buckets import DocumentBuckets, DocumentBucketsArgs, bucket_arn
from components.encryption import DataKey, DataKeyArgs
from jobs.contract import BucketSpec, layout

# Replication Time Control and its metrics take one value: 15 minutes.
RTC_MINUTES = 15
LATENCY_METRIC = "ReplicationLatency"
LATENCY_PERIOD_SECONDS = 300
LATENCY_PERIODS = 3


@dataclass
class SecondRegionArgs:
    stage: str
    region: str
    replica_region: str
    account_id: pulumi.Input[str]
    source_key_arn: pulumi.Input[str]
    # The data buckets to replicate (raw, processed, reports), as the home stack declares them.
    source_specs: Sequence[BucketSpec]
    # The home buckets (DocumentBuckets): replication needs their versioning in place.
    source_buckets: pulumi.Resource
    break_glass_role_arn: str | None = None
    access_log_retention_days: int = 365
    noncurrent_expiration_days: int = 90
    abort_multipart_days: int = 7
    # The alert topic (None: no alarm) and the latency, in seconds, a rule's replication may reach.
    alarm_topic_arn: pulumi.Input[str] | None = None
    latency_alarm_seconds: int = RTC_MINUTES * 60
    protect: bool = True
    tags: dict[str, str] = field(default_factory=dict)


def replica_specs(specs: Sequence[BucketSpec], stage: str, region: str) -> list[BucketSpec]:
    """The replica of each bucket: the same spec (lifecycle, Object Lock, write-once prefixes, CORS),
    its own name.
    """
    return [s.model_copy(update={"name": layout.replica_bucket_name(stage, s.purpose, region)}) for s in specs]


class SecondRegion(pulumi.ComponentResource):
    provider: aws.Provider
    key_arn: pulumi.Output[str]
    bucket_names: dict[str, pulumi.Output[str]]
    bucket_arns: dict[str, pulumi.Output[str]]
    role_arn: pulumi.Output[str]

    def __init__(self, name: str, args: SecondRegionArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:replication:SecondRegion", name, None, opts)
        if args.replica_region == args.region:
            raise ValueError("the second region must differ from the stack's region")
        self._name = name
        self._args = args
        self.provider = aws.Provider(f"{name}-provider", region=args.replica_region, opts=child(self))
        there = child(self, provider=self.provider)
        key = DataKey(
            f"{name}-key",
            DataKeyArgs(
                account_id=args.account_id,
                region=args.replica_region,
                alias=f"{layout.stage_prefix(args.stage)}-data",
                protect=args.protect,
                tags=args.tags,
            ),
            opts=there,
        )
        specs = replica_specs(args.source_specs, args.stage, args.replica_region)
        replicas = DocumentBuckets(
            f"{name}-replica",
            DocumentBucketsArgs(
                specs=specs,
                access_log_bucket_name=layout.replica_bucket_name(args.stage, "access-logs", args.replica_region),
                kms_key_arn=key.key_arn,
                account_id=args.account_id,
                break_glass_role_arn=args.break_glass_role_arn,
                access_log_retention_days=args.access_log_retention_days,
                noncurrent_expiration_days=args.noncurrent_expiration_days,
                abort_multipart_days=args.abort_multipart_days,
                protect=args.protect,
                tags=args.tags,
            ),
            opts=there,
        )
        role, role_policy = self._role(specs, key.key_arn)
        for source, replica in zip(args.source_specs, specs, strict=True):
            aws.s3.BucketReplicationConfig(
                f"{name}-{source.purpose}",
                bucket=source.name,
                role=role.arn,
                rules=[replication_rule(source, bucket_arn(replica.name), key.key_arn)],
                opts=child(self, depends_on=[args.source_buckets, replicas, role_policy]),
            )
            if args.alarm_topic_arn is not None:
                self._latency_alarm(source, replica, args.alarm_topic_arn)
        self.key_arn = key.key_arn
        self.bucket_names = dict(replicas.bucket_names)
        self.bucket_arns = dict(replicas.bucket_arns)
        self.role_arn = role.arn
        self.register_outputs(
            {
                "key_arn": self.key_arn,
                **{f"{p}_replica_bucket_name": n for p, n in self.bucket_names.items()},
                "role_arn": self.role_arn,
            }
        )

    def _latency_alarm(self, source: BucketSpec, replica: BucketSpec, topic_arn: pulumi.Input[str]) -> None:
        """The rule's ReplicationLatency over the threshold: the replica fell behind."""
        args = self._args
        aws.cloudwatch.MetricAlarm(
            f"{self._name}-{source.purpose}-latency",
            name=f"{layout.stage_prefix(args.stage)}-replication-latency-{source.purpose}",
            alarm_description=(
                f"DocuFlow {args.stage}: the {source.purpose} bucket's replica in {args.replica_region} is more than "
                f"{args.latency_alarm_seconds} s behind. Runbook: docs/operations.md#replication-latency"
            ),
            namespace="AWS/S3",
            metric_name=LATENCY_METRIC,
            dimensions={
                "SourceBucket": source.name,
                "DestinationBucket": replica.name,
                "RuleId": rule_id(source),
            },
            statistic="Maximum",
            period=LATENCY_PERIOD_SECONDS,
            evaluation_periods=LATENCY_PERIODS,
            threshold=args.latency_alarm_seconds,
            comparison_operator="GreaterThanThreshold",
            treat_missing_data="notBreaching",
            alarm_actions=[topic_arn],
            ok_actions=[topic_arn],
            tags=args.tags,
            opts=child(self),
        )

    def _role(
        self, specs: Sequence[BucketSpec], replica_key_arn: pulumi.Output[str]
    ) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
        args, name = self._args, self._name
        role = aws.iam.Role(
            f"{name}-replication-role",
            assume_role_policy=json_document(
                policies.assume_role_policy, service="s3.amazonaws.com", account_id=args.account_id
            ),
            tags=args.tags,
            opts=child(self),
        )
        policy = aws.iam.RolePolicy(
            f"{name}-replication-policy",
            role=role.id,
            policy=json_document(
                recovery_policies.replication_role_policy,
                pairs=[
                    (bucket_arn(source.name), bucket_arn(replica.name))
                    for source, replica in zip(args.source_specs, specs, strict=True)
                ],
                source_key_arn=args.source_key_arn,
                replica_key_arn=replica_key_arn,
                source_region=args.region,
                replica_region=args.replica_region,
            ),
            opts=child(self),
        )
        return role, policy


def rule_id(source: BucketSpec) -> str:
    return f"replicate-{source.purpose}"


def replication_rule(
    source: BucketSpec, replica_arn: str, replica_key_arn: pulumi.Input[str]
) -> aws.s3.BucketReplicationConfigRuleArgs:
    """Everything under the bucket's data prefix (the whole reports bucket), deletions included."""
    s3 = aws.s3
    return s3.BucketReplicationConfigRuleArgs(
        id=rule_id(source),
        status="Enabled",
        priority=1,
        filter=s3.BucketReplicationConfigRuleFilterArgs(prefix=source.prefix),
        delete_marker_replication=s3.BucketReplicationConfigRuleDeleteMarkerReplicationArgs(status="Enabled"),
        source_selection_criteria=s3.BucketReplicationConfigRuleSourceSelectionCriteriaArgs(
            sse_kms_encrypted_objects=s3.BucketReplicationConfigRuleSourceSelectionCriteriaSseKmsEncryptedObjectsArgs(
                status="Enabled"
            )
        ),
        destination=s3.BucketReplicationConfigRuleDestinationArgs(
            bucket=replica_arn,
            encryption_configuration=s3.BucketReplicationConfigRuleDestinationEncryptionConfigurationArgs(
                replica_kms_key_id=replica_key_arn
            ),
            replication_time=s3.BucketReplicationConfigRuleDestinationReplicationTimeArgs(
                status="Enabled",
                time=s3.BucketReplicationConfigRuleDestinationReplicationTimeTimeArgs(minutes=RTC_MINUTES),
            ),
            metrics=s3.BucketReplicationConfigRuleDestinationMetricsArgs(
                status="Enabled",
                event_threshold=s3.BucketReplicationConfigRuleDestinationMetricsEventThresholdArgs(minutes=RTC_MINUTES),
            ),
        ),
    )
