"""A stand-in for S3 Inventory on the local stack: moto's S3 keeps inventory configurations but
never delivers a report.

`deliver` does what S3 Inventory does once a day on AWS: it lists the current versions of the raw
and processed buckets and writes one report of each into the audit-data bucket, in S3
Inventory's layout (Parquet, the stack's format: data files, `<time>/manifest.json`, the Hive
symlink of its `dt` partition: `writers.inventory_objects`). Nothing in the jobs calls it: tests
and demos deliver the night's inventories before they run the nightly reconcile, as AWS would.
Loopback endpoints only.
"""

from __future__ import annotations

from datetime import datetime

import boto3
import polars as pl

from jobs.local.standins.advance import check_local
from jobs.local.writers import inventory_objects
from jobs.reconcile.rules.frames import OBJECTS_SCHEMA
from jobs.settings import JobSettings


def deliver(settings: JobSettings, created: datetime, fmt: str = "Parquet") -> list[str]:
    """Today's inventory report of the raw and the processed bucket; returns their manifests' keys."""
    s3 = boto3.client("s3")
    check_local(s3.meta.endpoint_url)
    manifests = []
    for source in (settings.store.raw_bucket, settings.store.processed_bucket):
        rows = [
            {"bucket": source, "key": o["Key"], "size": o["Size"], "lastModified": o["LastModified"], "etag": o["ETag"]}
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=source)
            for o in page.get("Contents", [])
        ]
        frame = pl.DataFrame(rows, schema=OBJECTS_SCHEMA, orient="row")
        objects = inventory_objects(
            settings.reconcile.inventory_bucket,
            settings.reconcile.inventory_prefix,
            source,
            created,
            [frame],
            fmt,
            settings.reconcile.inventory_config_id,
        )
        for key, body in objects.items():
            s3.put_object(Bucket=settings.reconcile.inventory_bucket, Key=key, Body=body)
        manifests += [key for key in objects if key.endswith("/manifest.json")]
    return manifests
