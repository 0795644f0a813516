"""Pure policy builders of the audit trail (components/audit_trail.py, docs/audit.md): the change
log's and the access trail's buckets, the Firehose delivery and the Pipe feeding it, and the
auditors' reader policy. Plain dicts of concrete ARNs, like components.policies.
"""

from __future__ import annotations

from typing import Any, TypedDict

from components.policies import REPORT_TAMPERING, deny_insecure_transport
from jobs.contract import layout
from jobs.contract.iam import (
    ATHENA_QUERIES,
    ATHENA_RESULT_OBJECTS,
    GLUE_READS,
    KMS_ENCRYPT,
    KMS_USE,
    Policy,
    document,
    list_prefixes,
    objects,
    statement,
    use_data_key,
)


def _everyone_but(*principal_arns: str | None) -> dict[str, Any]:
    named = [arn for arn in principal_arns if arn]
    return {"ArnNotEquals": {"aws:PrincipalArn": named if len(named) > 1 else named[0]}} if named else {}


def audit_log_bucket_policy(bucket_arn: str, writer_role_arn: str, break_glass_role_arn: str | None = None) -> Policy:
    """TLS only; the change log's delivery stream is its only writer; nobody deletes, retags or
    shortens the retention of a log object (the break-glass role aside, where one is configured).

    Object Lock keeps each version for the retention; the denies also keep a delete marker or a
    new version from hiding one, so what the log shows is what was delivered.
    """
    log = objects(bucket_arn)
    return document(
        deny_insecure_transport(bucket_arn),
        statement(
            "DenyWritesButTheLogsDelivery",
            ["s3:PutObject"],
            [log],
            effect="Deny",
            principal="*",
            condition=_everyone_but(writer_role_arn, break_glass_role_arn),
        ),
        statement(
            "DenyLogTampering",
            REPORT_TAMPERING,
            [log],
            effect="Deny",
            principal="*",
            condition=_everyone_but(break_glass_role_arn),
        ),
    )


def access_trail_bucket_policy(
    bucket_arn: str, trail_arn: str, account_id: str, break_glass_role_arn: str | None = None
) -> Policy:
    """TLS only; CloudTrail delivers the access trail's log files (AWS's documented bucket policy
    for a trail: it reads the ACL, and writes under AWSLogs/<account>/ owner-enforced, for this
    trail only); nothing else writes, and nobody deletes or retags a log file.
    """
    cloudtrail = {"Service": "cloudtrail.amazonaws.com"}
    trail = {"StringEquals": {"aws:SourceArn": trail_arn}}
    logs = objects(bucket_arn)
    only_cloudtrail = {"StringNotEquals": {"aws:PrincipalServiceName": "cloudtrail.amazonaws.com"}}
    return document(
        deny_insecure_transport(bucket_arn),
        statement("CloudTrailChecksAcl", ["s3:GetBucketAcl"], [bucket_arn], principal=cloudtrail, condition=trail),
        statement(
            "CloudTrailDelivers",
            ["s3:PutObject"],
            [objects(bucket_arn, f"AWSLogs/{account_id}/")],
            principal=cloudtrail,
            condition={"StringEquals": {**trail["StringEquals"], "s3:x-amz-acl": "bucket-owner-full-control"}},
        ),
        statement(
            "DenyWritesButCloudTrail",
            ["s3:PutObject"],
            [logs],
            effect="Deny",
            principal="*",
            condition={**only_cloudtrail, **_everyone_but(break_glass_role_arn)},
        ),
        statement(
            "DenyLogTampering",
            REPORT_TAMPERING,
            [logs],
            effect="Deny",
            principal="*",
            condition=_everyone_but(break_glass_role_arn),
        ),
    )


# What Firehose's role needs for an S3 destination (AWS's "Grant Firehose access to an Amazon S3
# destination"), and to read the Glue table it converts records against.
FIREHOSE_BUCKET = ("s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads")
FIREHOSE_OBJECTS = ("s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject")
FIREHOSE_GLUE = ("glue:GetTable", "glue:GetTableVersion", "glue:GetTableVersions")


