"""Restore adapter: the calls that bring the table back into a new table, and the reads a drill
makes of the table it restored.

Three ways in. PITR: `RestoreTableToPointInTime` into a new table (any second of the recovery
window). AWS Backup: `StartRestoreJob` on one of the table's recovery points, run by the backup
role, into a new table. An export (DYNAMODB_JSON, the format AWS's import from S3 also reads):
`CreateTable` from the contract's spec, then `BatchWriteItem` 25 items at a time, resending what
DynamoDB leaves unprocessed. DynamoDB Local serves only the last (it has no PITR, no AWS Backup and
no import from S3), so the first two are Stubber-tested (tests/jobs/store/test_restore.py).

Then: wait for the table to be ACTIVE, find its newest change (a Scan of `updatedAt` only),
delete it once the drill is done, and, for a rollback, delete an item only while it is still the
version that was read.

API actions used: dynamodb:DescribeTable, DescribeContinuousBackups, RestoreTableToPointInTime,
CreateTable, BatchWriteItem, Scan, DeleteTable, DeleteItem; backup:ListRecoveryPointsByResource,
StartRestoreJob, DescribeRestoreJob.
"""

from __future__ import annotations

import logging
import random
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jobs.contract import TableSpec, layout
from jobs.errors import (
    RestoreFailedError,
    StoreConditionFailedError,
    StoreError,
    StoreResourceMissingError,
    StoreUnavailableError,
)
from jobs.observability import CallMetrics
from jobs.store._aws import translated
from jobs.store.dynamo_wire import to_wire
from jobs.store.polling import Polling

if TYPE_CHECKING:
    from mypy_boto3_backup import BackupClient
    from mypy_boto3_dynamodb import DynamoDBClient

logger = logging.getLogger(__name__)

BATCH_WRITE_LIMIT = 25
BATCH_WRITE_RETRIES = 8
BATCH_WRITE_BACKOFF = 0.05  # seconds; doubles per try, full jitter
# A PITR or backup restore of a large table takes hours (AWS: restore time grows with table size).
RESTORE_POLLING = Polling(every_s=20.0, timeout_s=12 * 3600.0)
ACTIVE_POLLING = Polling(every_s=0.5, timeout_s=600.0)


@dataclass(frozen=True)
class TableState:
    name: str
    arn: str
    status: str  # CREATING, ACTIVE, DELETING, …


@dataclass(frozen=True)
class RecoveryWindow:
    """What PITR can restore: any second from `earliest` to `latest` (minutes behind now)."""

    earliest: datetime
    latest: datetime


@dataclass(frozen=True)
class RecoveryPoint:
    arn: str
    vault: str
    created: datetime
    completed: bool


