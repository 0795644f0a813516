"""Pure IAM builders of the recovery roles: AWS Backup's service role, S3 replication's, the drill's.

Kept beside `policies` (whose building blocks they use) so each role's grants read in one place;
like every builder there, they take concrete ARNs and return a policy document, no Pulumi.

- The backup role is what AWS Backup assumes to back the table up (advanced DynamoDB backups, the
  only kind AWS Backup copies to another region), to copy the recovery points into the second
  region's vault, and to restore one into a drill table.
- The replication role is what S3 assumes to replicate the data buckets into the second region,
  Object Lock retention and delete markers included, re-encrypting with the replica key.
- The drill role restores the table into a new drill table (PITR, a backup, or an export through
  batched writes), reconciles that table against the buckets and writes its report once. It may
  write drill tables only: the live table is never a target (`layout.drill_table_prefix`).
"""

from __future__ import annotations

from collections.abc import Sequence

from components.policies import KMS_ENCRYPT, Policy, Statement, document, objects, publish_metrics, statement
from jobs.contract import layout

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
# S3 replication reads a source version with its ACL, tags, retention and legal hold, and writes
# the replica, its delete markers and tags (S3 user guide, "Setting up permissions for live
# replication"; Object Lock: "Configuring replication for buckets with Object Lock").
REPLICATION_SOURCE_READS = (
    "s3:GetObjectVersionForReplication",
    "s3:GetObjectVersionAcl",
    "s3:GetObjectVersionTagging",
    "s3:GetObjectRetention",
    "s3:GetObjectLegalHold",
)
REPLICATION_DESTINATION_WRITES = ("s3:ReplicateObject", "s3:ReplicateDelete", "s3:ReplicateTags")


def drill_tables_arn(table_arn: str) -> str:
    """Every drill table of the stack (`layout.drill_table_prefix`, as an ARN pattern)."""
    return f"{table_arn}{layout.DRILL_TABLE_INFIX}*"


def recovery_points_arn(region: str, account_id: str) -> str:
    """The recovery points AWS Backup keeps in this region (StartRestoreJob's resource)."""
    return f"arn:aws:backup:{region}:{account_id}:recovery-point:*"


def _grant_for_aws(sid: str, key_arns: Sequence[str]) -> Statement:
    return statement(sid, ["kms:CreateGrant", "kms:DescribeKey"], list(key_arns), condition=KMS_GRANT_FOR_AWS)


def backup_role_policy(*, table_arn: str, table_key_arn: str, vault_key_arns: Sequence[str]) -> Policy:
    """AWS Backup's service role: back the table up, copy to the second region, restore drills.

    Advanced DynamoDB backups are taken with StartAwsBackupJob and encrypted with the vault's key
    (one per region's vault); a restore creates a drill table (encrypted with the table's key)
    and writes it with this role's permissions.
    """
    drills = drill_tables_arn(table_arn)
    return document(
        statement(
            "BackUpTable",
            ["dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:StartAwsBackupJob"],
            [table_arn],
        ),
        statement(
            "RestoreIntoDrillTables",
            ["dynamodb:DescribeTable", "dynamodb:RestoreTableFromAwsBackup", *RESTORE_TARGET_ACCESS],
            [drills],
        ),
        statement("UseVaultKeys", KMS_ENCRYPT, list(vault_key_arns)),
        _grant_for_aws("GrantVaultKeys", vault_key_arns),
        statement("UseTableKey", KMS_ENCRYPT, [table_key_arn]),
        _grant_for_aws("GrantTableKey", [table_key_arn]),
    )


