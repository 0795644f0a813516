"""TableBackups: AWS Backup of the document table into a locked, KMS-encrypted vault, copied to the
second region when the stack names one.

Two rules, as the recovery targets ask: a daily backup kept `daily_retention_days` (30) and a
monthly one kept `monthly_retention_days` (365); each is copied, with the same lifetime, into a
vault in the second region. Every vault has its own customer managed key (a backup outlives a
mistake made with the data key) and a Vault Lock whose retention range is exactly the rules'
(AWS Backup refuses a recovery point whose lifecycle falls outside it, and nobody can delete one
early); a COMPLIANCE lock becomes immutable once its 3-day grace period ends. PITR (the table's
own continuous backup, `DocumentStore`) covers the last days to the second; these backups cover
the months beyond it and a lost region.

The backups are advanced DynamoDB backups (AWS Backup's own, the only kind it copies across
regions); accounts whose first vault predates November 2021 turn them on once per region
(docs/recovery.md).

A backup that did not happen is heard of: EventBridge rules on AWS Backup's own events
(docs.aws.amazon.com/aws-backup/latest/devguide/eventbridge.html) put a backup job of the table
that FAILED, was ABORTED or EXPIRED (never started in its window), a copy to the second region
that FAILED, a restore with the backup role (the drill's) that FAILED, and a recovery point in
the vault that turned EXPIRED (past its lifecycle but not deleted), PARTIAL or STOPPED on the
alert topic, each reshaped into a message naming the job and the command that describes it
(components.alerts.alert_target). Rules rather than the vault's SNS notifications: EventBridge
sees copy jobs and recovery points too, and an existing alert topic needs no policy for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components import policies, recovery_policies
from components._pulumi import child, json_document
from components.alerts import AlertMessage, alert_target, runbook_line
from components.encryption import DataKey, DataKeyArgs
from jobs.contract import layout

# The shortest grace period AWS Backup accepts before a COMPLIANCE lock can no longer be removed.
COMPLIANCE_GRACE_DAYS = 3
# How long AWS Backup may wait to start a job, and to finish it, before calling it failed.
START_WINDOW_MINUTES = 60
COMPLETION_WINDOW_MINUTES = 8 * 60
BACKUP_SOURCE = "aws.backup"
# A recovery point's statuses that mean it is not what the vault should hold (the API's
# RecoveryPointStatus): past its lifecycle but not deleted, incomplete, or a stopped backup.
BAD_RECOVERY_POINT = ["EXPIRED", "PARTIAL", "STOPPED"]


@dataclass
class TableBackupsArgs:
    stage: str
    region: str
    account_id: pulumi.Input[str]
    table_arn: pulumi.Input[str]
    table_key_arn: pulumi.Input[str]
    daily_schedule: str = "cron(0 3 * * ? *)"
    daily_retention_days: int = 30
    monthly_schedule: str = "cron(0 4 1 * ? *)"
    monthly_retention_days: int = 365
    vault_lock: str = "GOVERNANCE"
    schedule_timezone: str = "UTC"
    # The second region and the provider that manages it (components.replication.SecondRegion).
    replica_region: str | None = None
    replica_provider: pulumi.ProviderResource | None = None
    # The topic failed backup, copy and restore jobs and bad recovery points go to (None: none).
    alarm_topic_arn: pulumi.Input[str] | None = None
    protect: bool = True
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Vault:
    vault: aws.backup.Vault
    key: DataKey


class TableBackups(pulumi.ComponentResource):
    vault_name: pulumi.Output[str]
    vault_arn: pulumi.Output[str]
    copy_vault_arn: pulumi.Output[str] | None
    plan_id: pulumi.Output[str]
    role_arn: pulumi.Output[str]

    def __init__(self, name: str, args: TableBackupsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:backups:TableBackups", name, None, opts)
        if (args.replica_region is None) != (args.replica_provider is None):
            raise ValueError("a copy region needs the provider that manages it, and only then")
        if args.vault_lock not in ("GOVERNANCE", "COMPLIANCE"):
            raise ValueError(f"vault_lock must be GOVERNANCE or COMPLIANCE, not {args.vault_lock!r}")
        self._name = name
        self._args = args
        primary = self._vault(args.region, None)
        copies = self._vault(args.replica_region, args.replica_provider) if args.replica_region else None
        role, role_policy = self._role([v.key.key_arn for v in (primary, copies) if v])
        plan = aws.backup.Plan(
            f"{name}-plan",
            name=f"{layout.stage_prefix(args.stage)}-table",
            rules=[
                self._rule("daily", args.daily_schedule, args.daily_retention_days, primary, copies),
                self._rule("monthly", args.monthly_schedule, args.monthly_retention_days, primary, copies),
            ],
            tags=args.tags,
            opts=child(self),
        )
        aws.backup.Selection(
            f"{name}-table",
            name=f"{layout.stage_prefix(args.stage)}-table",
            plan_id=plan.id,
            iam_role_arn=role.arn,
            resources=[args.table_arn],
            # AWS Backup checks the role when the selection is created.
            opts=child(self, depends_on=[role_policy]),
        )
        if args.alarm_topic_arn is not None:
            self._failure_alerts(args.alarm_topic_arn, primary.vault, role.arn)
        self.vault_name = primary.vault.name
        self.vault_arn = primary.vault.arn
        self.copy_vault_arn = copies.vault.arn if copies else None
        self.plan_id = plan.id
        self.role_arn = role.arn
        self.register_outputs(
            {
                "vault_name": self.vault_name,
                "vault_arn": self.vault_arn,
                "copy_vault_arn": self.copy_vault_arn,
                "plan_id": self.plan_id,
                "role_arn": self.role_arn,
            }
        )

    def _failure_alerts(
        self, topic_arn: pulumi.Input[str], vault: aws.backup.Vault, role_arn: pulumi.Output[str]
    ) -> None:
        """One rule per kind of AWS Backup event that means a backup is missing, each on the topic."""
        stage = self._args.stage
        for kind, pattern in backup_failure_patterns(vault.name, vault.arn, role_arn).items():
            rule = aws.cloudwatch.EventRule(
                f"{self._name}-{kind}-failed",
                description=f"DocuFlow {stage}: {BACKUP_ALERTS[kind].what}",
                event_pattern=pattern,
                tags=self._args.tags,
                opts=child(self),
            )
            alert_target(self, f"{self._name}-{kind}-failed-alert", rule, topic_arn, backup_alert(stage, kind))

    def _vault(self, region: str, provider: pulumi.ProviderResource | None) -> _Vault:
        """A vault in `region` with its own key and a lock over the rules' retention range."""
        args, name = self._args, f"{self._name}-{region}"
        where = {"provider": provider} if provider else {}
        key = DataKey(
            f"{name}-key",
            DataKeyArgs(
                account_id=args.account_id,
                region=region,
                alias=f"{layout.backup_vault_name(args.stage, region)}",
                protect=args.protect,
                tags=args.tags,
            ),
            opts=child(self, **where),
        )
        vault = aws.backup.Vault(
            f"{name}-vault",
            name=layout.backup_vault_name(args.stage, region),
            kms_key_arn=key.key_arn,
            tags=args.tags,
            opts=child(self, protect=args.protect, **where),
        )
        aws.backup.VaultLockConfiguration(
            f"{name}-lock",
            backup_vault_name=vault.name,
            min_retention_days=args.daily_retention_days,
            max_retention_days=args.monthly_retention_days,
            # Without a grace period the lock is GOVERNANCE; with one, COMPLIANCE once it ends.
            changeable_for_days=COMPLIANCE_GRACE_DAYS if args.vault_lock == "COMPLIANCE" else None,
            opts=child(self, **where),
        )
        return _Vault(vault, key)

    def _role(self, vault_key_arns: list[pulumi.Output[str]]) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
        args, name = self._args, self._name
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=json_document(
                policies.assume_role_policy, service="backup.amazonaws.com", account_id=args.account_id
            ),
            tags=args.tags,
            opts=child(self),
        )
        policy = aws.iam.RolePolicy(
            f"{name}-role-policy",
            role=role.id,
            policy=json_document(
                recovery_policies.backup_role_policy,
                table_arn=args.table_arn,
                table_key_arn=args.table_key_arn,
                vault_key_arns=vault_key_arns,
            ),
            opts=child(self),
        )
        return role, policy

    def _rule(
        self, rule: str, schedule: str, days: int, primary: _Vault, copies: _Vault | None
    ) -> aws.backup.PlanRuleArgs:
        lifetime = aws.backup.PlanRuleLifecycleArgs(delete_after=days)
        copy_actions = (
            [
                aws.backup.PlanRuleCopyActionArgs(
                    destination_vault_arn=copies.vault.arn,
                    lifecycle=aws.backup.PlanRuleCopyActionLifecycleArgs(delete_after=days),
                )
            ]
            if copies
            else None
        )
        return aws.backup.PlanRuleArgs(
            rule_name=rule,
            target_vault_name=primary.vault.name,
            schedule=schedule,
            schedule_expression_timezone=self._args.schedule_timezone,
            start_window=START_WINDOW_MINUTES,
            completion_window=COMPLETION_WINDOW_MINUTES,
            lifecycle=lifetime,
            copy_actions=copy_actions,
            recovery_point_tags={**self._args.tags, "rule": rule},
        )


