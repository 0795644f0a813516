"""AuditTrail: every change and every access to a document, on record for the audit retention.

Changes (no code of ours in the path): the table stream → an EventBridge Pipe (every record,
unchanged, in order per shard, at least once; no filter, no input template: a Pipe cannot flatten
the record, docs/audit.md) → Amazon Data Firehose (each JSON record converted to Parquet against
the Glue table `changes`, whose columns are the contract's `stream_record`; objects under
`changes/dt=<delivery day>/`, SSE-KMS; records it cannot convert under `errors/`) → the audit-log
bucket, which DocumentBuckets owns with Object Lock and a policy letting only this delivery
stream's role write (`audit_bucket_policies`). Batches the Pipe cannot deliver after its retries
go to a dead-letter queue that alarms; the reconcile's completeness rule finds what is missing.

Accesses: a CloudTrail trail of S3 data events on the raw and result objects only (advanced
event selectors), log file validation on, encrypted with the stack's key, into the access-trail
bucket (Object Lock, the same retention), and the Glue table `access` over its log files.

Both tables live in the trail database and are queried in the audit workgroup; the managed policy
`reader_policy_arn` is what an auditor's role attaches to ask (`python -m jobs audit …`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components import audit_policies, catalog, policies
from components._pulumi import child, json_document
from components.alerts import encrypted_queue, queue_depth_alarm
from components.audit_catalog import athena_workgroup, glue_table
from jobs.contract import layout

# The Pipe puts up to 500 records a batch (Firehose's PutRecordBatch limit for a Pipe target);
# Firehose's smallest buffer with format conversion is 64 MiB, delivered at least every 5 minutes.
PIPE_BATCH = 500
PIPE_RETRIES = 185
BUFFER_MIB = 64
BUFFER_SECONDS = 300


def delivery_role_name(stage: str) -> str:
    """Named up front: the audit-log bucket's policy (built before this component) names it."""
    return f"{layout.audit_delivery_name(stage)}-role"


def trail_arn(stage: str, region: str, account_id: pulumi.Input[str]) -> pulumi.Output[str]:
    return pulumi.Output.concat(
        "arn:aws:cloudtrail:", region, ":", account_id, ":trail/", layout.access_trail_name(stage)
    )


def audit_bucket_policies(
    stage: str, region: str, account_id: pulumi.Input[str], break_glass_role_arn: str | None
) -> dict[str, Callable[[pulumi.Output[str]], pulumi.Output[str]]]:
    """The policies of the two audit buckets, by purpose (DocumentBucketsArgs.policies)."""
    writer = pulumi.Output.concat("arn:aws:iam::", account_id, ":role/", delivery_role_name(stage))
    return {
        layout.AUDIT_LOG: lambda arn: json_document(
            audit_policies.audit_log_bucket_policy,
            bucket_arn=arn,
            writer_role_arn=writer,
            break_glass_role_arn=break_glass_role_arn,
        ),
        layout.ACCESS_TRAIL: lambda arn: json_document(
            audit_policies.access_trail_bucket_policy,
            bucket_arn=arn,
            trail_arn=trail_arn(stage, region, account_id),
            account_id=account_id,
            break_glass_role_arn=break_glass_role_arn,
        ),
    }


def _trail_arns(v: dict[str, Any]) -> audit_policies.TrailArns:
    return audit_policies.TrailArns(
        audit_bucket_arn=v["audit_bucket_arn"],
        access_bucket_arn=v["access_bucket_arn"],
        workgroup_arn=v["workgroup_arn"],
        glue_catalog_arn=v["glue_catalog_arn"],
        glue_database_arn=v["glue_database_arn"],
        glue_table_arns=list(v["glue_table_arns"]),
    )


@dataclass
class AuditTrailArgs:
    stage: str
    region: str
    account_id: pulumi.Input[str]
    stream_arn: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    # Purpose → bucket name: the two audit buckets, and raw/processed whose objects are traced.
    bucket_names: Mapping[str, str]
    alarm_topic_arn: pulumi.Input[str]
    bytes_scanned_cutoff: int
    log_retention_days: int
    # The trail checks its bucket's policy when it is created: the buckets component first.
    buckets: pulumi.Resource | None = None
    tags: dict[str, str] = field(default_factory=dict)


