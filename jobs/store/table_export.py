"""DynamoDB table export adapter: the table's restorable window, full and incremental exports to
S3, waiting for them.

`ExportTableToPointInTime` needs point-in-time recovery on the table (the stack keeps it on). A
FULL export is the table at one time; an INCREMENTAL export holds the items changed in
[ExportFromTime, ExportToTime) with their image at its end (AWS: the window is inclusive at its
start and exclusive at its end, at least 15 minutes and at most 24 hours long, inside the PITR
window). The latest time DynamoDB can export is `LatestRestorableDateTime` of
DescribeContinuousBackups ("typically 5 minutes before the current time": read, never assumed).
The `ClientToken` is derived from every parameter that names the export (table and times), so a
retried task asks for the same export instead of paying for a second one (DynamoDB keeps the
token 8 hours). Output is DYNAMODB_JSON, NEW_IMAGE for incremental exports (a deleted item is its
keys alone; the reconcile never reads old images).

API actions used: dynamodb:DescribeContinuousBackups, dynamodb:ExportTableToPointInTime,
dynamodb:DescribeExport (plus, by DynamoDB on the caller's behalf, s3:PutObject,
AbortMultipartUpload and PutObjectAcl on the export prefix).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from jobs.errors import ExportNotReadyError, ReconcileInputError
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


def client_token(table_arn: str, export_time: datetime, start: datetime | None = None) -> str:
    """The export's idempotency token: a full export names its time, an incremental one its window."""
    window = export_time.isoformat() if start is None else f"{start.isoformat()}..{export_time.isoformat()}"
    return hashlib.sha256(f"{table_arn}@{window}".encode()).hexdigest()[:64]


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

    def latest_restorable(self, table_arn: str) -> datetime:
        """The latest time DynamoDB can export (DescribeContinuousBackups' LatestRestorableDateTime);
        ReconcileInputError when point-in-time recovery is off (no export is possible then).
        """
        with translated("DynamoDB continuous backups"), self._metrics.call("dynamodb.DescribeContinuousBackups"):
            described = self._client.describe_continuous_backups(TableName=table_arn)["ContinuousBackupsDescription"]
        recovery = described.get("PointInTimeRecoveryDescription", {})
        latest = recovery.get("LatestRestorableDateTime")
        if recovery.get("PointInTimeRecoveryStatus") != "ENABLED" or latest is None:
            raise ReconcileInputError(f"{table_arn}: point-in-time recovery is not enabled, so it cannot be exported")
        return latest

    def start_incremental(self, table_arn: str, start: datetime, end: datetime, bucket: str, prefix: str) -> str:
        """Start (or, with the same table and window, find again) the incremental export of the
        items changed in [start, end).
        """
        with translated("DynamoDB export"), self._metrics.call("dynamodb.ExportTableToPointInTime"):
            response = self._client.export_table_to_point_in_time(
                TableArn=table_arn,
                ClientToken=client_token(table_arn, end, start),
                S3Bucket=bucket,
                S3Prefix=prefix.rstrip("/"),
                ExportFormat="DYNAMODB_JSON",
                ExportType="INCREMENTAL_EXPORT",
                IncrementalExportSpecification={
                    "ExportFromTime": start,
                    "ExportToTime": end,
                    "ExportViewType": "NEW_IMAGE",
                },
            )
        arn = response["ExportDescription"]["ExportArn"]
        logger.info(
            "incremental table export started",
            extra={"exportArn": arn, "from": start.isoformat(), "to": end.isoformat()},
        )
        return arn

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
                    # An incremental export's time is its window's end.
                    export_time=described.get("ExportTime")
                    or described.get("IncrementalExportSpecification", {})["ExportToTime"],
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
