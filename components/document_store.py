"""DocumentStore: the single DynamoDB table of document summaries, its status index and stream.

The table shape (keys, index, projection, stream view, TTL attribute) comes from
jobs.contract.TableSpec, so the table AWS gets is the one the jobs and the local stack use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components._pulumi import child
from jobs.contract import TableSpec


@dataclass
class DocumentStoreArgs:
    spec: TableSpec
    kms_key_arn: pulumi.Input[str]
    protect: bool = True
    point_in_time_recovery_days: int = 35
    # A global table replica in the stack's second region (SecondRegion), with that region's key.
    replica_region: str | None = None
    replica_kms_key_arn: pulumi.Input[str] | None = None
    tags: dict[str, str] = field(default_factory=dict)


class DocumentStore(pulumi.ComponentResource):
    table_name: pulumi.Output[str]
    table_arn: pulumi.Output[str]
    stream_arn: pulumi.Output[str]
    index_name: str
    index_arn: pulumi.Output[str]

    def __init__(self, name: str, args: DocumentStoreArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:document_store:DocumentStore", name, None, opts)
        spec = args.spec
        table = aws.dynamodb.Table(
            f"{name}-table",
            name=spec.name,
            billing_mode="PAY_PER_REQUEST",
            hash_key=spec.hash_key,
            range_key=spec.range_key,
            attributes=[aws.dynamodb.TableAttributeArgs(name=attr, type="S") for attr in spec.string_attributes],
            global_secondary_indexes=[
                aws.dynamodb.TableGlobalSecondaryIndexArgs(
                    name=spec.index_name,
                    projection_type=spec.index_projection,
                    key_schemas=[
                        aws.dynamodb.TableGlobalSecondaryIndexKeySchemaArgs(
                            attribute_name=spec.index_hash_key, key_type="HASH"
                        ),
                        aws.dynamodb.TableGlobalSecondaryIndexKeySchemaArgs(
                            attribute_name=spec.index_range_key, key_type="RANGE"
                        ),
                    ],
                )
            ],
            stream_enabled=True,
            stream_view_type=spec.stream_view_type,
            point_in_time_recovery=aws.dynamodb.TablePointInTimeRecoveryArgs(
                enabled=True, recovery_period_in_days=args.point_in_time_recovery_days
            ),
            server_side_encryption=aws.dynamodb.TableServerSideEncryptionArgs(
                enabled=True, kms_key_arn=args.kms_key_arn
            ),
            ttl=aws.dynamodb.TableTtlArgs(attribute_name=spec.ttl_attribute, enabled=True),
            deletion_protection_enabled=True,
            replicas=_replicas(args),
            tags=args.tags,
            opts=child(self, protect=args.protect),
        )
        self.table_name = table.name
        self.table_arn = table.arn
        self.stream_arn = table.stream_arn
        self.index_name = spec.index_name
        self.index_arn = table.arn.apply(lambda arn: f"{arn}/index/{spec.index_name}")
        self.register_outputs(
            {
                "table_name": self.table_name,
                "table_arn": self.table_arn,
                "stream_arn": self.stream_arn,
                "index_name": self.index_name,
                "index_arn": self.index_arn,
            }
        )


def _replicas(args: DocumentStoreArgs) -> list[aws.dynamodb.TableReplicaArgs] | None:
    """The replica carries the table's protections: PITR, deletion protection, its region's CMK."""
    if args.replica_region is None:
        return None
    if args.replica_kms_key_arn is None:
        raise ValueError("a table replica needs its region's KMS key")
    return [
        aws.dynamodb.TableReplicaArgs(
            region_name=args.replica_region,
            kms_key_arn=args.replica_kms_key_arn,
            point_in_time_recovery=True,
            deletion_protection_enabled=True,
            propagate_tags=True,
        )
    ]
