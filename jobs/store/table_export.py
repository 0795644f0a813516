"""DynamoDB table export adapter: export the table as of a point in time to S3 and wait for it.

`ExportTableToPointInTime` needs point-in-time recovery on the table (the stack keeps it on). The
`ClientToken` is derived from the table and the export time, so a retried task asks for the same
export instead of paying for a second one (DynamoDB keeps the token 8 hours). A FULL export in
DYNAMODB_JSON is what the reconcile reads (docs/capacity.md weighs it against incremental exports).

API actions used: dynamodb:ExportTableToPointInTime, dynamodb:DescribeExport (plus, by DynamoDB
on the caller's behalf, s3:PutObject/AbortMultipartUpload on the export prefix).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from jobs.errors import ExportNotReadyError
from jobs.observability import CallMetrics
from jobs.store._aws import translated
from jobs.store.polling import Polling

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

logger = logging.getLogger(__name__)

POLLING = Polling(every_s=30.0, timeout_s=6 * 3600.0)  # AWS: a full export of a large table takes minutes to hours


@dataclass(frozen=True)
class ExportDone:
    arn: str
    bucket: str
    prefix: str
    manifest_key: str  # …/AWSDynamoDB/<export id>/manifest-summary.json
    export_time: datetime
    item_count: int | None

    @property
    def directory(self) -> str:
        """s3:// of the export directory, the LOCATION `--dynamodb-export` takes."""
        return f"s3://{self.bucket}/{self.manifest_key.rsplit('/', 1)[0]}/"


def client_token(table_arn: str, export_time: datetime) -> str:
    return hashlib.sha256(f"{table_arn}@{export_time.isoformat()}".encode()).hexdigest()[:64]


class TableExports:
    def __init__(
        self,
        client: DynamoDBClient,
        metrics: CallMetrics,
        *,
        polling: Polling = POLLING,
    ) -> None:
        self._client = client
        self._metrics = metrics
        self._polling = polling

    def start(self, table_arn: str, export_time: datetime, bucket: str, prefix: str) -> str:
        """Start (or, with the same table and time, find again) a full DYNAMODB_JSON export."""
        with translated("DynamoDB export"), self._metrics.call("dynamodb.ExportTableToPointInTime"):
            response = self._client.export_table_to_point_in_time(
                TableArn=table_arn,
                ExportTime=export_time,
                ClientToken=client_token(table_arn, export_time),
                S3Bucket=bucket,
                S3Prefix=prefix.rstrip("/"),
                ExportFormat="DYNAMODB_JSON",
                ExportType="FULL_EXPORT",
            )
        arn = response["ExportDescription"]["ExportArn"]
        logger.info("table export started", extra={"exportArn": arn, "exportTime": export_time.isoformat()})
        return arn

    def wait(self, export_arn: str) -> ExportDone:
        """Poll DescribeExport until the export completes; ExportNotReadyError when it failed or
        is still in progress after the timeout.
        """
        for _ in self._polling.checks():
            with translated("DynamoDB export"), self._metrics.call("dynamodb.DescribeExport"):
                described = self._client.describe_export(ExportArn=export_arn)["ExportDescription"]
            status = described["ExportStatus"]
            if status == "COMPLETED":
                return ExportDone(
                    arn=export_arn,
                    bucket=described["S3Bucket"],
                    prefix=described.get("S3Prefix", ""),
                    manifest_key=described["ExportManifest"],
                    export_time=described["ExportTime"],
                    item_count=described.get("ItemCount"),
                )
            if status == "FAILED":
                raise ExportNotReadyError(
                    f"table export {export_arn} failed: "
                    f"{described.get('FailureCode')}: {described.get('FailureMessage')}"
                )
        raise ExportNotReadyError(
            f"table export {export_arn} still {status} after the {self._polling.timeout_s:.0f} s timeout"
        )
