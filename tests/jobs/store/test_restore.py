"""The restore adapter's AWS-only paths against botocore's Stubber: PITR and AWS Backup restores.

No emulator serves them: DynamoDB Local has no point-in-time recovery (DescribeContinuousBackups
is an unknown operation there) and moto's server has no AWS Backup restore jobs. The Stubber
checks each request's parameters against the service model and answers like the service; the
local drill tests (tests/jobs/recovery) cover the export path on the real engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from jobs.contract import layout
from jobs.errors import RestoreFailedError, RestoreRequestError
from jobs.observability import CallMetrics
from jobs.recovery.plan import Source
from jobs.recovery.restore import Restore, RestoreRequest
from jobs.settings import JobSettings
from jobs.store.polling import Polling
from jobs.store.restore import TableRestores
from jobs.store.s3 import Buckets

SETTINGS = JobSettings(stage="prod")
LIVE = SETTINGS.store.table_name
LIVE_ARN = f"arn:aws:dynamodb:eu-west-1:123456789012:table/{LIVE}"
TARGET = layout.drill_table_name("prod", "20261001t060000z-ab12")
ROLE = "arn:aws:iam::123456789012:role/docuflow-prod-backups-role"
NOW = datetime(2026, 10, 1, 6, 0, tzinfo=UTC)
EARLIEST, LATEST = NOW - timedelta(days=35), NOW - timedelta(minutes=5)
NO_WAIT = Polling(every_s=1.0, timeout_s=3.0, sleep=lambda _: None)


@pytest.fixture
def clients() -> Iterator[tuple[Stubber, Stubber]]:
    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="eu-west-1")
    dynamodb, backup = session.client("dynamodb"), session.client("backup")
    with Stubber(dynamodb) as dynamo_stub, Stubber(backup) as backup_stub:
        yield dynamo_stub, backup_stub
        dynamo_stub.assert_no_pending_responses()
        backup_stub.assert_no_pending_responses()


def _restore(clients: tuple[Stubber, Stubber]) -> Restore:
    dynamo_stub, backup_stub = clients
    restores = TableRestores(
        dynamo_stub.client, CallMetrics(), backup=backup_stub.client, restore_polling=NO_WAIT, active_polling=NO_WAIT
    )
    s3 = boto3.client("s3", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    return Restore(SETTINGS, restores, Buckets(s3, CallMetrics()))


def _table(name: str, status: str = "ACTIVE") -> dict[str, Any]:
    return {
        "Table": {
            "TableName": name,
            "TableArn": f"arn:aws:dynamodb:eu-west-1:123456789012:table/{name}",
            "TableStatus": status,
        }
    }


def _missing(stub: Stubber, name: str) -> None:
    stub.add_client_error("describe_table", "ResourceNotFoundException", expected_params={"TableName": name})


def _window(stub: Stubber, status: str = "ENABLED") -> None:
    pitr: dict[str, Any] = {"PointInTimeRecoveryStatus": status}
    if status == "ENABLED":
        pitr |= {"EarliestRestorableDateTime": EARLIEST, "LatestRestorableDateTime": LATEST}
    stub.add_response(
        "describe_continuous_backups",
        {
            "ContinuousBackupsDescription": {
                "ContinuousBackupsStatus": "ENABLED",
                "PointInTimeRecoveryDescription": pitr,
            }
        },
        {"TableName": LIVE},
    )


def test_pitr_restores_the_second_asked_for_into_the_new_table_and_waits_for_it(clients) -> None:
    dynamo_stub, _ = clients
    asked = NOW - timedelta(days=2, minutes=17)
    _missing(dynamo_stub, TARGET)
    _window(dynamo_stub)
    dynamo_stub.add_response(
        "restore_table_to_point_in_time",
        {"TableDescription": {"TableName": TARGET}},
        {"SourceTableName": LIVE, "TargetTableName": TARGET, "RestoreDateTime": asked},
    )
    dynamo_stub.add_response("describe_table", _table(TARGET, "CREATING"), {"TableName": TARGET})
    dynamo_stub.add_response("describe_table", _table(TARGET), {"TableName": TARGET})
    restore = _restore(clients)
    plan = restore.resolve(RestoreRequest(Source.PITR, TARGET, asked), NOW)
    assert (plan.source, plan.restore_point, plan.reference) == (Source.PITR, asked, LIVE)
    restore.execute(plan)
    assert restore.created


def test_pitr_without_a_time_restores_the_latest_restorable(clients) -> None:
    dynamo_stub, _ = clients
    _missing(dynamo_stub, TARGET)
    _window(dynamo_stub)
    assert _restore(clients).resolve(RestoreRequest(Source.PITR, TARGET, None), NOW).restore_point == LATEST


@pytest.mark.parametrize(
    ("as_of", "status", "message"),
    [
        (EARLIEST - timedelta(seconds=1), "ENABLED", "outside the PITR window"),
        (LATEST + timedelta(seconds=1), "ENABLED", "outside the PITR window"),
        (None, "DISABLED", "has no point-in-time recovery"),
    ],
)
def test_pitr_refuses_a_time_outside_its_window_before_creating_anything(clients, as_of, status, message) -> None:
    dynamo_stub, _ = clients
    _missing(dynamo_stub, TARGET)
    _window(dynamo_stub, status)
    with pytest.raises(RestoreRequestError, match=message):
        _restore(clients).resolve(RestoreRequest(Source.PITR, TARGET, as_of), NOW)
    # No RestoreTableToPointInTime was stubbed: the Stubber would have failed on it.


def _points(stub: Stubber, *created: tuple[datetime, str]) -> None:
    stub.add_response(
        "list_recovery_points_by_resource",
        {
            "RecoveryPoints": [
                {
                    "RecoveryPointArn": f"arn:aws:backup:eu-west-1:123456789012:recovery-point:{when:%Y%m%d}",
                    "BackupVaultName": "docuflow-prod-backups-eu-west-1",
                    "CreationDate": when,
                    "Status": status,
                }
                for when, status in created
            ]
        },
        {"ResourceArn": LIVE_ARN},
    )


def test_backup_restores_the_newest_completed_point_before_the_time_with_the_backup_role(clients) -> None:
    dynamo_stub, backup_stub = clients
    monthly, daily, failed = NOW - timedelta(days=40), NOW - timedelta(days=3), NOW - timedelta(days=2)
    _missing(dynamo_stub, TARGET)
    dynamo_stub.add_response("describe_table", _table(LIVE), {"TableName": LIVE})
    _points(backup_stub, (monthly, "COMPLETED"), (daily, "COMPLETED"), (failed, "EXPIRED"))
    chosen = f"arn:aws:backup:eu-west-1:123456789012:recovery-point:{daily:%Y%m%d}"
    backup_stub.add_response(
        "start_restore_job",
        {"RestoreJobId": "job-1"},
        {
            "RecoveryPointArn": chosen,
            "IamRoleArn": ROLE,
            "ResourceType": "DynamoDB",
            "Metadata": {"targetTableName": TARGET},
            "IdempotencyToken": ANY,
        },
    )
    backup_stub.add_response("describe_restore_job", {"Status": "RUNNING"}, {"RestoreJobId": "job-1"})
    backup_stub.add_response("describe_restore_job", {"Status": "COMPLETED"}, {"RestoreJobId": "job-1"})
    dynamo_stub.add_response("describe_table", _table(TARGET), {"TableName": TARGET})
    restore = _restore(clients)
    plan = restore.resolve(RestoreRequest(Source.BACKUP, TARGET, NOW - timedelta(days=1), backup_role_arn=ROLE), NOW)
    assert (plan.source, plan.restore_point, plan.reference) == (Source.BACKUP, daily, chosen)
    restore.execute(plan, ROLE)


def test_backup_before_the_oldest_point_is_refused(clients) -> None:
    dynamo_stub, backup_stub = clients
    _missing(dynamo_stub, TARGET)
    dynamo_stub.add_response("describe_table", _table(LIVE), {"TableName": LIVE})
    _points(backup_stub, (NOW - timedelta(days=3), "COMPLETED"))
    with pytest.raises(RestoreRequestError, match=r"no recovery point of .* at or before"):
        _restore(clients).resolve(
            RestoreRequest(Source.BACKUP, TARGET, NOW - timedelta(days=400), backup_role_arn=ROLE), NOW
        )


def test_a_failed_restore_job_is_a_restore_failure(clients) -> None:
    dynamo_stub, backup_stub = clients
    _missing(dynamo_stub, TARGET)
    dynamo_stub.add_response("describe_table", _table(LIVE), {"TableName": LIVE})
    _points(backup_stub, (NOW - timedelta(days=1), "COMPLETED"))
    backup_stub.add_response("start_restore_job", {"RestoreJobId": "job-2"})
    backup_stub.add_response(
        "describe_restore_job",
        {"Status": "FAILED", "StatusMessage": "Access denied to KMS key"},
        {"RestoreJobId": "job-2"},
    )
    restore = _restore(clients)
    plan = restore.resolve(RestoreRequest(Source.BACKUP, TARGET, None, backup_role_arn=ROLE), NOW)
    with pytest.raises(RestoreFailedError, match="job-2 FAILED: Access denied to KMS key"):
        restore.execute(plan, ROLE)
    assert restore.created  # the drill drops what a failed job may have left
