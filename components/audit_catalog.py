"""AuditCatalog: what the nightly reconcile reads besides the table, and Amazon Athena's catalog.

Daily S3 Inventory configurations (Parquet, current versions, the fields components.catalog
lists) report the raw and processed buckets into the audit-data bucket (DocumentBuckets owns it
and its delivery policy), for every engine: the nightly run judges the newest reports against the
table it keeps. With `docuflow:reconcileEngine: athena` the component also declares a Glue
database with one table per inventory (partition projection on `dt`), one over the full exports
and one over the incremental exports (an injected `export_id`), the Iceberg table the nightly run
merges them into, and an Athena workgroup with an enforced configuration: results under the
reports bucket's Athena prefix, encrypted with the stack's key, and a cutoff on the bytes one
query may scan. The reconcile and repair roles then get exactly what the engine needs
(jobs.contract.iam.CatalogArns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

import pulumi
import pulumi_aws as aws

from components import catalog
from components._pulumi import child
from jobs.contract import layout
from jobs.contract.iam import CatalogArns

ATHENA_ENGINE_VERSION = "Athena engine version 3"


@dataclass
class AuditCatalogArgs:
    stage: str
    region: str
    account_id: pulumi.Input[str]
    # Purpose ("raw", "processed") → bucket name, for the buckets that are inventoried.
    source_buckets: Mapping[str, str]
    audit_bucket_name: str
    audit_bucket_arn: pulumi.Input[str]
    reports_bucket_name: str
    kms_key_arn: pulumi.Input[str]
    bytes_scanned_cutoff: int
    # The Athena engine: the Glue catalog and the workgroup too (else the inventories only).
    athena: bool = True
    tags: dict[str, str] = field(default_factory=dict)


def glue_table(
    parent: pulumi.Resource,
    resource_name: str,
    database_name: pulumi.Input[str],
    table: catalog.GlueTable,
    *,
    location: pulumi.Input[str] | None = None,
    parameters: pulumi.Input[dict[str, str]] | None = None,
) -> aws.glue.CatalogTable:
    """One table as components.catalog defines it (`location`/`parameters` override the
    definition's when they depend on an Output, such as the account). An Iceberg one is created
    through Glue's open table format input, which writes its first metadata at the location.
    """
    columns = [aws.glue.CatalogTableStorageDescriptorColumnArgs(name=n, type=t) for n, t in table.columns]
    location = location if location is not None else table.location
    if table.iceberg:
        storage = aws.glue.CatalogTableStorageDescriptorArgs(location=location, columns=columns)
        iceberg = aws.glue.CatalogTableOpenTableFormatInputArgs(
            iceberg_input=aws.glue.CatalogTableOpenTableFormatInputIcebergInputArgs(
                metadata_operation="CREATE", version="2"
            )
        )
    else:
        storage = aws.glue.CatalogTableStorageDescriptorArgs(
            location=location,
            input_format=table.input_format,
            output_format=table.output_format,
            ser_de_info=aws.glue.CatalogTableStorageDescriptorSerDeInfoArgs(serialization_library=table.serde),
            columns=columns,
        )
        iceberg = None
    return aws.glue.CatalogTable(
        resource_name,
        name=table.name,
        database_name=database_name,
        table_type="EXTERNAL_TABLE",
        parameters=parameters if parameters is not None else table.parameters,
        partition_keys=[aws.glue.CatalogTablePartitionKeyArgs(name=n, type=t) for n, t in table.partition_keys],
        storage_descriptor=storage,
        open_table_format_input=iceberg,
        opts=child(parent),
    )


def athena_workgroup(
    parent: pulumi.Resource,
    resource_name: str,
    *,
    name: str,
    description: str,
    results: str,
    kms_key_arn: pulumi.Input[str],
    bytes_scanned_cutoff: int,
    tags: dict[str, str],
) -> aws.athena.Workgroup:
    """A workgroup with an enforced configuration: every query's results KMS-encrypted at
    `results`, and none may scan more than the cutoff.
    """
    encryption = aws.athena.WorkgroupConfigurationResultConfigurationEncryptionConfigurationArgs
    return aws.athena.Workgroup(
        resource_name,
        name=name,
        description=description,
        state="ENABLED",
        configuration=aws.athena.WorkgroupConfigurationArgs(
            enforce_workgroup_configuration=True,
            publish_cloudwatch_metrics_enabled=True,
            bytes_scanned_cutoff_per_query=bytes_scanned_cutoff,
            engine_version=aws.athena.WorkgroupConfigurationEngineVersionArgs(
                selected_engine_version=ATHENA_ENGINE_VERSION
            ),
            result_configuration=aws.athena.WorkgroupConfigurationResultConfigurationArgs(
                output_location=results,
                encryption_configuration=encryption(encryption_option="SSE_KMS", kms_key_arn=kms_key_arn),
            ),
        ),
        tags=tags,
        opts=child(parent),
    )


class AuditCatalog(pulumi.ComponentResource):
    database_name: pulumi.Output[str] | None
    workgroup_name: pulumi.Output[str] | None
    grants: pulumi.Output[CatalogArns] | None

    def __init__(self, name: str, args: AuditCatalogArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:audit_catalog:AuditCatalog", name, None, opts)
        self._name = name
        self._args = args
        self._inventories()
        self.database_name = self.workgroup_name = self.grants = None
        if args.athena:
            database, tables = self._glue()
            workgroup = self._workgroup()
            self.database_name = database.name
            self.workgroup_name = workgroup.name
            self.grants = pulumi.Output.all(
                account=args.account_id,
                audit=args.audit_bucket_arn,
                workgroup=workgroup.arn,
                database=database.name,
                tables=[t.name for t in tables],
            ).apply(self._grants)
        self.register_outputs(
            {"database_name": self.database_name, "workgroup_name": self.workgroup_name, "grants": self.grants}
        )

    def _inventories(self) -> None:
        """One daily Parquet inventory of current versions per source bucket, SSE-KMS."""
        args = self._args
        for purpose, bucket in args.source_buckets.items():
            aws.s3.Inventory(
                f"{self._name}-{purpose}-inventory",
                bucket=bucket,
                name=layout.INVENTORY_CONFIGURATION_ID,
                enabled=True,
                included_object_versions="Current",
                schedule=aws.s3.InventoryScheduleArgs(frequency="Daily"),
                optional_fields=list(catalog.INVENTORY_OPTIONAL_FIELDS),
                destination=aws.s3.InventoryDestinationArgs(
                    bucket=aws.s3.InventoryDestinationBucketArgs(
                        bucket_arn=args.audit_bucket_arn,
                        account_id=args.account_id,
                        format="Parquet",
                        # S3 writes <prefix>/<source bucket>/<configuration id>/ (layout.inventory_prefix).
                        prefix=layout.INVENTORY_PREFIX.rstrip("/"),
                        encryption=aws.s3.InventoryDestinationBucketEncryptionArgs(
                            sse_kms=aws.s3.InventoryDestinationBucketEncryptionSseKmsArgs(key_id=args.kms_key_arn)
                        ),
                    )
                ),
                opts=child(self),
            )

    def _glue(self) -> tuple[aws.glue.CatalogDatabase, list[aws.glue.CatalogTable]]:
        """The database and its external tables, as components.catalog defines them."""
        args = self._args
        database = aws.glue.CatalogDatabase(
            f"{self._name}-database",
            name=layout.glue_database_name(args.stage),
            description="DocuFlow audit data: S3 Inventory reports and DynamoDB exports",
            tags=args.tags,
            opts=child(self),
        )
        tables = [
            glue_table(self, f"{self._name}-{table.name.replace('_', '-')}", database.name, table)
            for table in catalog.audit_tables(args.audit_bucket_name, dict(args.source_buckets))
        ]
        return database, tables

    def _workgroup(self) -> aws.athena.Workgroup:
        args = self._args
        return athena_workgroup(
            self,
            f"{self._name}-workgroup",
            name=layout.athena_workgroup_name(args.stage),
            description="DocuFlow reconcile (the rules as SQL over inventories and exports)",
            results=f"s3://{args.reports_bucket_name}/{layout.ATHENA_RESULTS_PREFIX}",
            kms_key_arn=args.kms_key_arn,
            bytes_scanned_cutoff=args.bytes_scanned_cutoff,
            tags=args.tags,
        )

    def _grants(self, v: dict[str, object]) -> CatalogArns:
        glue = f"arn:aws:glue:{self._args.region}:{v['account']}"
        return CatalogArns(
            audit_bucket_arn=str(v["audit"]),
            workgroup_arn=str(v["workgroup"]),
            glue_catalog_arn=f"{glue}:catalog",
            glue_database_arn=f"{glue}:database/{v['database']}",
            glue_table_arns=[f"{glue}:table/{v['database']}/{t}" for t in cast("list[str]", v["tables"])],
            state_table_arn=f"{glue}:table/{v['database']}/{layout.GLUE_STATE_TABLE}",
        )
