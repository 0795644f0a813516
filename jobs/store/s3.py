"""S3 adapter: raw listings page by page, object reads, fenced result.json writes, write-once puts
(the one place they are made, so every report writer meets its own resent write as a success),
the versions of a document's life (retention tags, version listings, delete markers, batched
version deletes, legal holds), and presigned GETs for the frontend.

Every call goes through `translated`, so callers see jobs.errors (S3ObjectMissingError,
S3ObjectChangedError, S3ObjectExistsError, StoreUnavailableError, …), never botocore.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jobs.contract import layout
from jobs.contract.objects import ObjectInfo, ObjectVersion
from jobs.contract.retention import RetentionClass
from jobs.errors import (
    S3ObjectChangedError,
    S3ObjectExistsError,
    S3ObjectLockMissingError,
    S3ObjectMissingError,
    StoreError,
)
from jobs.observability import CallMetrics
from jobs.store._aws import translated

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ErrorTypeDef, ObjectIdentifierTypeDef, PutObjectRequestTypeDef

logger = logging.getLogger(__name__)

LIST_PAGE_SIZE = 1000
FENCE_TRIES = 3
DELETE_BATCH = 1000  # DeleteObjects takes at most 1,000 keys (or versions) a request
_MISSING = {"NoSuchKey": S3ObjectMissingError, "404": S3ObjectMissingError, "NotFound": S3ObjectMissingError}
_CHANGED = {"PreconditionFailed": S3ObjectChangedError}
_NO_LOCK = {"NoSuchObjectLockConfiguration": S3ObjectLockMissingError}
# A concurrent conditional write to the same key answers 409 ConditionalRequestConflict (the
# other writer is mid-flight), and If-Match on a key that is gone answers 404 NoSuchKey: for us
# the object is not the version we expected either way.
_WRITE_CONDITIONS = {
    "PreconditionFailed": S3ObjectChangedError,
    "ConditionalRequestConflict": S3ObjectChangedError,
    "NoSuchKey": S3ObjectChangedError,
}


@dataclass(frozen=True)
class Refused:
    """A version DeleteObjects did not delete. AWS names the version; moto's server names only
    the key (version_id None), so callers list again rather than trust the id.
    """

    key: str
    version_id: str | None
    code: str


class Buckets:
    def __init__(self, client: S3Client, metrics: CallMetrics) -> None:
        self._client = client
        self._metrics = metrics

    def list_pages(self, bucket: str, prefix: str, first_page_size: int = LIST_PAGE_SIZE) -> Iterator[list[ObjectInfo]]:
        """Yield one listing page (≤ 1,000 objects) at a time: memory stays bounded.

        A smaller first page lets a caller start working sooner: a page's latency grows with its
        size (docs/tuning.md).
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
        where = f"s3://{bucket}/{key}"
        with self._metrics.call("s3.GetObject"), translated("s3.GetObject", {**_MISSING, **_CHANGED}, where):
            response = self._client.get_object(**kwargs)
            return response["Body"].read()

    def put_json(
        self,
        bucket: str,
        key: str,
        body: bytes,
        *,
        replaces: str | None,
        retention: RetentionClass,
        legal_hold: bool = False,
    ) -> str:
        """Write a JSON object only over the version the caller expects, and return its ETag.

        `replaces` is the ETag of the object this write may overwrite (If-Match), or None when
        the key must not exist yet (If-None-Match: *). A writer whose expectation is stale gets
        S3ObjectChangedError and its bytes never become the current version. `legal_hold`: the
        version is written under an Object Lock legal hold (its document is held), in the same
        request, so no moment passes in which lifecycle could take it.
        """
        request: PutObjectRequestTypeDef = {
            "Bucket": bucket,
            "Key": key,
            "Body": body,
            "ContentType": "application/json",
            "Tagging": f"{layout.RETENTION_TAG}={retention.value}",
        }
        if legal_hold:
            request["ObjectLockLegalHoldStatus"] = "ON"
        if replaces:
            request["IfMatch"] = replaces
        else:
            request["IfNoneMatch"] = "*"
        with self._metrics.call("s3.PutObject"), translated("s3.PutObject", _WRITE_CONDITIONS):
            response = self._client.put_object(**request)
        return response["ETag"]

    def put_fenced(
        self,
        bucket: str,
        key: str,
        body: bytes,
        *,
        replaces: str | None,
        retention: RetentionClass,
        still_held: Callable[[], bool],
        legal_hold: bool = False,
    ) -> str | None:
        """Write result.json over the version its writer's item names; its ETag, or None when the
        writer lost its item meanwhile (the ingest's claim, a reviewer's version).

        A writer that meets another ETag asks `still_held`: if it no longer holds its item, a newer
        writer owns result.json and these bytes are dropped; if it does, what it met was left by a
        writer that lost (a stale claim, a reviewer told of a conflict), and it writes over exactly
        that version. `legal_hold`: as put_json's (the writer's item is under a legal hold).
        """
        expected = replaces
        for _ in range(FENCE_TRIES):
            try:
                return self.put_json(bucket, key, body, replaces=expected, retention=retention, legal_hold=legal_hold)
            except S3ObjectChangedError:
                current = self.head(bucket, key)
                if not still_held():
                    logger.warning("item lost before result.json was written", extra={"key": key})
                    return None
                expected = current.etag if current else None
        logger.warning("result.json kept changing under a held item; left to the next writer", extra={"key": key})
        return None

    def get_version(self, bucket: str, key: str, etag: str) -> bytes:
        """The version of an object with ETag `etag`, current or not (the buckets keep versions):
        what a writer's item names, even when a writer that lost left newer bytes on top.
        S3ObjectMissingError when no version has that ETag.
        """
        try:
            return self.get_bytes(bucket, key, etag)
        except S3ObjectChangedError:
            pass
        request: dict[str, Any] = {"Bucket": bucket, "Prefix": key}
        while True:
            with self._metrics.call("s3.ListObjectVersions"), translated("s3.ListObjectVersions"):
                page = self._client.list_object_versions(**request)
            for version in page.get("Versions", []):
                if version["Key"] == key and version["ETag"] == etag:
                    with self._metrics.call("s3.GetObject.version"), translated("s3.GetObject.version", _MISSING):
                        return self._client.get_object(Bucket=bucket, Key=key, VersionId=version["VersionId"])[
                            "Body"
                        ].read()
            if not page.get("IsTruncated"):
                raise S3ObjectMissingError(f"s3://{bucket}/{key}: no version with ETag {etag}")
            request = {**request, "KeyMarker": page["NextKeyMarker"], "VersionIdMarker": page["NextVersionIdMarker"]}

    def presigned_get(self, bucket: str, key: str, expires_seconds: int) -> str:
        """A URL anyone holding it may GET this one object with, for `expires_seconds` (signed
        locally with the caller's credentials, which S3 checks when the URL is used).
        """
        with self._metrics.call("s3.PresignGetObject"), translated("s3.PresignGetObject"):
            return self._client.generate_presigned_url(
                "get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=expires_seconds
            )

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

    # --- the versions of a document's life ---------------------------------------------------
    def tag_retention(self, bucket: str, key: str, retention: RetentionClass) -> bool:
        """Tag the object's current version with its retention class (the tag lifecycle rules
        select on); False when the key has no current version any more.
        """
        try:
            with self._metrics.call("s3.PutObjectTagging"), translated("s3.PutObjectTagging", _MISSING):
                self._client.put_object_tagging(
                    Bucket=bucket,
                    Key=key,
                    Tagging={"TagSet": [{"Key": layout.RETENTION_TAG, "Value": retention.value}]},
                )
        except S3ObjectMissingError:
            return False
        return True

    def tags(self, bucket: str, key: str) -> dict[str, str] | None:
        """The current version's tags, or None when the key has no current version."""
        try:
            with self._metrics.call("s3.GetObjectTagging"), translated("s3.GetObjectTagging", _MISSING):
                response = self._client.get_object_tagging(Bucket=bucket, Key=key)
        except S3ObjectMissingError:
            return None
        return {t["Key"]: t["Value"] for t in response.get("TagSet", [])}

    def version_pages(self, bucket: str, prefix: str, page_size: int = LIST_PAGE_SIZE) -> Iterator[list[ObjectVersion]]:
        """Every version and delete marker under `prefix`, one listing page (≤ 1,000) at a time."""
        request: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": page_size}
        while True:
            with self._metrics.call("s3.ListObjectVersions"), translated("s3.ListObjectVersions"):
                page = self._client.list_object_versions(**request)
            versions = [
                ObjectVersion(
                    bucket, v["Key"], v["VersionId"], v["LastModified"], v["IsLatest"], False, v["ETag"], v["Size"]
                )
                for v in page.get("Versions", [])
            ]
            markers = [
                ObjectVersion(bucket, m["Key"], m["VersionId"], m["LastModified"], m["IsLatest"], True)
                for m in page.get("DeleteMarkers", [])
            ]
            yield versions + markers
            if not page.get("IsTruncated"):
                return
            request = {
                **request,
                "KeyMarker": page["NextKeyMarker"],
                "VersionIdMarker": page.get("NextVersionIdMarker", ""),
            }

    def versions(self, bucket: str, prefix: str) -> list[ObjectVersion]:
        """All of `version_pages` (one document's prefix: a handful of entries)."""
        return [v for page in self.version_pages(bucket, prefix) for v in page]

    def hide(self, bucket: str, keys: list[str]) -> None:
        """Put a delete marker over the current version of each key (its versions are kept)."""
        for start in range(0, len(keys), DELETE_BATCH):
            chunk: list[ObjectIdentifierTypeDef] = [{"Key": key} for key in keys[start : start + DELETE_BATCH]]
            self._delete_objects(bucket, chunk, "s3.DeleteObjects.hide")

    def delete_versions(self, bucket: str, versions: list[ObjectVersion]) -> list[Refused]:
        """Delete these versions and delete markers for good, DELETE_BATCH a request; returns what
        S3 refused, with its error code (AccessDenied for a version under a legal hold).
        """
        refused: list[Refused] = []
        for start in range(0, len(versions), DELETE_BATCH):
            chunk: list[ObjectIdentifierTypeDef] = [
                {"Key": v.key, "VersionId": v.version_id} for v in versions[start : start + DELETE_BATCH]
            ]
            errors = self._delete_objects(bucket, chunk, "s3.DeleteObjects.versions")
            refused.extend(Refused(e.get("Key", ""), e.get("VersionId"), e.get("Code", "")) for e in errors)
        return refused

    def _delete_objects(
        self, bucket: str, objects: list[ObjectIdentifierTypeDef], operation: str
    ) -> list[ErrorTypeDef]:
        with self._metrics.call(operation), translated(operation):
            response = self._client.delete_objects(Bucket=bucket, Delete={"Objects": objects, "Quiet": True})
        return list(response.get("Errors", []))

    def set_legal_hold(self, version: ObjectVersion, on: bool) -> None:
        """Place (or release) an Object Lock legal hold on one version."""
        with self._metrics.call("s3.PutObjectLegalHold"), translated("s3.PutObjectLegalHold"):
            self._client.put_object_legal_hold(
                Bucket=version.bucket,
                Key=version.key,
                VersionId=version.version_id,
                LegalHold={"Status": "ON" if on else "OFF"},
            )

    def legal_hold(self, version: ObjectVersion) -> bool:
        """Whether one version is under a legal hold."""
        # A version that never had a hold may answer with no status, or (on a bucket without
        # Object Lock) NoSuchObjectLockConfiguration: not held either way; nor is one deleted.
        conditions: dict[str, type[StoreError]] = {**_NO_LOCK, **_MISSING, "NoSuchVersion": S3ObjectMissingError}
        try:
            with self._metrics.call("s3.GetObjectLegalHold"), translated("s3.GetObjectLegalHold", conditions):
                response = self._client.get_object_legal_hold(
                    Bucket=version.bucket, Key=version.key, VersionId=version.version_id
                )
        except (S3ObjectLockMissingError, S3ObjectMissingError):
            return False
        return response.get("LegalHold", {}).get("Status") == "ON"
