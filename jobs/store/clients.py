"""boto3 client construction: one session, one botocore Config, endpoints from boto3's own env vars."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from jobs.settings import JobSettings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_textract import TextractClient


def s3_client(settings: JobSettings, **kwargs: Any) -> S3Client:
    return boto3.session.Session().client("s3", config=settings.botocore_config(), **kwargs)


def dynamodb_client(settings: JobSettings, **kwargs: Any) -> DynamoDBClient:
    return boto3.session.Session().client("dynamodb", config=settings.botocore_config(), **kwargs)


def textract_client(settings: JobSettings, **kwargs: Any) -> TextractClient:
    # One attempt per request: jobs.store.textract retries inside its rate limiter, and botocore's
    # own retries would send requests past it.
    config = settings.botocore_config().merge(Config(retries={"mode": "standard", "total_max_attempts": 1}))
    return boto3.session.Session().client("textract", config=config, **kwargs)