@dataclass(frozen=True)
class _BackupAlert:
    detail_type: str
    what: str  # the rule's description and the message's first line
    state: str  # the field its state is in: `state` for jobs, `status` for restores and points
    id_path: str
    command: str  # the AWS CLI that describes it, with <id>


BACKUP_ALERTS: dict[str, _BackupAlert] = {
    "backup-job": _BackupAlert(
        "Backup Job State Change",
        "a backup of the documents table failed, was aborted or expired before it started",
        "state",
        "$.detail.backupJobId",
        "aws backup describe-backup-job --backup-job-id <id> --region <region>",
    ),
    "copy-job": _BackupAlert(
        "Copy Job State Change",
        "a copy of a table backup to the second region failed",
        "state",
        "$.detail.copyJobId",
        "aws backup describe-copy-job --copy-job-id <id> --region <region>",
    ),
    "restore-job": _BackupAlert(
        "Restore Job State Change",
        "a restore from a table backup (the drill's) failed",
        "status",
        "$.detail.restoreJobId",
        "aws backup describe-restore-job --restore-job-id <id> --region <region>",
    ),
    "recovery-point": _BackupAlert(
        "Recovery Point State Change",
        "a recovery point of the table is expired but kept, partial or stopped",
        "status",
        "$.resources[0]",
        "aws backup describe-recovery-point --backup-vault-name <vault> --recovery-point-arn <id> --region <region>",
    ),
}


