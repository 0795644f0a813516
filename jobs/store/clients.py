"""boto3 client construction: one session, one botocore Config, endpoints from boto3's own env vars.

A malformed endpoint URL or a missing region is a settings problem: SettingsError, with the
variable to fix, instead of a botocore traceback. Every client passes through
`call_recording.attach`, a no-op unless a test is recording the calls
(tests/components/test_iam_matches_calls.py holds the task roles to them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError

from jobs.errors import SettingsError
from jobs.settings import JobSettings
from jobs.store._aws import translate
from jobs.store.call_recording import attach

if TYPE_CHECKING:
    # Re-exported (`X as X`) for the jobs above the store, which type an injected client by them
    # without importing the stubs themselves (.importlinter's sdk contract).
    from botocore.client import BaseClient
    from mypy_boto3_athena import AthenaClient as AthenaClient
    from mypy_boto3_backup import BackupClient as BackupClient
    from mypy_boto3_cloudwatch import CloudWatchClient as CloudWatchClient
    from mypy_boto3_dynamodb import DynamoDBClient as DynamoDBClient
    from mypy_boto3_dynamodbstreams import DynamoDBStreamsClient as DynamoDBStreamsClient
    from mypy_boto3_kms import KMSClient as KMSClient
    from mypy_boto3_s3 import S3Client as S3Client
    from mypy_boto3_sns import SNSClient as SNSClient
    from mypy_boto3_sqs import SQSClient as SQSClient
    from mypy_boto3_sts import STSClient as STSClient
    from mypy_boto3_textract import TextractClient as TextractClient

Client = TypeVar("Client", bound="BaseClient")


def botocore_config(settings: JobSettings, pool: int | None = None) -> Config:
    """One Config for every client: bounded retries with backoff, a pool sized to the threads."""
    return Config(
        retries={"mode": settings.store.retry_mode, "total_max_attempts": settings.store.retry_attempts},
        max_pool_connections=pool or max(10, settings.store.io_threads * 2),
        connect_timeout=5,
        read_timeout=30,
        # No addressing style: botocore uses path style by itself for IP and localhost endpoints
        # (the emulators) and virtual hosts on AWS.
        # Requests are built from validated models and the service validates them again;
        # botocore's own pass over every nested TransactItems structure was a measurable share of
        # the ingest's CPU (README, Performance).
        parameter_validation=False,
    )


def _built(service: str, make: Callable[[boto3.session.Session], Client]) -> Client:
    """`make`'s client from a new session, recorded when a test records calls; a malformed
    endpoint or missing region is a SettingsError, any other botocore failure a domain error.
    """
    try:
        return attach(make(boto3.session.Session()))
    except ValueError as exc:  # botocore's "Invalid endpoint: …"
        variable = f"AWS_ENDPOINT_URL_{service.upper()}"
        raise SettingsError(f"{service} client: {exc} (check {variable} / AWS_ENDPOINT_URL)") from exc
    except BotoCoreError as exc:
        raise translate(exc, f"{service} client") from exc


def s3_client(settings: JobSettings, **kwargs: Any) -> S3Client:
    # Presigned URLs signed with SigV4 (botocore would otherwise presign S3 GETs with the legacy
    # SigV2, which regions opened since 2014 refuse): X-Amz-Expires carries the URL's life.
    config = botocore_config(settings).merge(Config(signature_version="s3v4"))
    return _built("s3", lambda session: session.client("s3", config=config, **kwargs))


def dynamodb_client(settings: JobSettings, **kwargs: Any) -> DynamoDBClient:
    return _built("dynamodb", lambda session: session.client("dynamodb", config=botocore_config(settings), **kwargs))


def streams_client(settings: JobSettings, **kwargs: Any) -> DynamoDBStreamsClient:
    """DynamoDB Streams (its endpoint variable is AWS_ENDPOINT_URL_DYNAMODB_STREAMS)."""
    return _built(
        "dynamodbstreams", lambda session: session.client("dynamodbstreams", config=botocore_config(settings), **kwargs)
    )


def backup_client(settings: JobSettings, **kwargs: Any) -> BackupClient:
    """AWS Backup (no emulator serves it: the drill's restores from a backup are Stubber-tested)."""
    return _built("backup", lambda session: session.client("backup", config=botocore_config(settings), **kwargs))


def sqs_client(settings: JobSettings, **kwargs: Any) -> SQSClient:
    return _built("sqs", lambda session: session.client("sqs", config=botocore_config(settings), **kwargs))


def kms_client(settings: JobSettings, **kwargs: Any) -> KMSClient:
    """KMS: the reconcile reports' signing key (jobs.store.kms)."""
    return _built("kms", lambda session: session.client("kms", config=botocore_config(settings), **kwargs))


def sns_client(settings: JobSettings, **kwargs: Any) -> SNSClient:
    """SNS: the notice that a night's report landed (jobs.store.notices)."""
    return _built("sns", lambda session: session.client("sns", config=botocore_config(settings), **kwargs))


def cloudwatch_client(settings: JobSettings, **kwargs: Any) -> CloudWatchClient:
    """CloudWatch: the runs' metrics (jobs.store.metrics)."""
    return _built(
        "cloudwatch", lambda session: session.client("cloudwatch", config=botocore_config(settings), **kwargs)
    )


def sts_client(settings: JobSettings, **kwargs: Any) -> STSClient:
    """STS: who a caller is (jobs.store.identity)."""
    return _built("sts", lambda session: session.client("sts", config=botocore_config(settings), **kwargs))


def athena_client(settings: JobSettings, **kwargs: Any) -> AthenaClient:
    return _built("athena", lambda session: session.client("athena", config=botocore_config(settings), **kwargs))


def textract_client(settings: JobSettings, **kwargs: Any) -> TextractClient:
    # One attempt per request: jobs.store.textract retries inside its rate limiter, and botocore's
    # own retries would send requests past it.
    config = botocore_config(settings).merge(Config(retries={"mode": "standard", "total_max_attempts": 1}))
    return _built("textract", lambda session: session.client("textract", config=config, **kwargs))
