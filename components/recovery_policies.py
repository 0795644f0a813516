"""Pure IAM builders of the recovery service roles: AWS Backup's and S3 replication's.

Like every builder of the components, they take concrete ARNs and return a policy document, no
Pulumi. The drill's task role is the recovery job's own (jobs/recovery/policy.py), whose drill-table
grants the backup role shares.

- The backup role is what AWS Backup assumes to back the table up (advanced DynamoDB backups, the
  only kind AWS Backup copies to another region), to copy the recovery points into the second
  region's vault, and to restore one into a drill table.
- The replication role is what S3 assumes to replicate the data buckets into the second region,
  Object Lock retention and delete markers included, re-encrypting with the replica key.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.contract.iam import KMS_ENCRYPT, Policy, document, objects, statement
from jobs.recovery.policy import RESTORE_TARGET_ACCESS, drill_tables_arn, grant_for_aws

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
        grant_for_aws("GrantVaultKeys", vault_key_arns),
        statement("UseTableKey", KMS_ENCRYPT, [table_key_arn]),
        grant_for_aws("GrantTableKey", [table_key_arn]),
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
