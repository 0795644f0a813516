"""The drill role grants exactly what the drill calls, plus what AWS does with its permissions.

The drill runs its scenario with jobs.store.call_recording on (see test_iam_matches_calls.py):
- from an export on the live local stack: the drill table created and loaded in batches, its
  newest change, the reconcile's scan and listings, the report, the table dropped;
- from PITR and from an AWS Backup recovery point with the DynamoDB and Backup clients under
  botocore's Stubber, since no emulator serves those calls (DynamoDB Local has no PITR, moto no
  restore jobs): the recorded requests are the ones the job would send to AWS.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.stub import ANY, Stubber

from jobs.contract import layout
from jobs.contract.metrics import namespace
from jobs.observability import CallMetrics
from jobs.recovery.drill import DrillOptions, DrillRun
from jobs.recovery.plan import Source
from jobs.recovery.policy import drill_tables_arn, drill_task_policy
from jobs.recovery.restore import Restore, RestoreRequest
from jobs.runtime.context import RunContext
from jobs.store import call_recording
from jobs.store.call_recording import Call
from jobs.store.clients import backup_client, dynamodb_client, s3_client
from jobs.store.polling import Polling
from jobs.store.restore import TableRestores
from jobs.store.s3 import Buckets
from tests.components.iam_model import Arns, Permission, allowed, permissions
from tests.components.program import task_policy
from tests.components.test_iam_matches_calls import ACCOUNT, KEY, REGION, assert_grants_exactly
from tests.jobs.recovery.recovery_helpers import export, processed_stage

ARNS = Arns(REGION, ACCOUNT)
BACKUP_ROLE = f"arn:aws:iam::{ACCOUNT}:role/docuflow-backups-role"
NO_WAIT = Polling(every_s=1.0, timeout_s=2.0, sleep=lambda _: None)


def _stubbed_restores(settings: Any) -> tuple[TableRestores, Stubber, Stubber]:
    dynamodb, backup = dynamodb_client(settings), backup_client(settings)
    restores = TableRestores(dynamodb, CallMetrics(), backup=backup, restore_polling=NO_WAIT, active_polling=NO_WAIT)
    return restores, Stubber(dynamodb), Stubber(backup)


def _pitr_calls(stack: Any) -> None:
    """A PITR restore as it goes on AWS: target absent, window read, restore, ACTIVE."""
    settings = stack.settings
    target = layout.drill_table_name(settings.stage, "pitr")
    now = datetime.now(UTC)
    restores, dynamo, _ = _stubbed_restores(settings)
    arn = ARNS.table(target)
    dynamo.add_client_error("describe_table", "ResourceNotFoundException")
    window = {"EarliestRestorableDateTime": now - timedelta(days=35), "LatestRestorableDateTime": now}
    dynamo.add_response(
        "describe_continuous_backups",
        {
            "ContinuousBackupsDescription": {
                "ContinuousBackupsStatus": "ENABLED",
                "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "ENABLED", **window},
            }
        },
    )
    dynamo.add_response("restore_table_to_point_in_time", {})
    dynamo.add_response("describe_table", {"Table": {"TableName": target, "TableArn": arn, "TableStatus": "ACTIVE"}})
    with dynamo:
        restore = Restore(settings, restores, Buckets(s3_client(settings), CallMetrics()))
        restore.execute(restore.resolve(RestoreRequest(Source.PITR, target, None), now))


def _backup_calls(stack: Any) -> None:
    """A restore from AWS Backup: target absent, the live table's ARN, its points, the job."""
    settings = stack.settings
    target = layout.drill_table_name(settings.stage, "backup")
    now = datetime.now(UTC)
    restores, dynamo, backup = _stubbed_restores(settings)
    live = {
        "TableName": settings.store.table_name,
        "TableArn": ARNS.table(settings.store.table_name),
        "TableStatus": "ACTIVE",
    }
    point = f"arn:aws:backup:{REGION}:{ACCOUNT}:recovery-point:0f1e2d3c"
    dynamo.add_client_error("describe_table", "ResourceNotFoundException")
    dynamo.add_response("describe_table", {"Table": live})
    dynamo.add_response("describe_table", {"Table": {**live, "TableName": target, "TableArn": ARNS.table(target)}})
    backup.add_response(
        "list_recovery_points_by_resource",
        {
            "RecoveryPoints": [
                {"RecoveryPointArn": point, "BackupVaultName": "v", "CreationDate": now, "Status": "COMPLETED"}
            ]
        },
        {"ResourceArn": ARNS.table(settings.store.table_name)},
    )
    backup.add_response(
        "start_restore_job",
        {"RestoreJobId": "j"},
        {
            "RecoveryPointArn": point,
            "IamRoleArn": BACKUP_ROLE,
            "ResourceType": "DynamoDB",
            "Metadata": ANY,
            "IdempotencyToken": ANY,
        },
    )
    backup.add_response("describe_restore_job", {"Status": "COMPLETED"})
    with dynamo, backup:
        restore = Restore(settings, restores, Buckets(s3_client(settings), CallMetrics()))
        request = RestoreRequest(Source.BACKUP, target, None, backup_role_arn=BACKUP_ROLE)
        restore.execute(restore.resolve(request, now), BACKUP_ROLE)


