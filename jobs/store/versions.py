"""Object versions adapter: the delete markers a listing shows as current, and their removal.

The data buckets are versioned, so a DeleteObject without a version (what a bad role, or a wrong
lifecycle, does) only puts a delete marker on top; the object's last version stays, noncurrent,
until the lifecycle expires it. Removing the marker (DeleteObject with the marker's VersionId)
makes that version current again, with its own ETag: nothing is copied or rewritten.

API actions used: s3:ListBucketVersions (ListObjectVersions), s3:DeleteObjectVersion (DeleteObjects
with version ids).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from jobs.errors import StoreRequestError
from jobs.observability import CallMetrics
from jobs.store._aws import translated

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import DeleteTypeDef

DELETE_BATCH = 1000  # DeleteObjects' limit per request


@dataclass(frozen=True)
class DeleteMarker:
    key: str
    version_id: str
    last_modified: datetime


class ObjectVersions:
    def __init__(self, client: S3Client, metrics: CallMetrics) -> None:
        self._client = client
        self._metrics = metrics

    def current_delete_markers(self, bucket: str, prefix: str) -> Iterator[list[DeleteMarker]]:
        """Page by page, the delete markers that are their key's current version."""
        pages = self._client.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix)
        iterator = iter(pages)
        while True:
            with self._metrics.call("s3.ListObjectVersions"), translated("s3.ListObjectVersions"):
                page = next(iterator, None)
            if page is None:
                return
            yield [
                DeleteMarker(m["Key"], m["VersionId"], m["LastModified"])
                for m in page.get("DeleteMarkers", [])
                if m.get("IsLatest")
            ]

    def remove(self, bucket: str, markers: Sequence[DeleteMarker]) -> int:
        """Delete these markers (their versions only); returns how many went."""
        removed = 0
        for start in range(0, len(markers), DELETE_BATCH):
            chunk = markers[start : start + DELETE_BATCH]
            request: DeleteTypeDef = {
                "Objects": [{"Key": m.key, "VersionId": m.version_id} for m in chunk],
                "Quiet": True,
            }
            with self._metrics.call("s3.DeleteObjects"), translated("s3.DeleteObjects"):
                errors = self._client.delete_objects(Bucket=bucket, Delete=request).get("Errors", [])
            if errors:
                first = errors[0]
                raise StoreRequestError(
                    f"s3.DeleteObjects: {len(errors)} marker(s) not removed, e.g. {first.get('Key')}: "
                    f"{first.get('Code')} {first.get('Message', '')}",
                    str(first.get("Code", "")),
                )
            removed += len(chunk)
        return removed
