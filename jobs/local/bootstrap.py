"""Create the table, buckets and arrival queue on any endpoint from the contract's specs; safe
to run again (a bucket's CORS rules, too, are set to exactly the spec's).

AWS gets the same definitions through the Pulumi components. DynamoDB Local rejects PITR and
tagging calls (UnknownOperationException), so those stay Pulumi-only; KMS is replaced by SSE-S3
(and by SQS-managed encryption on the queues). The report signing key is the one KMS key the
local stack makes, from the spec the Pulumi component declares (jobs.contract.signing), on
moto's KMS: local reports are signed as production's are.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from jobs.contract import BucketSpec, QueueSpec, TableSpec
from jobs.contract.signing import SigningKeySpec

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import QueueConfigurationTypeDef
    from mypy_boto3_sqs import SQSClient

logger = logging.getLogger(__name__)


def ensure_table(client: DynamoDBClient, spec: TableSpec) -> bool:
    """Create the table if missing; True when it was created now."""
    try:
        client.create_table(
            TableName=spec.name,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in spec.string_attributes],
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
    # botocore sleeps a fractional Delay as given (the stubs say int): a table on DynamoDB Local
    # is ready within a fraction of a second, and tests create one per test.
    client.get_waiter("table_exists").wait(TableName=spec.name, WaiterConfig={"Delay": 0.2})  # type: ignore[typeddict-item]
    ttl = client.describe_time_to_live(TableName=spec.name)["TimeToLiveDescription"]
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        client.update_time_to_live(
            TableName=spec.name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": spec.ttl_attribute},
        )
    return created


def ensure_bucket(client: S3Client, spec: BucketSpec, region: str) -> bool:
    """Create one bucket with versioning, encryption, BPA, lifecycle and Object Lock where the spec
    asks for it (enabled at creation); True when created now.
    """
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
        client.create_bucket(**kwargs)  # type: ignore[arg-type]  # a plain dict: the region decides its keys
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
        # The contract's rules are plain dicts (the Pulumi components read them too); the stubs want TypedDicts.
        LifecycleConfiguration={"Rules": spec.lifecycle_rules()},  # type: ignore[typeddict-item]
    )
    if spec.cors is not None:
        # The stack's frontend origins may read objects from a browser, as on AWS; moto's server
        # answers browsers by these rules once its blanket CORS is off (jobs.local.servers).
        client.put_bucket_cors(Bucket=spec.name, CORSConfiguration=spec.cors.configuration())  # type: ignore[arg-type]
    else:
        client.delete_bucket_cors(Bucket=spec.name)
    if spec.object_lock and spec.retention is not None:
        _ensure_default_retention(client, spec.name, spec.retention.configuration())
    return created


def _ensure_default_retention(client: S3Client, bucket: str, wanted: dict[str, Any]) -> None:
    """Set the stack's default retention, so a local report is as immutable as one on AWS.

    The data buckets lock nothing by default: only legal holds, set version by version.

    Put only when it differs: moto refuses PutObjectLockConfiguration on a bucket that holds
    objects (AWS does not), so a second `local up` after a run would fail on an unchanged rule.
    """
    current = client.get_object_lock_configuration(Bucket=bucket).get("ObjectLockConfiguration", {})
    held = current.get("Rule", {}).get("DefaultRetention", {})
    rule = wanted["Rule"]["DefaultRetention"]
    if held.get("Mode") == rule["Mode"] and held.get("Days") == rule["Days"] and not held.get("Years"):
        return
    client.put_object_lock_configuration(
        Bucket=bucket,
        ObjectLockConfiguration=wanted,  # type: ignore[arg-type]  # a contract dict, as above
    )


def ensure_queue(client: SQSClient, spec: QueueSpec) -> tuple[str, str]:
    """The arrival queue and its dead-letter queue (CreateQueue is idempotent for equal
    attributes); returns the queue's (URL, ARN).
    """
    dead_letter_url = client.create_queue(
        QueueName=spec.dead_letter_name,
        Attributes={"MessageRetentionPeriod": str(spec.retention_seconds), "SqsManagedSseEnabled": "true"},
    )["QueueUrl"]
    dead_letter_arn = _queue_arn(client, dead_letter_url)
    url = client.create_queue(
        QueueName=spec.name,
        Attributes={
            "VisibilityTimeout": str(spec.visibility_timeout_seconds),
            "MessageRetentionPeriod": str(spec.retention_seconds),
            "ReceiveMessageWaitTimeSeconds": str(spec.receive_wait_seconds),
            "RedrivePolicy": spec.redrive_policy(dead_letter_arn),
            "SqsManagedSseEnabled": "true",
        },
    )["QueueUrl"]
    return url, _queue_arn(client, url)


def _queue_arn(client: SQSClient, url: str) -> str:
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def ensure_notification(client: S3Client, bucket: str, queue_arn: str, spec: QueueSpec) -> None:
    """raw/ ObjectCreated events of `bucket` go to the arrival queue (replaces the bucket's
    notification configuration: the queue is its only target).
    """
    configuration: QueueConfigurationTypeDef = {
        "Id": "raw-arrivals",
        "QueueArn": queue_arn,
        # S3's event names, as the contract's QueueSpec spells them; the stubs want literals.
        "Events": list(spec.events),  # type: ignore[arg-type]
        "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": spec.filter_prefix}]}},
    }
    client.put_bucket_notification_configuration(
        Bucket=bucket, NotificationConfiguration={"QueueConfigurations": [configuration]}
    )


def ensure_signing_key(client: KMSClient, spec: SigningKeySpec) -> str:
    """The report signing key under its alias (created with the alias when the alias names no
    key); returns the alias, which the jobs are given as on AWS.
    """
    try:
        client.describe_key(KeyId=spec.alias)
        return spec.alias
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "NotFoundException":
            raise
    key = client.create_key(
        KeySpec=spec.key_spec,  # type: ignore[arg-type]  # the contract's string; the stubs want a literal
        KeyUsage=spec.key_usage,  # type: ignore[arg-type]
        Description=spec.description,
    )["KeyMetadata"]
    client.create_alias(AliasName=spec.alias, TargetKeyId=key["KeyId"])
    logger.info("report signing key created", extra={"alias": spec.alias, "keyArn": key["Arn"]})
    return spec.alias


def bootstrap(
    dynamodb: DynamoDBClient,
    s3: S3Client,
    sqs: SQSClient,
    table: TableSpec,
    buckets: list[BucketSpec],
    queue: QueueSpec,
    region: str,
) -> str:
    """Everything a stage needs; returns the arrival queue's URL."""
    created = {table.name: ensure_table(dynamodb, table)}
    for spec in buckets:
        created[spec.name] = ensure_bucket(s3, spec, region)
    url, arn = ensure_queue(sqs, queue)
    raw = next(spec.name for spec in buckets if spec.purpose == "raw")
    ensure_notification(s3, raw, arn, queue)
    logger.info("bootstrap done", extra={"createdNow": created, "arrivalQueue": url})
    return url
