"""boto3 client construction: one session, one botocore Config, endpoints from boto3's own env vars.

Every client passes through `call_recording.attach`, a no-op unless a test is recording the calls
(tests/components/test_iam_matches_calls.py holds the task roles to them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3

from jobs.settings import JobSettings
from jobs.store.call_recording import attach

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_textract import TextractClient


def s3_client(settings: JobSettings, **kwargs: Any) -> S3Client:
    return attach(boto3.session.Session().client("s3", config=settings.botocore_config(), **kwargs))


def dynamodb_client(settings: JobSettings, **kwargs: Any) -> DynamoDBClient:
    return attach(boto3.session.Session().client("dynamodb", config=settings.botocore_config(), **kwargs))


def textract_client(settings: JobSettings, **kwargs: Any) -> TextractClient:
    return attach(boto3.session.Session().client("textract", config=settings.botocore_config(), **kwargs))
