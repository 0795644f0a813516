"""ReportSigningKey: the asymmetric KMS key that signs every reconcile report's summary.json and
every monthly evidence pack (jobs/reconcile/report/provenance.py, jobs/reports/).

ECC_NIST_P256 for SIGN_VERIFY (ECDSA_SHA_256: small signatures, and the public key can be given
to an auditor to verify offline). The key policy is the whole grant (no IAM statement needed):
the account administers the key but nobody may schedule its deletion with less than the full
30-day window; only the reconcile and repair task roles may kms:Sign; anyone in
the account may kms:Verify and read the public key. The jobs name it by its ARN (`key_arn`,
handed to the task definitions once the key exists: its policy names their roles, so the
program defers it, `__main__.py`), never by the alias: an alias is a name anyone allowed
kms:UpdateAlias may point elsewhere, not an identity. Every signature records the key ARN that
made it, and `reports verify` accepts only the configured key ARN (and refuses an alias). The
key's spec, usage and alias are declared once in jobs.contract.signing, which the local stack's
bootstrap reads too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document
from jobs.contract.signing import DELETION_WINDOW_DAYS, KEY_SPEC, signing_key_alias, signing_key_spec

__all__ = ["DELETION_WINDOW_DAYS", "KEY_SPEC", "ReportSigningKey", "ReportSigningKeyArgs", "signing_key_alias"]


def report_signing_key_policy(account_id: str, signer_role_arns: Sequence[str]) -> dict[str, Any]:
    root = {"AWS": f"arn:aws:iam::{account_id}:root"}
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AccountAdministers",
                "Effect": "Allow",
                "Principal": root,
                "Action": list(policies.KMS_ACCOUNT_ACTIONS),
                "Resource": "*",
            },
            {
                "Sid": "NoEarlyDeletion",
                "Effect": "Deny",
                "Principal": {"AWS": "*"},
                "Action": "kms:ScheduleKeyDeletion",
                "Resource": "*",
                "Condition": {
                    "NumericLessThan": {"kms:ScheduleKeyDeletionPendingWindowInDays": str(DELETION_WINDOW_DAYS)}
                },
            },
            {
                "Sid": "ReconcileSigns",
                "Effect": "Allow",
                "Principal": {"AWS": list(signer_role_arns)},
                "Action": ["kms:Sign", "kms:GetPublicKey", "kms:DescribeKey"],
                "Resource": "*",
            },
            {
                "Sid": "AccountVerifies",
                "Effect": "Allow",
                "Principal": root,
                "Action": ["kms:Verify", "kms:GetPublicKey", "kms:DescribeKey"],
                "Resource": "*",
            },
        ],
    }


@dataclass
class ReportSigningKeyArgs:
    account_id: pulumi.Input[str]
    stage: str
    # The task roles that sign reports and packs (the reconcile and its repair).
    signer_role_arns: list[pulumi.Input[str]]
    deletion_window_in_days: int = DELETION_WINDOW_DAYS
    protect: bool = True
    tags: dict[str, str] = field(default_factory=dict)


class ReportSigningKey(pulumi.ComponentResource):
    key_arn: pulumi.Output[str]
    alias_name: pulumi.Output[str]

    def __init__(self, name: str, args: ReportSigningKeyArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:reports:ReportSigningKey", name, None, opts)
        if args.deletion_window_in_days < DELETION_WINDOW_DAYS:
            raise ValueError(f"the report signing key keeps the full {DELETION_WINDOW_DAYS}-day deletion window")
        spec = signing_key_spec(args.stage)  # the local stack's bootstrap creates the same key
        key = aws.kms.Key(
            f"{name}-key",
            description=spec.description,
            customer_master_key_spec=spec.key_spec,
            key_usage=spec.key_usage,
            deletion_window_in_days=args.deletion_window_in_days,
            policy=json_document(
                report_signing_key_policy,
                account_id=args.account_id,
                signer_role_arns=pulumi.Output.all(*args.signer_role_arns),
            ),
            tags=args.tags,
            opts=child(self, protect=args.protect),
        )
        alias = aws.kms.Alias(f"{name}-alias", name=spec.alias, target_key_id=key.key_id, opts=child(self))
        self.key_arn = key.arn
        self.alias_name = alias.name
        self.register_outputs({"key_arn": self.key_arn, "alias_name": self.alias_name})
