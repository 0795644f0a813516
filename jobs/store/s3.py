"""S3 adapter: raw listings page by page, object reads, fenced result.json writes, write-once puts
(the one place they are made, so every report writer meets its own resent write as a success).

Every call goes through `translated`, so callers see jobs.errors (S3ObjectMissingError,
S3ObjectChangedError, S3ObjectExistsError, StoreUnavailableError, …), never botocore.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from jobs.contract import layout
from jobs.contract.objects import ObjectInfo
from jobs.contract.schema import STANDARD_RETENTION
from jobs.errors import S3ObjectChangedError, S3ObjectExistsError, S3ObjectMissingError
from jobs.observability import CallMetrics
from jobs.store._aws import translated

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import PutObjectRequestTypeDef

logger = logging.getLogger(__name__)

LIST_PAGE_SIZE = 1000
_MISSING = {"NoSuchKey": S3ObjectMissingError, "404": S3ObjectMissingError, "NotFound": S3ObjectMissingError}
_CHANGED = {"PreconditionFailed": S3ObjectChangedError}
# A concurrent conditional write to the same key answers 409 ConditionalRequestConflict (the
# other writer is mid-flight), and If-Match on a key that is gone answers 404 NoSuchKey: for us
# the object is not the version we expected either way.
_WRITE_CONDITIONS = {
    "PreconditionFailed": S3ObjectChangedError,
    "ConditionalRequestConflict": S3ObjectChangedError,
    "NoSuchKey": S3ObjectChangedError,
}


class Buckets:
    def __init__(self, client: S3Client, metrics: CallMetrics) -> None:
        self._client = client
        self._metrics = metrics

    def list_pages(self, bucket: str, prefix: str, first_page_size: int = LIST_PAGE_SIZE) -> Iterator[list[ObjectInfo]]:
        """Yield one listing page (≤ 1,000 objects) at a time: memory stays bounded.

        A smaller first page lets a caller start working sooner: a page's latency grows with its
        size (moto: 50 ms for 100 keys, 300-400 ms for 1,000).
        """
        request: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": first_page_size}
        while True:
            with self._metrics.call("s3.ListObjectsV2"), translated("s3.ListObjectsV2"):
                page = self._client.list_objects_v2(**request)
            yield [
                ObjectInfo(bucket, obj["Key"], obj["ETag"], obj["Size"], obj["LastModified"])
                for obj in page.get("Contents", [])
            ]
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return
            request = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": LIST_PAGE_SIZE, "ContinuationToken": token}

    def get_bytes(self, bucket: str, key: str, etag: str | None = None) -> bytes:
        """Read an object; with `etag`, only that version of it (IfMatch), so we never extract
        bytes other than the ones we claimed. S3ObjectMissingError / S3ObjectChangedError.
        """
        kwargs: dict[str, Any] = {"Bucket": bucket, "Key": key}
        if etag:
            kwargs["IfMatch"] = etag
        with self._metrics.call("s3.GetObject"), translated("s3.GetObject", {**_MISSING, **_CHANGED}):
            response = self._client.get_object(**kwargs)
            return response["Body"].read()

    def put_json(
        self,
        bucket: str,
        key: str,
        body: bytes,
        *,
        replaces: str | None,
        retention: str = STANDARD_RETENTION,
    ) -> str:
        """Write a JSON object only over the version the caller expects, and return its ETag.

        `replaces` is the ETag of the object this write may overwrite (If-Match), or None when
        the key must not exist yet (If-None-Match: *). A writer whose expectation is stale gets
        S3ObjectChangedError and its bytes never become the current version.
        """
        request: PutObjectRequestTypeDef = {
            "Bucket": bucket,
            "Key": key,
            "Body": body,
            "ContentType": "application/json",
            "Tagging": f"{layout.COMPLIANCE_TAG[0]}={retention}",
        }
        if replaces:
            request["IfMatch"] = replaces
        else:
            request["IfNoneMatch"] = "*"
        with self._metrics.call("s3.PutObject"), translated("s3.PutObject", _WRITE_CONDITIONS):
            response = self._client.put_object(**request)
        return response["ETag"]

    def put_once(self, bucket: str, key: str, body: bytes, content_type: str) -> None:
        """Write-once: `If-None-Match: *` makes S3 refuse to overwrite an existing key.

        A refusal is S3ObjectExistsError unless the key holds exactly `body`: when the write was
        applied but its response lost, botocore's resend meets our own write (412), which is a
        success, not someone else's report.
        """
        conditions = {"PreconditionFailed": S3ObjectExistsError, "ConditionalRequestConflict": S3ObjectExistsError}
        try:
            with self._metrics.call("s3.PutObject.once"), translated("s3.PutObject.once", conditions):
                self._client.put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type, IfNoneMatch="*")
        except S3ObjectExistsError:
            try:
                stored = self.get_bytes(bucket, key)
            except S3ObjectMissingError:
                stored = None
            if stored != body:
                raise
            logger.info("write-once put met its own bytes (a resend after a lost response)", extra={"key": key})

    def head(self, bucket: str, key: str) -> ObjectInfo | None:
        """The object's current version, or None when there is none."""
        try:
            with self._metrics.call("s3.HeadObject"), translated("s3.HeadObject", _MISSING):
                response = self._client.head_object(Bucket=bucket, Key=key)
        except S3ObjectMissingError:
            return None
        return ObjectInfo(bucket, key, response["ETag"], response["ContentLength"], response["LastModified"])
