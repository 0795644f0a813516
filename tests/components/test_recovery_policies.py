"""components.recovery_policies (the backup and replication roles) and jobs.recovery.policy (the drill's),
without Pulumi.
"""

from __future__ import annotations

from typing import Any

import pytest
from policy_sentry.querying.actions import get_actions_for_service

from components import recovery_policies as rp
from jobs.contract import layout
from jobs.recovery.policy import drill_tables_arn, drill_task_policy
from tests.components.iam_model import Permission, allowed
from tests.components.program import as_list, task_policy

ACCOUNT = "123456789012"
TABLE = f"arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/{layout.table_name('prod')}"
DRILL_TABLE = f"arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/{layout.drill_table_name('prod', '20261001T060000Z-ab12')}"
KEY, VAULT_KEY, COPY_KEY = (
    f"arn:aws:kms:{r}:{ACCOUNT}:key/{k}" for r, k in (("eu-west-1", "data"), ("eu-west-1", "v"), ("eu-central-1", "c"))
)
RAW, PROCESSED, REPORTS, AUDIT = (
    f"arn:aws:s3:::docuflow-prod-{p}" for p in ("raw", "processed", "reports", "audit-data")
)
BACKUP_ROLE = f"arn:aws:iam::{ACCOUNT}:role/docuflow-prod-backups-role"
WRITES = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")


def _drill(**extra: Any) -> dict[str, Any]:
    return task_policy(
        drill_task_policy,
        table_arn=TABLE,
        raw_bucket_arn=RAW,
        processed_bucket_arn=PROCESSED,
        reports_bucket_arn=REPORTS,
        key_arn=KEY,
        region="eu-west-1",
        account_id=ACCOUNT,
        backup_role_arn=BACKUP_ROLE,
        **extra,
    )


def test_drill_tables_are_the_layouts_drill_prefix() -> None:
    assert drill_tables_arn(TABLE) == f"arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/{layout.drill_table_prefix('prod')}*"
    assert DRILL_TABLE.startswith(drill_tables_arn(TABLE)[:-1])


def test_the_drill_may_write_drill_tables_but_never_the_live_table() -> None:
    policy = _drill()
    for action in (*WRITES, "dynamodb:CreateTable", "dynamodb:DeleteTable"):
        assert allowed(policy, Permission(action, DRILL_TABLE)), action
        assert not allowed(policy, Permission(action, TABLE)), action
    # On the live table it reads the recovery window and restores it (a restore reads its source).
    for action in (
        "dynamodb:DescribeContinuousBackups",
        "dynamodb:RestoreTableToPointInTime",
        "dynamodb:DescribeTable",
    ):
        assert allowed(policy, Permission(action, TABLE))
    assert not allowed(policy, Permission("dynamodb:Scan", TABLE))
    # Its report is write-once under runs/drill/, nothing else of the reports bucket.
    assert allowed(policy, Permission("s3:PutObject", f"{REPORTS}/{layout.drill_report_key('2026-10-01', 'r')}"))
    assert not allowed(policy, Permission("s3:PutObject", f"{REPORTS}/{layout.RECONCILIATION_PREFIX}x"))
    assert not allowed(policy, Permission("s3:PutObject", f"{RAW}/raw/u/d/f.pdf"))


def test_the_drill_passes_only_the_backup_role_and_only_to_aws_backup() -> None:
    (stmt,) = [s for s in _drill()["Statement"] if s["Sid"] == "PassBackupRole"]
    assert stmt["Resource"] == [BACKUP_ROLE]
    assert stmt["Condition"] == {"StringEquals": {"iam:PassedToService": "backup.amazonaws.com"}}


