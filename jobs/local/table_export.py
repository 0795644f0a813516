"""`python -m jobs local export-table`: the local stand-in for DynamoDB's ExportTableToPointInTime.

DynamoDB Local cannot export a table. This scans it and writes what AWS would have written: a
full DYNAMODB_JSON export (gzip data files of `{"Item": …}` lines, manifest-files.json,
manifest-summary.json) under the stage's export location, `s3://{export bucket}/{export prefix}`
(the audit-data bucket, created as the stack declares it when the local stack has none yet). The
files come from the reconcile package's export writer, so the drill restores from, and the
reconcile reads, the same layout as on AWS.

A Scan is not a point in time: the export is stamped with the moment the scan started, so an item
changed while it ran may be newer than the stamp (AWS's exports are exact to the second).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from jobs.contract import BucketSpec, layout
from jobs.local.bootstrap import ensure_bucket
from jobs.reconcile.inputs.writers import export_line, write_export
from jobs.settings import JobSettings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client

ITEMS_PER_FILE = 50_000


def export_table(
    settings: JobSettings, dynamodb: DynamoDBClient, s3: S3Client, region: str, now: datetime | None = None
) -> str:
    """Export the stage's table; returns the export's location (its s3:// directory)."""
    started = now or layout.utc_now()
    bucket, prefix = settings.export_bucket, settings.export_prefix
    ensure_bucket(s3, BucketSpec(purpose=layout.AUDIT_DATA, name=bucket, prefix=prefix), region)
    table_arn = dynamodb.describe_table(TableName=settings.table_name)["Table"]["TableArn"]
    with tempfile.TemporaryDirectory(prefix="docuflow-export-") as tmp:
        root = Path(tmp) / bucket
        directory = write_export(root, table_arn, started, _chunks(dynamodb, settings.table_name), s3_prefix=prefix)
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            s3.put_object(Bucket=bucket, Key=path.relative_to(root).as_posix(), Body=path.read_bytes())
        return layout.s3_uri(bucket, directory.relative_to(root).as_posix() + "/")


def _chunks(dynamodb: DynamoDBClient, table: str) -> Iterator[bytes]:
    """The table's items as export lines, ITEMS_PER_FILE to a data file."""
    lines: list[str] = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=table):
        for item in page.get("Items", []):
            wire: dict[str, object] = dict(item)
            lines.append(export_line(wire))
            if len(lines) == ITEMS_PER_FILE:
                yield "".join(lines).encode()
                lines = []
    if lines:
        yield "".join(lines).encode()
