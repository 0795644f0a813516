"""DataKey: the stack's customer-managed KMS key (rotated yearly) for the table, buckets, queues,
logs and the alarm topic. One key keeps the key policy, and every role's kms statements, short.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document


@dataclass
class DataKeyArgs:
    account_id: pulumi.Input[str]
    region: str
    alias: str
    # Buckets whose event notifications S3 sends to a queue encrypted with this key.
    notifying_bucket_arns: list[str] = field(default_factory=list)
    # Buckets whose S3 Inventory reports are encrypted with this key.
    inventoried_bucket_arns: list[str] = field(default_factory=list)
    # The CloudTrail trail that encrypts its log files with this key (the access trail).
    trail_arn: pulumi.Input[str] | None = None
    protect: bool = True
    deletion_window_days: int = 30
    tags: dict[str, str] = field(default_factory=dict)


class DataKey(pulumi.ComponentResource):
    key_arn: pulumi.Output[str]
    key_id: pulumi.Output[str]
    alias_name: pulumi.Output[str]

    def __init__(self, name: str, args: DataKeyArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:encryption:DataKey", name, None, opts)
        key = aws.kms.Key(
            f"{name}-key",
            description=f"DocuFlow data key ({args.alias})",
            enable_key_rotation=True,
            deletion_window_in_days=args.deletion_window_days,
            policy=json_document(
                policies.data_key_policy,
                account_id=args.account_id,
                region=args.region,
                notifying_bucket_arns=args.notifying_bucket_arns,
                inventoried_bucket_arns=args.inventoried_bucket_arns,
                trail_arn=args.trail_arn,
            ),
            tags=args.tags,
            opts=child(self, protect=args.protect),
        )
        alias = aws.kms.Alias(
            f"{name}-alias",
            name=f"alias/{args.alias}",
            target_key_id=key.key_id,
            opts=child(self),
        )
        self.key_arn = key.arn
        self.key_id = key.key_id
        self.alias_name = alias.name
        self.register_outputs({"key_arn": self.key_arn, "key_id": self.key_id, "alias_name": self.alias_name})