def audit_delivery_role_policy(
    *,
    bucket_arn: str,
    key_arn: str,
    glue_catalog_arn: str,
    glue_database_arn: str,
    glue_table_arn: str,
    log_group_arn: str,
) -> Policy:
    """Firehose: convert against the changes table, write Parquet (and conversion failures) into
    the audit-log bucket with the stack's key, log delivery errors.
    """
    return document(
        statement("LocateLogBucket", FIREHOSE_BUCKET, [bucket_arn]),
        statement(
            "DeliverLogObjects",
            FIREHOSE_OBJECTS,
            [objects(bucket_arn, layout.AUDIT_CHANGES_PREFIX), objects(bucket_arn, layout.AUDIT_ERRORS_PREFIX)],
        ),
        statement("ReadChangesTable", FIREHOSE_GLUE, [glue_catalog_arn, glue_database_arn, glue_table_arn]),
        use_data_key(key_arn),
        statement("LogDeliveryErrors", ["logs:PutLogEvents"], [f"{log_group_arn}:log-stream:*"]),
    )


def audit_pipe_role_policy(
    *, stream_arn: str, delivery_stream_arn: str, dead_letter_queue_arn: str, key_arn: str
) -> Policy:
    """The Pipe: read the table stream (the four actions EventBridge Pipes documents for a
    DynamoDB source), put records to the delivery stream, park undeliverable batches in its DLQ.
    """
    return document(
        statement(
            "ReadTableStream",
            ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
            [stream_arn],
        ),
        # ListStreams has no resource type in IAM: "*" is the only resource it accepts.
        statement("ListTableStreams", ["dynamodb:ListStreams"], "*"),
        statement("DeliverChanges", ["firehose:PutRecord", "firehose:PutRecordBatch"], [delivery_stream_arn]),
        statement("ParkFailedBatches", ["sqs:SendMessage"], [dead_letter_queue_arn]),
        statement("UseDataKey", KMS_USE, [key_arn]),
    )


class TrailArns(TypedDict):
    """What an auditor's questions read (AuditTrail's resources)."""

    audit_bucket_arn: str
    access_bucket_arn: str
    workgroup_arn: str
    glue_catalog_arn: str
    glue_database_arn: str
    glue_table_arns: list[str]


def audit_reader_policy(*, trail: TrailArns, reports_bucket_arn: str, key_arn: str) -> Policy:
    """An auditor (`python -m jobs audit …`, or Athena's console): read both logs, query them in the
    audit workgroup (Athena reads with the caller's permissions and writes results under
    athena/audit/ of the reports bucket). Attach it to the auditors' role; it writes nothing else.
    """
    results = f"{layout.ATHENA_RESULTS_PREFIX}audit/"
    logs = [objects(trail["audit_bucket_arn"]), objects(trail["access_bucket_arn"])]
    return document(
        statement("QueryInAuditWorkgroup", ATHENA_QUERIES, [trail["workgroup_arn"]]),
        statement(
            "ReadTrailCatalog",
            GLUE_READS,
            [trail["glue_catalog_arn"], trail["glue_database_arn"], *trail["glue_table_arns"]],
        ),
        statement(
            "ListLogs",
            ["s3:ListBucket", "s3:GetBucketLocation"],
            [trail["audit_bucket_arn"], trail["access_bucket_arn"]],
        ),
        statement("ReadLogs", ["s3:GetObject"], logs),
        statement("QueryResults", ATHENA_RESULT_OBJECTS, [objects(reports_bucket_arn, results)]),
        list_prefixes("ListQueryResults", reports_bucket_arn, [results]),
        statement("LocateResults", ["s3:GetBucketLocation", "s3:ListBucketMultipartUploads"], [reports_bucket_arn]),
        statement("DecryptLogs", KMS_ENCRYPT, [key_arn]),
    )