def drill_calls(stack: Any) -> list[Call]:
    processed_stage(stack, docs=6, seed=23)
    export(stack)
    context = RunContext("drill", stack.settings)
    with call_recording.recording() as calls:
        run = DrillRun(stack.settings, DrillOptions(source=Source.EXPORT, drop_after=True), context=context)
        outcome = run.execute()
        assert outcome.exit_code == 0 and outcome.report.itemCount > 0
        context.flush()  # the drill's RPO, RTO and verdict, as `python -m jobs drill` publishes them
        _pitr_calls(stack)
        _backup_calls(stack)
    return calls


def test_the_drill_role_grants_exactly_what_the_drill_calls(stack) -> None:
    settings = stack.settings
    needed = permissions(drill_calls(stack), ARNS)
    table = ARNS.table(settings.store.table_name)
    drills = drill_tables_arn(table)
    policy = task_policy(
        drill_task_policy,
        table_arn=table,
        raw_bucket_arn=f"arn:aws:s3:::{settings.store.raw_bucket}",
        processed_bucket_arn=f"arn:aws:s3:::{settings.store.processed_bucket}",
        reports_bucket_arn=f"arn:aws:s3:::{settings.store.reports_bucket}",
        key_arn=KEY,
        region=REGION,
        account_id=ACCOUNT,
        backup_role_arn=BACKUP_ROLE,
        exports_bucket_arn=f"arn:aws:s3:::{settings.reconcile.export_bucket}",
        metrics_namespace=namespace(settings.stage),
    )
    restore_writes = "a PITR restore writes its target with the caller's read and write permissions"
    aws_only = {
        ("kms:GenerateDataKey", KEY): "S3 generates a data key for the SSE-KMS report",
        ("kms:Decrypt", KEY): "S3 decrypts the SSE-KMS export files the drill reads",
        ("kms:CreateGrant", KEY): "DynamoDB grants itself the key of a table restored with the source's encryption",
        ("kms:DescribeKey", KEY): "DynamoDB checks the key of a table restored with the source's encryption",
        **{(a, drills): restore_writes for a in ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")},
        **{(a, drills): restore_writes for a in ("dynamodb:GetItem", "dynamodb:Query")},
    }
    assert_grants_exactly(policy, needed, aws_only, pending={})
    # What it called on the live table: reads only (its window, its ARN, PITR reading it).
    on_live = {p.action for p in needed if p.resource == table}
    assert on_live == {
        "dynamodb:DescribeContinuousBackups",
        "dynamodb:DescribeTable",
        "dynamodb:RestoreTableToPointInTime",
    }
    assert not allowed(policy, Permission("dynamodb:PutItem", table))
