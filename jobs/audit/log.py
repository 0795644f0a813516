"""The change log as S3 holds it: the objects Firehose delivered, by day, and the records it could
not convert. A local engine reads copies of the objects (DuckDB reads S3 itself only through an
extension that would be a download at run time); Athena reads them in place.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from jobs.contract import layout
from jobs.contract.objects import ObjectInfo

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets


class ChangeLog:
    def __init__(self, buckets: Buckets, bucket: str) -> None:
        self._buckets = buckets
        self.bucket = bucket

    def _listed(self, prefix: str) -> list[ObjectInfo]:
        return [o for page in self._buckets.list_pages(self.bucket, prefix) for o in page]

    def objects(self, days: tuple[date, date] | None = None) -> list[ObjectInfo]:
        """The delivered Parquet objects, all or those of the delivery days first..last."""
        if days is None:
            return [o for o in self._listed(layout.AUDIT_CHANGES_PREFIX) if o.key.endswith(".parquet")]
        first, last = days
        count = (last - first).days + 1
        prefixes = [layout.audit_changes_prefix(first + timedelta(days=n)) for n in range(max(count, 0))]
        return [o for prefix in prefixes for o in self._listed(prefix) if o.key.endswith(".parquet")]

    def failures(self) -> list[ObjectInfo]:
        """Objects of records Firehose could not convert (each line one record, kept as delivered)."""
        return self._listed(layout.AUDIT_ERRORS_PREFIX)

    def stage(self, into: Path, days: tuple[date, date] | None = None) -> list[Path]:
        """Copy the objects to `into`, keeping their `dt=` directories (the partition column)."""
        paths = []
        for obj in self.objects(days):
            path = into / obj.key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(self._buckets.get_bytes(self.bucket, obj.key))
            paths.append(path)
        return paths
