"""The IAM vocabulary every policy builder speaks: statements, documents, object patterns, the
shared grants (the data key, run metrics, a document's prefixes), and `TaskResources`, what a job
task's role may be granted.

Pure: the job packages' task-role builders (`jobs/<package>/policy.py`, named by the registry) and
the Pulumi components' own policies (bucket, key, execution and scheduler roles) build on it with
concrete ARNs, so least privilege is tested without Pulumi. No Allow statement uses a wildcard
action; `*` is a resource only for actions that have no resource type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from jobs.contract import layout

Policy = dict[str, Any]
Statement = dict[str, Any]

VERSION = "2012-10-17"

# Task roles hold exactly the actions their job's calls need (tests/components/
# test_iam_matches_calls.py records them on the live local stack), plus what AWS alone needs.
KMS_USE = ("kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey")
KMS_ENCRYPT = ("kms:Decrypt", "kms:GenerateDataKey")
ATHENA_QUERIES = (
    "athena:StartQueryExecution",
    "athena:GetQueryExecution",
    "athena:GetQueryResults",
    "athena:StopQueryExecution",
)
GLUE_READS = ("glue:GetDatabase", "glue:GetTable", "glue:GetPartitions")
# Athena reads and writes S3 with the caller's permissions: its results location (multipart
# writes, reads of results) and, for the source data, bucket location and listing.
ATHENA_RESULT_OBJECTS = ("s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts")


class CatalogArns(TypedDict):
    """What the Athena engine works on (AuditCatalog's resources)."""

    audit_bucket_arn: str
    workgroup_arn: str
    glue_catalog_arn: str
    glue_database_arn: str
    glue_table_arns: list[str]
    state_table_arn: str  # the Iceberg table the nightly run merges (one of glue_table_arns)


@dataclass(frozen=True)
class TaskResources:
    """Everything a job task's role may be granted, resolved once by the stack (BatchJobs); each
    task's builder picks what it needs. The optional ones change the grants: a stack without them
    grants nothing for them.
    """

    table_arn: str
    index_arn: str
    raw_bucket_arn: str
    processed_bucket_arn: str
    reports_bucket_arn: str
    key_arn: str
    arrivals_queue_arn: str
    arrivals_dead_letter_queue_arn: str
    audit_bucket_arn: str  # the audit-data bucket: inventories, table exports, table states
    region: str
    account_id: str
    backup_role_arn: str  # the role the drill's restores from AWS Backup pass
    # The stage's metrics namespace (jobs.contract.metrics.namespace): its runs' metrics.
    metrics_namespace: str | None = None
    reports_topic_arn: str | None = None  # where each written report is announced
    textract: bool = False  # the stack's ocrEngine is textract: the ingest reads scans with it
    catalog: CatalogArns | None = None  # the Athena engine's catalog (reconcileEngine athena)
    audit_log_bucket_arn: str | None = None  # the change log the polars nightly checks (--audit-log)
    exports_bucket_arn: str | None = None  # the table exports a drill may restore from


def statement(
    sid: str,
    actions: Sequence[str],
    resources: Sequence[str] | str,
    *,
    effect: str = "Allow",
    condition: Mapping[str, Any] | None = None,
    principal: Mapping[str, Any] | str | None = None,
) -> Statement:
    stmt: Statement = {"Sid": sid, "Effect": effect, "Action": sorted(set(actions))}
    if principal is not None:
        stmt["Principal"] = principal
    stmt["Resource"] = resources if isinstance(resources, str) else list(resources)
    if condition:
        stmt["Condition"] = dict(condition)
    return stmt


def document(*statements: Statement) -> Policy:
    return {"Version": VERSION, "Statement": list(statements)}


def objects(bucket_arn: str, prefix: str = "") -> str:
    """The object ARN pattern under `prefix` (a layout prefix such as RAW_PREFIX)."""
    return f"{bucket_arn}/{prefix}*"


def list_prefixes(sid: str, bucket_arn: str, prefixes: Sequence[str], action: str = "s3:ListBucket") -> Statement:
    # Listing is a bucket-level action: the prefix condition keeps it inside the prefixes.
    return statement(
        sid,
        [action],
        [bucket_arn],
        condition={"StringLike": {"s3:prefix": [f"{p}*" for p in prefixes]}},
    )


def use_data_key(key_arn: str) -> Statement:
    # SSE-KMS: S3 decrypts what the role reads and generates a data key for what it writes, with
    # the caller's permissions; DynamoDB uses the table's own grant and needs nothing here.
    return statement("UseDataKey", KMS_ENCRYPT, [key_arn])


def publish_metrics(namespace: str | None) -> list[Statement]:
    """PutMetricData has no resource type in IAM: the grant is narrowed to the stage's namespace
    (jobs.contract.metrics.namespace) by its condition key instead.
    """
    if not namespace:
        return []
    condition = {"StringEquals": {"cloudwatch:namespace": namespace}}
    return [statement("PublishRunMetrics", ["cloudwatch:PutMetricData"], "*", condition=condition)]


def document_prefixes(
    raw_bucket_arn: str, processed_bucket_arn: str, action: str = "s3:ListBucketVersions"
) -> tuple[list[str], list[Statement]]:
    """The documents' objects in both data buckets, and the listing (of versions, by default)
    of their prefixes.
    """
    documents = [objects(raw_bucket_arn, layout.RAW_PREFIX), objects(processed_bucket_arn, layout.PROCESSED_PREFIX)]
    kind = "Versions" if action == "s3:ListBucketVersions" else "Objects"
    listing = [
        list_prefixes(f"ListRaw{kind}", raw_bucket_arn, [layout.RAW_PREFIX], action),
        list_prefixes(f"ListResult{kind}", processed_bucket_arn, [layout.PROCESSED_PREFIX], action),
    ]
    return documents, listing
