"""The restore drill's role (registry task `drill`), and the drill tables' grants AWS Backup's own
role shares (components/recovery_policies.py).

The drill restores the table into a new drill table (PITR, a backup, or an export through
batched writes), reconciles that table against the buckets and writes its report once. It may
write drill tables only: the live table is never a target (`layout.drill_table_prefix`).
Pure: built from the stack's TaskResources (jobs.contract.iam), no Pulumi, no boto3.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.contract import layout
from jobs.contract.iam import (
    KMS_ENCRYPT,
    Policy,
    Statement,
    TaskResources,
    document,
    objects,
    publish_metrics,
    statement,
)

# What a restore writes into its target table, with the caller's permissions ("Using IAM with
# DynamoDB backup and restore": read and write permissions on the target table are necessary).
RESTORE_TARGET_ACCESS = (
    "dynamodb:BatchWriteItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:UpdateItem",
)
# The drill's own calls on its tables: create one (a restore from an export), wait for it, load it
# in batches, scan it (reconcile, the newest change), drop it.
DRILL_TABLE_CALLS = (
    "dynamodb:BatchWriteItem",
    "dynamodb:CreateTable",
    "dynamodb:DeleteTable",
    "dynamodb:DescribeTable",
    "dynamodb:Scan",
)
# AWS Backup and DynamoDB create grants on a customer managed key for the resource they build.
KMS_GRANT_FOR_AWS = {"Bool": {"kms:GrantIsForAWSResource": "true"}}


def drill_tables_arn(table_arn: str) -> str:
    """Every drill table of the stack (`layout.drill_table_prefix`, as an ARN pattern)."""
    return f"{table_arn}{layout.DRILL_TABLE_INFIX}*"


def recovery_points_arn(region: str, account_id: str) -> str:
    """The recovery points AWS Backup keeps in this region (StartRestoreJob's resource)."""
    return f"arn:aws:backup:{region}:{account_id}:recovery-point:*"


def grant_for_aws(sid: str, key_arns: Sequence[str]) -> Statement:
    return statement(sid, ["kms:CreateGrant", "kms:DescribeKey"], list(key_arns), condition=KMS_GRANT_FOR_AWS)


def drill_task_policy(resources: TaskResources) -> Policy:
    """The restore drill: restore into a drill table, reconcile it, write the report once.

    From PITR it reads the live table's recovery window and restores it (the only calls on the
    live table); from AWS Backup it finds the table's recovery points and starts a restore job
    run by the backup role; from an export (`exports_bucket_arn`: the Athena engine's exports)
    it reads the export files. The reconcile lists both data buckets (a live run without
    --deep reads no object). DynamoDB creates grants on the stack's key for a table restored from
    PITR, which keeps the source's encryption. It publishes the drill's RPO, RTO and verdict
    (jobs.runtime, in the stage's namespace).
    """
    r = resources
    drills = drill_tables_arn(r.table_arn)
    statements = [
        statement(
            "ReadRecoveryWindow",
            ["dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTable", "dynamodb:RestoreTableToPointInTime"],
            [r.table_arn],
        ),
        statement("DrillTables", DRILL_TABLE_CALLS, [drills]),
        statement("RestoreWritesDrillTables", RESTORE_TARGET_ACCESS, [drills]),
        # ListRecoveryPointsByResource and DescribeRestoreJob have no resource type in IAM.
        statement("FindBackups", ["backup:DescribeRestoreJob", "backup:ListRecoveryPointsByResource"], "*"),
        statement("RestoreBackups", ["backup:StartRestoreJob"], [recovery_points_arn(r.region, r.account_id)]),
        statement(
            "PassBackupRole",
            ["iam:PassRole"],
            [r.backup_role_arn],
            condition={"StringEquals": {"iam:PassedToService": "backup.amazonaws.com"}},
        ),
        statement("ListDataBuckets", ["s3:ListBucket"], [r.raw_bucket_arn, r.processed_bucket_arn]),
        statement("WriteDrillReport", ["s3:PutObject"], [objects(r.reports_bucket_arn, layout.DRILL_RUNS_PREFIX)]),
        statement("UseDataKey", KMS_ENCRYPT, [r.key_arn]),
        grant_for_aws("GrantTableKey", [r.key_arn]),
        *publish_metrics(r.metrics_namespace),
    ]
    if r.exports_bucket_arn is not None:
        exports = r.exports_bucket_arn
        statements += [
            statement("ReadExports", ["s3:GetObject"], [objects(exports, layout.DYNAMODB_EXPORTS_PREFIX)]),
            statement(
                "ListExports",
                ["s3:ListBucket"],
                [exports],
                condition={"StringLike": {"s3:prefix": [f"{layout.DYNAMODB_EXPORTS_PREFIX}*"]}},
            ),
        ]
    return document(*statements)
