"""Create the table and buckets on any endpoint from the contract's specs; safe to run again.

AWS gets the same definitions through the Pulumi components. DynamoDB Local rejects PITR and
tagging calls (UnknownOperationException), so those stay Pulumi-only; KMS is replaced by SSE-S3.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from jobs.contract import BucketSpec, TableSpec

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger(__name__)


def ensure_table(client: DynamoDBClient, spec: TableSpec) -> bool:
    """Create the table if missing; True when it was created now."""
    try:
        client.create_table(
            TableName=spec.name,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": name, "AttributeType": "S"} for name in spec.string_attributes
            ],
            KeySchema=[
                {"AttributeName": spec.hash_key, "KeyType": "HASH"},
                {"AttributeName": spec.range_key, "KeyType": "RANGE"},
            ],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": spec.index_name,
                    "KeySchema": [
                        {"AttributeName": spec.index_hash_key, "KeyType": "HASH"},
                        {"AttributeName": spec.index_range_key, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": spec.index_projection},
                }
            ],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": spec.stream_view_type},
        )
        created = True
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
        created = False
    client.get_waiter("table_exists").wait(TableName=spec.name, WaiterConfig={"Delay": 0.2})
    ttl = client.describe_time_to_live(TableName=spec.name)["TimeToLiveDescription"]
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        client.update_time_to_live(
            TableName=spec.name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": spec.ttl_attribute},
        )
    return created


def ensure_bucket(client: S3Client, spec: BucketSpec, region: str) -> bool:
    """Create one bucket with versioning, encryption, BPA and lifecycle; True when created now."""
    kwargs: dict[str, object] = {"Bucket": spec.name, "ObjectLockEnabledForBucket": spec.object_lock}
    if region != "us-east-1":
        kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
    # us-east-1 answers 200 to a repeated CreateBucket, so ask first rather than read the error.
    try:
        client.head_bucket(Bucket=spec.name)
        created = False
    except ClientError as exc:
        if exc.response["Error"]["Code"] not in ("404", "NoSuchBucket", "NotFound"):
            raise
        client.create_bucket(**kwargs)  # type: ignore[arg-type]
        created = True
    client.put_bucket_versioning(Bucket=spec.name, VersioningConfiguration={"Status": "Enabled"})
    client.put_public_access_block(
        Bucket=spec.name,
        PublicAccessBlockConfiguration={
            "BlockPublicAcls": True,
            "IgnorePublicAcls": True,
            "BlockPublicPolicy": True,
            "RestrictPublicBuckets": True,
        },
    )
    client.put_bucket_encryption(
        Bucket=spec.name,
        ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]
        },
    )
    client.put_bucket_lifecycle_configuration(
        Bucket=spec.name,
        LifecycleConfiguration={"Rules": spec.lifecycle.rules(spec.prefix)},  # type: ignore[typeddict-item]
    )
    if spec.object_lock:
        # The stack's default retention, so a local report is as immutable as one on AWS.
        client.put_object_lock_configuration(
            Bucket=spec.name, ObjectLockConfiguration=spec.retention.configuration()  # type: ignore[arg-type]
        )
    return created


def bootstrap(
    dynamodb: DynamoDBClient, s3: S3Client, table: TableSpec, buckets: list[BucketSpec], region: str
) -> dict[str, bool]:
    created = {table.name: ensure_table(dynamodb, table)}
    for spec in buckets:
        created[spec.name] = ensure_bucket(s3, spec, region)
    logger.info("bootstrap done", extra={"createdNow": created})
    return created