def replication_role_policy(
    *,
    pairs: Sequence[tuple[str, str]],
    source_key_arn: str,
    replica_key_arn: str,
    source_region: str,
    replica_region: str,
) -> Policy:
    """S3 replication from each (source bucket, replica bucket) pair, SSE-KMS on both sides.

    S3 decrypts a source version with the source key and encrypts the replica with the replica
    key, each only through S3 in its region and for these buckets (the encryption context is the
    bucket's ARN with a bucket key, the object's without).
    """
    sources = [source for source, _ in pairs]
    replicas = [replica for _, replica in pairs]

    def context(buckets: Sequence[str], region: str) -> dict[str, dict[str, object]]:
        return {
            "StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"},
            "StringLike": {"kms:EncryptionContext:aws:s3:arn": [*buckets, *(objects(b) for b in buckets)]},
        }

    return document(
        statement("ReadReplicationConfiguration", ["s3:GetReplicationConfiguration", "s3:ListBucket"], sources),
        statement("ReadSourceVersions", REPLICATION_SOURCE_READS, [objects(b) for b in sources]),
        statement("WriteReplicas", REPLICATION_DESTINATION_WRITES, [objects(b) for b in replicas]),
        statement("DecryptSources", ["kms:Decrypt"], [source_key_arn], condition=context(sources, source_region)),
        statement(
            "EncryptReplicas",
            ["kms:Encrypt", "kms:GenerateDataKey"],
            [replica_key_arn],
            condition=context(replicas, replica_region),
        ),
    )


def drill_task_policy(
    *,
    table_arn: str,
    raw_bucket_arn: str,
    processed_bucket_arn: str,
    reports_bucket_arn: str,
    key_arn: str,
    region: str,
    account_id: str,
    backup_role_arn: str,
    exports_bucket_arn: str | None = None,
    metrics_namespace: str | None = None,
) -> Policy:
    """The restore drill: restore into a drill table, reconcile it, write the report once.

    From PITR it reads the live table's recovery window and restores it (the only calls on the
    live table); from AWS Backup it finds the table's recovery points and starts a restore job
    run by the backup role; from an export (`exports_bucket_arn`: the Athena engine's exports)
    it reads the export files. The reconcile lists both data buckets (a live run without
    --deep reads no object). DynamoDB creates grants on the stack's key for a table restored from
    PITR, which keeps the source's encryption. It publishes the drill's RPO, RTO and verdict
    (jobs.runtime, in the stage's namespace).
    """
    drills = drill_tables_arn(table_arn)
    statements = [
        statement(
            "ReadRecoveryWindow",
            ["dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTable", "dynamodb:RestoreTableToPointInTime"],
            [table_arn],
        ),
        statement("DrillTables", DRILL_TABLE_CALLS, [drills]),
        statement("RestoreWritesDrillTables", RESTORE_TARGET_ACCESS, [drills]),
        # ListRecoveryPointsByResource and DescribeRestoreJob have no resource type in IAM.
        statement("FindBackups", ["backup:DescribeRestoreJob", "backup:ListRecoveryPointsByResource"], "*"),
        statement("RestoreBackups", ["backup:StartRestoreJob"], [recovery_points_arn(region, account_id)]),
        statement(
            "PassBackupRole",
            ["iam:PassRole"],
            [backup_role_arn],
            condition={"StringEquals": {"iam:PassedToService": "backup.amazonaws.com"}},
        ),
        statement("ListDataBuckets", ["s3:ListBucket"], [raw_bucket_arn, processed_bucket_arn]),
        statement("WriteDrillReport", ["s3:PutObject"], [objects(reports_bucket_arn, layout.DRILL_RUNS_PREFIX)]),
        statement("UseDataKey", KMS_ENCRYPT, [key_arn]),
        _grant_for_aws("GrantTableKey", [key_arn]),
        *publish_metrics(metrics_namespace),
    ]
    if exports_bucket_arn is not None:
        statements += [
            statement("ReadExports", ["s3:GetObject"], [objects(exports_bucket_arn, layout.DYNAMODB_EXPORTS_PREFIX)]),
            statement(
                "ListExports",
                ["s3:ListBucket"],
                [exports_bucket_arn],
                condition={"StringLike": {"s3:prefix": [f"{layout.DYNAMODB_EXPORTS_PREFIX}*"]}},
            ),
        ]
    return document(*statements)