class TableRestores:
    def __init__(
        self,
        dynamodb: DynamoDBClient,
        metrics: CallMetrics,
        *,
        backup: BackupClient | None = None,
        restore_polling: Polling = RESTORE_POLLING,
        active_polling: Polling = ACTIVE_POLLING,
    ) -> None:
        self._dynamodb = dynamodb
        self._backup = backup
        self._metrics = metrics
        self._restore_polling = restore_polling
        self._active_polling = active_polling

    # --- reads ----------------------------------------------------------------------------------
    def describe(self, table: str) -> TableState | None:
        """The table, or None when there is none by that name."""
        try:
            with self._metrics.call("dynamodb.DescribeTable"), translated("dynamodb.DescribeTable"):
                described = self._dynamodb.describe_table(TableName=table)["Table"]
        except StoreResourceMissingError:
            return None
        return TableState(described["TableName"], described["TableArn"], described["TableStatus"])

    def recovery_window(self, table: str) -> RecoveryWindow | None:
        """PITR's window of the table, or None when PITR is off (or, on DynamoDB Local, absent)."""
        absent = {"UnknownOperationException": _NoPitr}
        try:
            with (
                self._metrics.call("dynamodb.DescribeContinuousBackups"),
                translated("dynamodb.DescribeContinuousBackups", absent),
            ):
                described = self._dynamodb.describe_continuous_backups(TableName=table)["ContinuousBackupsDescription"]
        except _NoPitr:
            return None
        pitr = described.get("PointInTimeRecoveryDescription", {})
        if pitr.get("PointInTimeRecoveryStatus") != "ENABLED":
            return None
        return RecoveryWindow(pitr["EarliestRestorableDateTime"], pitr["LatestRestorableDateTime"])

    def recovery_points(self, table_arn: str) -> list[RecoveryPoint]:
        """The table's AWS Backup recovery points, in every vault of this region."""
        paginator = self._backup_client().get_paginator("list_recovery_points_by_resource")
        points = []
        with translated("backup.ListRecoveryPointsByResource"):
            for page in paginator.paginate(ResourceArn=table_arn):
                with self._metrics.call("backup.ListRecoveryPointsByResource"):
                    points += [
                        RecoveryPoint(
                            p["RecoveryPointArn"],
                            p["BackupVaultName"],
                            p["CreationDate"],
                            p.get("Status") == "COMPLETED",
                        )
                        for p in page.get("RecoveryPoints", [])
                    ]
        return points

    def newest_change(self, table: str, segments: int) -> datetime | None:
        """The newest `updatedAt` in the table (a parallel Scan of that attribute only)."""

        def segment(number: int) -> str | None:
            paginator = self._dynamodb.get_paginator("scan")
            pages = paginator.paginate(
                TableName=table,
                Segment=number,
                TotalSegments=segments,
                ProjectionExpression="#u",
                ExpressionAttributeNames={"#u": "updatedAt"},
            )
            newest: str | None = None
            with translated("dynamodb.Scan"):
                for page in pages:
                    values = [i["updatedAt"]["S"] for i in page.get("Items", []) if "S" in i.get("updatedAt", {})]
                    newest = max([newest or "", *values]) or None
            return newest

        with ThreadPoolExecutor(segments, thread_name_prefix="newest") as pool:
            found = [v for v in pool.map(segment, range(segments)) if v]
        return layout.parse_ts(max(found)) if found else None

    # --- restores -------------------------------------------------------------------------------
    def restore_to_point_in_time(self, source: str, target: str, when: datetime) -> None:
        with self._metrics.call("dynamodb.RestoreTableToPointInTime"), translated("dynamodb.RestoreTableToPointInTime"):
            self._dynamodb.restore_table_to_point_in_time(
                SourceTableName=source, TargetTableName=target, RestoreDateTime=when
            )
        logger.info("PITR restore started", extra={"source": source, "target": target, "restoreTime": when.isoformat()})

    def restore_backup(self, point: RecoveryPoint, role_arn: str, target: str) -> None:
        """Start a restore job of `point` into `target` and wait until it completed."""
        with self._metrics.call("backup.StartRestoreJob"), translated("backup.StartRestoreJob"):
            job = self._backup_client().start_restore_job(
                RecoveryPointArn=point.arn,
                IamRoleArn=role_arn,
                ResourceType="DynamoDB",
                Metadata={"targetTableName": target},
                # A retried drill asks for the same restore instead of starting a second one.
                IdempotencyToken=f"{target}@{point.arn.rsplit(':', 1)[-1]}"[:128],
            )["RestoreJobId"]
        logger.info("backup restore started", extra={"restoreJobId": job, "recoveryPoint": point.arn})
        for _ in self._restore_polling.checks():
            with self._metrics.call("backup.DescribeRestoreJob"), translated("backup.DescribeRestoreJob"):
                described = self._backup_client().describe_restore_job(RestoreJobId=job)
            status = described["Status"]
            logger.info(
                "restore job",
                extra={"restoreJobId": job, "status": status, "percentDone": described.get("PercentDone")},
            )
            if status == "COMPLETED":
                return
            if status in ("ABORTED", "FAILED"):
                raise RestoreFailedError(f"restore job {job} {status}: {described.get('StatusMessage', '')}")
        raise RestoreFailedError(f"restore job {job} still {status} after {self._restore_polling.timeout_s:.0f} s")

    def create_table(self, spec: TableSpec) -> None:
        """The table as the contract declares it (keys, status index, on demand), empty."""
        with self._metrics.call("dynamodb.CreateTable"), translated("dynamodb.CreateTable"):
            self._dynamodb.create_table(**create_table_request(spec))

    def wait_active(self, table: str, *, restoring: bool = False) -> TableState:
        """Wait for `table` to be ACTIVE: seconds for a new empty table, hours for a restore."""
        polling = self._restore_polling if restoring else self._active_polling
        for waited in polling.checks():
            state = self.describe(table)
            if state is not None and state.status == "ACTIVE":
                return state
            if restoring:  # hours on AWS: say so while it lasts
                logger.info(
                    "restore in progress",
                    extra={"table": table, "status": state and state.status, "waitedSeconds": waited},
                )
        raise RestoreFailedError(f"table {table} is not ACTIVE after {polling.timeout_s:.0f} s")

    def write_all(
        self, table: str, batches: Iterable[list[dict[str, Any]]], threads: int, done: Callable[[int], None]
    ) -> int:
        """Put every item (already DynamoDB JSON) into `table`; `done(n)` after each request."""

        def write(items: list[dict[str, Any]]) -> int:
            for start in range(0, len(items), BATCH_WRITE_LIMIT):
                chunk = items[start : start + BATCH_WRITE_LIMIT]
                self._write_chunk(table, chunk)
                done(len(chunk))
            return len(items)

        total = 0
        with ThreadPoolExecutor(threads, thread_name_prefix="restore") as pool:
            # At most two batches per thread in memory: an export is read as fast as it is written.
            pending: deque[Future[int]] = deque()
            for batch in batches:
                pending.append(pool.submit(write, batch))
                if len(pending) >= threads * 2:
                    total += pending.popleft().result()
            total += sum(f.result() for f in pending)
        return total

    def _write_chunk(self, table: str, chunk: list[dict[str, Any]]) -> None:
        request: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in chunk]}
        for attempt in range(BATCH_WRITE_RETRIES + 1):
            if attempt:
                time.sleep(random.uniform(0, BATCH_WRITE_BACKOFF * 2**attempt))
            with self._metrics.call("dynamodb.BatchWriteItem"), translated("dynamodb.BatchWriteItem"):
                response = self._dynamodb.batch_write_item(RequestItems=request)
            request = response.get("UnprocessedItems") or {}
            if not request:
                return
        left = len(request[table])
        raise StoreUnavailableError(
            f"dynamodb.BatchWriteItem: {left} item(s) still unprocessed after {BATCH_WRITE_RETRIES} retries",
            "UnprocessedItems",
        )

    def delete_table(self, table: str) -> None:
        with self._metrics.call("dynamodb.DeleteTable"), translated("dynamodb.DeleteTable"):
            self._dynamodb.delete_table(TableName=table)

    def delete_if_version(self, table: str, user_id: str, document_id: str, version: int) -> bool:
        """Delete a document's item while it is still `version`; False when it changed since."""
        key = {layout.PK_ATTR: layout.user_pk(user_id), layout.SK_ATTR: layout.document_sk(document_id)}
        lost = {"ConditionalCheckFailedException": StoreConditionFailedError}
        try:
            with self._metrics.call("dynamodb.DeleteItem"), translated("dynamodb.DeleteItem", lost):
                self._dynamodb.delete_item(
                    TableName=table,
                    Key=to_wire(key),
                    ConditionExpression="#v = :v",
                    ExpressionAttributeNames={"#v": "version"},
                    ExpressionAttributeValues={":v": {"N": str(version)}},
                )
        except StoreConditionFailedError:
            return False
        return True

    def _backup_client(self) -> BackupClient:
        if self._backup is None:
            raise RestoreFailedError("no AWS Backup client was given for a restore from a backup")
        return self._backup


class _NoPitr(StoreError):
    """Inside the adapter only: the endpoint has no continuous backups at all (DynamoDB Local)."""


def create_table_request(spec: TableSpec) -> dict[str, Any]:
    """CreateTable's request for `spec`: the same keys and status index as the live table."""
    return {
        "TableName": spec.name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in spec.string_attributes],
        "KeySchema": [
            {"AttributeName": spec.hash_key, "KeyType": "HASH"},
            {"AttributeName": spec.range_key, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": spec.index_name,
                "KeySchema": [
                    {"AttributeName": spec.index_hash_key, "KeyType": "HASH"},
                    {"AttributeName": spec.index_range_key, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": spec.index_projection},
            }
        ],
    }
