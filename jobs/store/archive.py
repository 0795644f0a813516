"""Archived objects: what storage class an object is in, whether it is restored, and the request
that restores it (S3 RestoreObject). Not the table's restore (jobs/store/restore.py).

S3 answers a GET of an object in GLACIER or DEEP_ARCHIVE with 403 InvalidObjectState until a
restore made a temporary copy readable (jobs.store._aws turns that into S3ObjectArchivedError).
A HEAD always works: it names the storage class and, once a restore was asked for, its state in
the `Restore` header (`ongoing-request="true"` while it runs, `"false", expiry-date=…` once the
copy is readable). GLACIER_IR and the other classes are read by a GET at once: nothing to
restore (RestoreObject on them is refused).

API actions used: s3:GetObject (HeadObject), s3:RestoreObject.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from botocore.exceptions import ClientError

from jobs.errors import S3ObjectMissingError
from jobs.observability import CallMetrics
from jobs.store._aws import error_code, translated

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import RestoreRequestTypeDef

logger = logging.getLogger(__name__)

# The classes a GET cannot read until restored; every other class is read directly.
ARCHIVE_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})
RestoreTier = Literal["Standard", "Bulk", "Expedited"]
_MISSING = {"NoSuchKey": S3ObjectMissingError, "404": S3ObjectMissingError, "NotFound": S3ObjectMissingError}


class Readable(StrEnum):
    """Whether a GET reads the object now."""

    YES = "readable"  # not in an archive class
    RESTORED = "restored"  # archived, and a restored copy is readable until its expiry
    RESTORING = "restoring"  # archived, a restore was asked for and is still running
    ARCHIVED = "archived"  # archived, no restore asked for (or the last one expired)


@dataclass(frozen=True)
class ArchiveState:
    bucket: str
    key: str
    storage_class: str
    readable: Readable
    restored_until: str | None = None  # S3's expiry-date of the restored copy, as it gives it


def _state(bucket: str, key: str, storage_class: str, restore: str | None) -> ArchiveState:
    if storage_class not in ARCHIVE_CLASSES:
        return ArchiveState(bucket, key, storage_class, Readable.YES)
    if not restore:
        return ArchiveState(bucket, key, storage_class, Readable.ARCHIVED)
    if 'ongoing-request="true"' in restore:
        return ArchiveState(bucket, key, storage_class, Readable.RESTORING)
    expiry = restore.partition('expiry-date="')[2].rstrip('"') or None
    return ArchiveState(bucket, key, storage_class, Readable.RESTORED, expiry)


class Archives:
    def __init__(self, client: S3Client, metrics: CallMetrics) -> None:
        self._client = client
        self._metrics = metrics

    def state(self, bucket: str, key: str) -> ArchiveState | None:
        """The current version's storage class and restore state; None when there is none."""
        try:
            with self._metrics.call("s3.HeadObject.archive"), translated("s3.HeadObject.archive", _MISSING):
                head = self._client.head_object(Bucket=bucket, Key=key)
        except S3ObjectMissingError:
            return None
        # S3 leaves the header out for STANDARD (the stubs type it as always there).
        storage_class: str = head.get("StorageClass", "STANDARD")
        return _state(bucket, key, storage_class, head.get("Restore"))

    def request_restore(self, bucket: str, key: str, days: int, tier: RestoreTier) -> None:
        """Ask S3 for a readable copy of an archived object for `days` days. A restore already
        running answers 409 RestoreAlreadyInProgress: asked for already, which is what we want.
        """
        request: RestoreRequestTypeDef = {"Days": days, "GlacierJobParameters": {"Tier": tier}}
        with (
            self._metrics.call("s3.RestoreObject"),
            translated("s3.RestoreObject", resource=f"s3://{bucket}/{key}"),
        ):
            try:
                self._client.restore_object(Bucket=bucket, Key=key, RestoreRequest=request)
            except ClientError as exc:
                if error_code(exc) != "RestoreAlreadyInProgress":
                    raise
                logger.info("restore already in progress", extra={"key": key})
