"""The clock of the embedded stack: a stage moved to a date, by the same declared rules.

DynamoDB Local deletes items whose TTL passed only at the real time, and moto's S3 stores
lifecycle rules but never applies them. `advance` moves a stage to a given date: the table's TTL attribute and the
buckets' lifecycle rules (read back from the table and buckets, as the contract declared them)
are applied as AWS would have by then, so tests and demos can move time forward by years. Local
only: it refuses endpoints that are not on loopback.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from jobs.errors import SettingsError
from jobs.local.standins.lifecycle import Ledger, LifecycleReport, LifecycleStandIn
from jobs.local.standins.ttl import expire_items
from jobs.settings import JobSettings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class Advanced:
    to: datetime
    items_expired: int
    objects: LifecycleReport

    def summary(self) -> dict[str, object]:
        return {"to": self.to.isoformat(), "itemsExpired": self.items_expired, **asdict(self.objects)}


def check_local(*endpoints: str | None) -> None:
    for endpoint in endpoints:
        host = urlparse(endpoint or "").hostname
        if host not in LOOPBACK:
            raise SettingsError(f"the stand-ins act on the embedded stack only; endpoint {endpoint!r} is not loopback")


def advance(settings: JobSettings, to: datetime, dynamodb: DynamoDBClient, s3: S3Client, ledger_path: Path) -> Advanced:
    """Apply TTL and lifecycle to the stage's table and data buckets as of `to`."""
    check_local(dynamodb.meta.endpoint_url, s3.meta.endpoint_url)
    ledger = Ledger.load(ledger_path)
    ledger.move_to(to)
    standin = LifecycleStandIn(s3, ledger)
    objects = LifecycleReport()
    for bucket in (settings.store.raw_bucket, settings.store.processed_bucket, settings.store.reports_bucket):
        objects.add(standin.apply(bucket, to))
    ledger.save()
    return Advanced(to, expire_items(dynamodb, settings.store.table_name, to), objects)
