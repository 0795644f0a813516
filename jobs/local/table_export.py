"""`python -m jobs local export-table`: the local stand-in for DynamoDB's ExportTableToPointInTime.

DynamoDB Local cannot export a table. This scans it and writes what AWS would have written: a
full DYNAMODB_JSON export (gzip data files of `{"Item": …}` lines, manifest-files.json,
manifest-summary.json) under the stage's export location, `s3://{export bucket}/{export prefix}`
(the audit-data bucket, created as the stack declares it when the local stack has none yet). It is
the export stand-in's full export (`standins.exports`, which the nightly reconcile's exports also
come from on the local stack), so the drill restores from, and the reconcile reads, the same
layout as on AWS.

A Scan is not a point in time: the export is stamped with the moment the scan started, so an item
changed while it ran may be newer than the stamp (AWS's exports are exact to the second).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from jobs.contract import audit_data_spec, layout
from jobs.local.bootstrap import ensure_bucket
from jobs.local.standins.exports import ExportStandIn

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client

    from jobs.settings import JobSettings


def export_table(
    settings: JobSettings, dynamodb: DynamoDBClient, s3: S3Client, region: str, now: datetime | None = None
) -> str:
    """Export the stage's table; returns the export's location (its s3:// directory)."""
    started = now or layout.utc_now()
    bucket, prefix = settings.reconcile.export_bucket, settings.reconcile.export_prefix
    ensure_bucket(s3, audit_data_spec(settings.stage).model_copy(update={"name": bucket}), region)
    table_arn = dynamodb.describe_table(TableName=settings.store.table_name)["Table"]["TableArn"]
    request = {"TableArn": table_arn, "S3Bucket": bucket, "S3Prefix": prefix, "ExportTime": started}
    described = ExportStandIn(dynamodb, s3, bucket, prefix).export(request)["ExportDescription"]
    return layout.s3_uri(bucket, str(described["ExportManifest"]).rsplit("/", 1)[0] + "/")