def backup_failure_patterns(
    vault_name: pulumi.Input[str], vault_arn: pulumi.Input[str], role_arn: pulumi.Input[str]
) -> dict[str, pulumi.Output[str]]:
    """Each kind's event pattern, narrowed to this stack's vault (jobs, points) or its backup
    role (restores: their failure events name no vault).
    """

    def pattern(kind: str, states: list[str], **narrow: list[str]) -> dict[str, object]:
        alert = BACKUP_ALERTS[kind]
        return {
            "source": [BACKUP_SOURCE],
            "detail-type": [alert.detail_type],
            "detail": {alert.state: states, **narrow},
        }

    return {
        "backup-job": json_document(
            lambda name: pattern("backup-job", ["FAILED", "ABORTED", "EXPIRED"], backupVaultName=[name]),
            name=vault_name,
        ),
        "copy-job": json_document(
            lambda arn: pattern("copy-job", ["FAILED"], sourceBackupVaultArn=[arn]), arn=vault_arn
        ),
        "restore-job": json_document(lambda arn: pattern("restore-job", ["FAILED"], iamRoleArn=[arn]), arn=role_arn),
        "recovery-point": json_document(
            lambda name: pattern("recovery-point", BAD_RECOVERY_POINT, backupVaultName=[name]), name=vault_name
        ),
    }


def backup_alert(stage: str, kind: str) -> AlertMessage:
    """What a person reads of a backup event: what happened, its state, AWS Backup's own words,
    the command that describes it, the runbook entry.
    """
    alert = BACKUP_ALERTS[kind]
    return AlertMessage(
        paths={
            "state": f"$.detail.{alert.state}",
            "id": alert.id_path,
            "vault": "$.detail.backupVaultName",
            "message": "$.detail.statusMessage",
            "region": "$.region",
            "time": "$.time",
        },
        lines=[
            f"DocuFlow {stage}: {alert.what} (<state>, at <time>).",
            "AWS Backup says: <message>",
            f"Look: {alert.command}",
            runbook_line("backup-failed"),
        ],
    )