class AuditTrail(pulumi.ComponentResource):
    delivery_stream_name: pulumi.Output[str]
    trail_arn: pulumi.Output[str]
    database_name: pulumi.Output[str]
    workgroup_name: pulumi.Output[str]
    reader_policy_arn: pulumi.Output[str]

    def __init__(self, name: str, args: AuditTrailArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:audit_trail:AuditTrail", name, None, opts)
        self._name = name
        self._args = args
        self._glue_prefix = pulumi.Output.concat("arn:aws:glue:", args.region, ":", args.account_id)
        database, changes, access = self._catalog()
        delivery = self._delivery(database, changes)
        self._pipe(delivery)
        trail = self._trail()
        workgroup = athena_workgroup(
            self,
            f"{name}-workgroup",
            name=layout.audit_workgroup_name(args.stage),
            description="DocuFlow audit questions (jobs/audit) over the change log and the access trail",
            results=f"s3://{args.bucket_names['reports']}/{layout.ATHENA_RESULTS_PREFIX}audit/",
            kms_key_arn=args.kms_key_arn,
            bytes_scanned_cutoff=args.bytes_scanned_cutoff,
            tags=args.tags,
        )
        reader = self._reader_policy(database, [changes, access], workgroup)
        self.delivery_stream_name = delivery.name
        self.trail_arn = trail.arn
        self.database_name = database.name
        self.workgroup_name = workgroup.name
        self.reader_policy_arn = reader.arn
        self.register_outputs(
            {
                "delivery_stream_name": self.delivery_stream_name,
                "trail_arn": self.trail_arn,
                "database_name": self.database_name,
                "workgroup_name": self.workgroup_name,
                "reader_policy_arn": self.reader_policy_arn,
            }
        )

    def _catalog(self) -> tuple[aws.glue.CatalogDatabase, aws.glue.CatalogTable, aws.glue.CatalogTable]:
        args = self._args
        database = aws.glue.CatalogDatabase(
            f"{self._name}-database",
            name=layout.trail_database_name(args.stage),
            description="DocuFlow audit trail: document changes (table stream) and object accesses (CloudTrail)",
            tags=args.tags,
            opts=child(self),
        )
        changes = glue_table(
            self,
            f"{self._name}-changes",
            database.name,
            catalog.changes_table(layout.GLUE_CHANGES_TABLE, args.bucket_names[layout.AUDIT_LOG]),
        )

        def access_definition(account: str) -> catalog.GlueTable:
            return catalog.access_table(
                layout.GLUE_ACCESS_TABLE, args.bucket_names[layout.ACCESS_TRAIL], account, args.region
            )

        account = pulumi.Output.from_input(args.account_id)
        access = glue_table(
            self,
            f"{self._name}-access",
            database.name,
            access_definition("<account>"),
            location=account.apply(lambda a: access_definition(a).location),
            parameters=account.apply(lambda a: access_definition(a).parameters),
        )
        return database, changes, access

    def _table_arn(self, database: aws.glue.CatalogDatabase, table: aws.glue.CatalogTable) -> pulumi.Output[str]:
        return pulumi.Output.concat(self._glue_prefix, ":table/", database.name, "/", table.name)

    def _delivery(
        self, database: aws.glue.CatalogDatabase, changes: aws.glue.CatalogTable
    ) -> aws.kinesis.FirehoseDeliveryStream:
        """Firehose: JSON stream records → Parquet of the changes table, by delivery day, SSE-KMS."""
        args = self._args
        bucket_arn = f"arn:aws:s3:::{args.bucket_names[layout.AUDIT_LOG]}"
        log_group, log_stream = self._delivery_logs()
        role, role_policy = self._role(
            "delivery",
            "firehose.amazonaws.com",
            json_document(
                audit_policies.audit_delivery_role_policy,
                bucket_arn=bucket_arn,
                key_arn=args.kms_key_arn,
                glue_catalog_arn=pulumi.Output.concat(self._glue_prefix, ":catalog"),
                glue_database_arn=pulumi.Output.concat(self._glue_prefix, ":database/", database.name),
                glue_table_arn=self._table_arn(database, changes),
                log_group_arn=log_group.arn,
            ),
            role_name=delivery_role_name(args.stage),
        )
        day = "!{timestamp:yyyy-MM-dd}"
        s3 = aws.kinesis
        return s3.FirehoseDeliveryStream(
            f"{self._name}-delivery",
            name=layout.audit_delivery_name(args.stage),
            destination="extended_s3",
            server_side_encryption=s3.FirehoseDeliveryStreamServerSideEncryptionArgs(
                enabled=True, key_type="CUSTOMER_MANAGED_CMK", key_arn=args.kms_key_arn
            ),
            extended_s3_configuration=s3.FirehoseDeliveryStreamExtendedS3ConfigurationArgs(
                bucket_arn=bucket_arn,
                role_arn=role.arn,
                prefix=f"{layout.AUDIT_CHANGES_PREFIX}{layout.AUDIT_PARTITION}={day}/",
                error_output_prefix=f"{layout.AUDIT_ERRORS_PREFIX}!{{firehose:error-output-type}}/{layout.AUDIT_PARTITION}={day}/",
                buffering_size=BUFFER_MIB,
                buffering_interval=BUFFER_SECONDS,
                kms_key_arn=args.kms_key_arn,
                file_extension=".parquet",
                custom_time_zone="UTC",
                cloudwatch_logging_options=s3.FirehoseDeliveryStreamExtendedS3ConfigurationCloudwatchLoggingOptionsArgs(
                    enabled=True, log_group_name=log_group.name, log_stream_name=log_stream.name
                ),
                data_format_conversion_configuration=self._conversion(database, changes, role),
            ),
            tags=args.tags,
            opts=child(self, depends_on=[role_policy]),
        )

    def _delivery_logs(self) -> tuple[aws.cloudwatch.LogGroup, aws.cloudwatch.LogStream]:
        """Where Firehose logs what it could not deliver (KMS, kept as long as the jobs' logs)."""
        args = self._args
        log_group = aws.cloudwatch.LogGroup(
            f"{self._name}-delivery-logs",
            name=f"/{layout.APP}/{args.stage}/audit-delivery",
            retention_in_days=args.log_retention_days,
            kms_key_id=args.kms_key_arn,
            tags=args.tags,
            opts=child(self),
        )
        log_stream = aws.cloudwatch.LogStream(
            f"{self._name}-delivery-errors",
            name=layout.audit_delivery_name(args.stage),
            log_group_name=log_group.name,
            opts=child(self),
        )
        return log_group, log_stream

    def _conversion(
        self, database: aws.glue.CatalogDatabase, changes: aws.glue.CatalogTable, role: aws.iam.Role
    ) -> aws.kinesis.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationArgs:
        """OpenX JSON in (names matched case-insensitively), Parquet (Snappy) out, the changes table's schema."""
        k = aws.kinesis
        return k.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationArgs(
            enabled=True,
            input_format_configuration=k.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationInputFormatConfigurationArgs(
                deserializer=k.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationInputFormatConfigurationDeserializerArgs(
                    open_x_json_ser_de=k.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationInputFormatConfigurationDeserializerOpenXJsonSerDeArgs(
                        case_insensitive=True
                    )
                )
            ),
            output_format_configuration=k.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationOutputFormatConfigurationArgs(
                serializer=k.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationOutputFormatConfigurationSerializerArgs(
                    parquet_ser_de=k.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationOutputFormatConfigurationSerializerParquetSerDeArgs(
                        compression="SNAPPY"
                    )
                )
            ),
            schema_configuration=k.FirehoseDeliveryStreamExtendedS3ConfigurationDataFormatConversionConfigurationSchemaConfigurationArgs(
                database_name=database.name,
                table_name=changes.name,
                role_arn=role.arn,
                region=self._args.region,
                version_id="LATEST",
            ),
        )

    def _pipe(self, delivery: aws.kinesis.FirehoseDeliveryStream) -> aws.pipes.Pipe:
        """The table stream, every record and unchanged, into the delivery stream."""
        args = self._args
        dlq = encrypted_queue(self, f"{self._name}-pipe-dlq", args.kms_key_arn, args.tags)
        role, role_policy = self._role(
            "pipe",
            "pipes.amazonaws.com",
            json_document(
                audit_policies.audit_pipe_role_policy,
                stream_arn=args.stream_arn,
                delivery_stream_arn=delivery.arn,
                dead_letter_queue_arn=dlq.arn,
                key_arn=args.kms_key_arn,
            ),
        )
        stream = aws.pipes.PipeSourceParametersDynamodbStreamParametersArgs(
            # From the oldest record the stream keeps: a Pipe created after its table misses nothing.
            starting_position="TRIM_HORIZON",
            batch_size=PIPE_BATCH,
            maximum_retry_attempts=PIPE_RETRIES,
            # One batch per shard at a time keeps each item's records in order.
            parallelization_factor=1,
            on_partial_batch_item_failure="AUTOMATIC_BISECT",
            dead_letter_config=aws.pipes.PipeSourceParametersDynamodbStreamParametersDeadLetterConfigArgs(arn=dlq.arn),
        )
        pipe = aws.pipes.Pipe(
            f"{self._name}-pipe",
            description="DocuFlow change log: table stream -> Firehose (Parquet) -> audit-log bucket",
            role_arn=role.arn,
            source=args.stream_arn,
            source_parameters=aws.pipes.PipeSourceParametersArgs(dynamodb_stream_parameters=stream),
            target=delivery.arn,
            kms_key_identifier=args.kms_key_arn,
            tags=args.tags,
            opts=child(self, depends_on=[role_policy]),
        )
        queue_depth_alarm(
            self, f"{self._name}-pipe-dlq-alarm", dlq.name, args.alarm_topic_arn, "audit change log", args.tags
        )
        return pipe

    def _trail(self) -> aws.cloudtrail.Trail:
        """Data events of raw uploads and result.json objects only, reads and writes, validated and encrypted."""
        args = self._args
        prefixes = {"raw": layout.RAW_PREFIX, "processed": layout.PROCESSED_PREFIX}
        objects = [f"arn:aws:s3:::{args.bucket_names[p]}/{prefix}" for p, prefix in prefixes.items()]
        selector = aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs
        return aws.cloudtrail.Trail(
            f"{self._name}-access-trail",
            name=layout.access_trail_name(args.stage),
            s3_bucket_name=args.bucket_names[layout.ACCESS_TRAIL],
            enable_log_file_validation=True,
            kms_key_id=args.kms_key_arn,
            is_multi_region_trail=False,
            include_global_service_events=False,
            advanced_event_selectors=[
                aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                    name="Reads and writes of document objects (raw uploads, results)",
                    field_selectors=[
                        selector(field="eventCategory", equals=["Data"]),
                        selector(field="resources.type", equals=["AWS::S3::Object"]),
                        selector(field="resources.ARN", starts_withs=objects),
                    ],
                )
            ],
            tags=args.tags,
            opts=child(self, depends_on=[args.buckets] if args.buckets else None),
        )

    def _reader_policy(
        self, database: aws.glue.CatalogDatabase, tables: list[aws.glue.CatalogTable], workgroup: aws.athena.Workgroup
    ) -> aws.iam.Policy:
        args = self._args
        trail = pulumi.Output.all(
            audit_bucket_arn=f"arn:aws:s3:::{args.bucket_names[layout.AUDIT_LOG]}",
            access_bucket_arn=f"arn:aws:s3:::{args.bucket_names[layout.ACCESS_TRAIL]}",
            workgroup_arn=workgroup.arn,
            glue_catalog_arn=pulumi.Output.concat(self._glue_prefix, ":catalog"),
            glue_database_arn=pulumi.Output.concat(self._glue_prefix, ":database/", database.name),
            glue_table_arns=pulumi.Output.all(*[self._table_arn(database, t) for t in tables]),
        ).apply(_trail_arns)
        return aws.iam.Policy(
            f"{self._name}-reader",
            name=f"{layout.stage_prefix(args.stage)}-audit-reader",
            description="Read DocuFlow's audit trail and query it in the audit workgroup (attach to auditors)",
            policy=json_document(
                audit_policies.audit_reader_policy,
                trail=trail,
                reports_bucket_arn=f"arn:aws:s3:::{args.bucket_names['reports']}",
                key_arn=args.kms_key_arn,
            ),
            tags=args.tags,
            opts=child(self),
        )

    def _role(
        self, purpose: str, service: str, policy: pulumi.Output[str], role_name: str | None = None
    ) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
        """A service role and its inline policy (a Pipe or a delivery stream validates its role on
        create: depend on the policy).
        """
        role = aws.iam.Role(
            f"{self._name}-{purpose}-role",
            name=role_name,
            assume_role_policy=json_document(
                policies.assume_role_policy, service=service, account_id=self._args.account_id
            ),
            tags=self._args.tags,
            opts=child(self),
        )
        return role, aws.iam.RolePolicy(f"{self._name}-{purpose}-policy", role=role.id, policy=policy, opts=child(self))