def test_the_drill_reads_exports_only_where_the_stack_keeps_them() -> None:
    assert not allowed(_drill(), Permission("s3:GetObject", f"{AUDIT}/{layout.DYNAMODB_EXPORTS_PREFIX}x"))
    with_exports = _drill(exports_bucket_arn=AUDIT)
    assert allowed(with_exports, Permission("s3:GetObject", f"{AUDIT}/{layout.DYNAMODB_EXPORTS_PREFIX}AWSDynamoDB/x"))
    assert not allowed(with_exports, Permission("s3:GetObject", f"{AUDIT}/{layout.INVENTORY_PREFIX}x"))
    assert allowed(
        with_exports,
        Permission("s3:ListBucket", AUDIT, (("s3:prefix", f"{layout.DYNAMODB_EXPORTS_PREFIX}AWSDynamoDB/"),)),
    )


def test_the_backup_role_backs_up_the_table_and_restores_only_into_drill_tables() -> None:
    policy = rp.backup_role_policy(table_arn=TABLE, table_key_arn=KEY, vault_key_arns=[VAULT_KEY, COPY_KEY])
    assert allowed(policy, Permission("dynamodb:StartAwsBackupJob", TABLE))
    assert allowed(policy, Permission("dynamodb:RestoreTableFromAwsBackup", DRILL_TABLE))
    assert not allowed(policy, Permission("dynamodb:RestoreTableFromAwsBackup", TABLE))
    for action in WRITES:
        assert not allowed(policy, Permission(action, TABLE)), action
    for key in (VAULT_KEY, COPY_KEY, KEY):
        assert allowed(policy, Permission("kms:GenerateDataKey", key))
    grants = [s for s in policy["Statement"] if "kms:CreateGrant" in s["Action"]]
    assert grants and all(s["Condition"] == {"Bool": {"kms:GrantIsForAWSResource": "true"}} for s in grants)


def test_the_replication_role_touches_only_the_named_pairs() -> None:
    pairs = [(RAW, f"{RAW}-eu-central-1"), (REPORTS, f"{REPORTS}-eu-central-1")]
    policy = rp.replication_role_policy(
        pairs=pairs,
        source_key_arn=KEY,
        replica_key_arn=COPY_KEY,
        source_region="eu-west-1",
        replica_region="eu-central-1",
    )
    assert allowed(policy, Permission("s3:GetObjectVersionForReplication", f"{RAW}/raw/u/d/a.pdf"))
    assert allowed(policy, Permission("s3:ReplicateObject", f"{RAW}-eu-central-1/raw/u/d/a.pdf"))
    assert allowed(policy, Permission("s3:ReplicateDelete", f"{REPORTS}-eu-central-1/runs/x"))
    assert not allowed(policy, Permission("s3:ReplicateObject", f"{PROCESSED}-eu-central-1/x"))
    assert not allowed(policy, Permission("s3:GetObjectVersionForReplication", f"{PROCESSED}/x"))
    via = (("kms:ViaService", "s3.eu-west-1.amazonaws.com"), ("kms:EncryptionContext:aws:s3:arn", RAW))
    assert allowed(policy, Permission("kms:Decrypt", KEY, via))
    assert not allowed(policy, Permission("kms:Decrypt", KEY, (("kms:ViaService", "s3.eu-west-1.amazonaws.com"),)))
    there = (
        ("kms:ViaService", "s3.eu-central-1.amazonaws.com"),
        ("kms:EncryptionContext:aws:s3:arn", f"{RAW}-eu-central-1/raw/k"),
    )
    assert allowed(policy, Permission("kms:Encrypt", COPY_KEY, there))
    assert not allowed(policy, Permission("kms:Encrypt", KEY, there))


@pytest.mark.parametrize(
    "policy",
    [
        _drill(exports_bucket_arn=AUDIT),
        rp.backup_role_policy(table_arn=TABLE, table_key_arn=KEY, vault_key_arns=[VAULT_KEY]),
        rp.replication_role_policy(
            pairs=[(RAW, f"{RAW}-x")],
            source_key_arn=KEY,
            replica_key_arn=COPY_KEY,
            source_region="a",
            replica_region="b",
        ),
    ],
)
def test_every_action_is_a_real_iam_action(policy: dict[str, Any]) -> None:
    for stmt in policy["Statement"]:
        for action in as_list(stmt["Action"]):
            service, _, _ = action.partition(":")
            assert action.lower() in {a.lower() for a in get_actions_for_service(service)}, action
