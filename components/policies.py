"""Pure policy builders: IAM role, trust, key, bucket and topic policies as plain dicts.

Every function takes concrete ARNs (already resolved from Outputs by the caller) and returns a
policy document, so least privilege is tested without Pulumi. No Allow statement uses a wildcard
action; `*` appears as a resource only for actions that have no resource type (ecr
GetAuthorizationToken) and in key policies, where it means "this key".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from jobs.contract import layout

Policy = dict[str, Any]
Statement = dict[str, Any]

VERSION = "2012-10-17"

# Task roles hold exactly the actions their job's calls need (tests/components/
# test_iam_matches_calls.py records them on the live local stack), plus what AWS alone needs.
KMS_USE = ("kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey")
# Amazon Textract AnalyzeExpense, synchronous for images and asynchronous for PDFs. Textract reads
# the S3 object with the caller's own permissions (ReadRaw) and key (UseDataKey).
TEXTRACT_EXPENSE = ("textract:AnalyzeExpense", "textract:StartExpenseAnalysis", "textract:GetExpenseAnalysis")
KMS_ENCRYPT = ("kms:Decrypt", "kms:GenerateDataKey")
# The key's administrators and, by delegation to the account, the IAM policies below. Listed
# explicitly rather than kms:* so the key policy passes the same no-wildcard-action check.
KMS_ACCOUNT_ACTIONS = (
    "kms:CancelKeyDeletion",
    "kms:CreateAlias",
    "kms:CreateGrant",
    "kms:Decrypt",
    "kms:DeleteAlias",
    "kms:DescribeKey",
    "kms:DisableKey",
    "kms:DisableKeyRotation",
    "kms:EnableKey",
    "kms:EnableKeyRotation",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:GetKeyPolicy",
    "kms:GetKeyRotationStatus",
    "kms:ListGrants",
    "kms:ListKeyPolicies",
    "kms:ListKeyRotations",
    "kms:ListResourceTags",
    "kms:PutKeyPolicy",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:RetireGrant",
    "kms:RevokeGrant",
    "kms:RotateKeyOnDemand",
    "kms:ScheduleKeyDeletion",
    "kms:TagResource",
    "kms:UntagResource",
    "kms:UpdateAlias",
    "kms:UpdateKeyDescription",
)
KMS_LOGS_ACTIONS = (
    "kms:Encrypt",
    "kms:Decrypt",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:DescribeKey",
)

_ECR_IMAGE = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com/(?P<repo>[a-z0-9._/-]+?)"
    r"(:[\w.-]+|@sha256:[0-9a-f]{64})$"
)


# --- building blocks ---------------------------------------------------------------------------
def statement(
    sid: str,
    actions: Sequence[str],
    resources: Sequence[str] | str,
    *,
    effect: str = "Allow",
    condition: Mapping[str, Any] | None = None,
    principal: Mapping[str, Any] | str | None = None,
) -> Statement:
    stmt: Statement = {"Sid": sid, "Effect": effect, "Action": sorted(set(actions))}
    if principal is not None:
        stmt["Principal"] = principal
    stmt["Resource"] = resources if isinstance(resources, str) else list(resources)
    if condition:
        stmt["Condition"] = dict(condition)
    return stmt


def document(*statements: Statement) -> Policy:
    return {"Version": VERSION, "Statement": list(statements)}


def objects(bucket_arn: str, prefix: str = "") -> str:
    """The object ARN pattern under `prefix` (a layout prefix such as RAW_PREFIX)."""
    return f"{bucket_arn}/{prefix}*"


def _list_prefixes(sid: str, bucket_arn: str, prefixes: Sequence[str], action: str = "s3:ListBucket") -> Statement:
    # Listing is a bucket-level action: the prefix condition keeps it inside the prefixes.
    return statement(
        sid,
        [action],
        [bucket_arn],
        condition={"StringLike": {"s3:prefix": [f"{p}*" for p in prefixes]}},
    )


def assume_role_policy(service: str, account_id: str) -> Policy:
    """Trust `service`, only on behalf of this account (confused-deputy guard)."""
    return document(
        {
            "Sid": "TrustService",
            "Effect": "Allow",
            "Principal": {"Service": service},
            "Action": "sts:AssumeRole",
            "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
        }
    )


# The services that publish to the alarm topic: CloudWatch alarms, EventBridge rules (failed
# tasks) and AWS Budgets (the stack's cost budget).
ALERT_PUBLISHERS = ("cloudwatch.amazonaws.com", "events.amazonaws.com", "budgets.amazonaws.com")


# --- KMS -----------------------------------------------------------------------------------
def data_key_policy(
    account_id: str,
    region: str,
    notifying_bucket_arns: Sequence[str] = (),
    inventoried_bucket_arns: Sequence[str] = (),
    trail_arn: str | None = None,
) -> Policy:
    """The stack's data key: the account administers it; services that encrypt for us may use it.

    CloudWatch Logs encrypts log groups itself (scoped by encryption context to this account's
    groups); CloudWatch alarms and EventBridge publish to the KMS-encrypted alarm topic; S3 sends
    the notifications of `notifying_bucket_arns` to the KMS-encrypted arrival queue, which takes
    a data key (GenerateDataKey) and, for SQS, Decrypt, on behalf of those buckets only; and S3
    Inventory encrypts the reports of `inventoried_bucket_arns` with it (GenerateDataKey).
    """
    root = {"AWS": f"arn:aws:iam::{account_id}:root"}
    source = {"StringEquals": {"aws:SourceAccount": account_id}}
    statements = []
    if notifying_bucket_arns:
        statements.append(
            statement(
                "S3NotifiesEncryptedQueue",
                KMS_ENCRYPT,
                "*",
                principal={"Service": "s3.amazonaws.com"},
                condition={**source, "ArnLike": {"aws:SourceArn": list(notifying_bucket_arns)}},
            )
        )
    if inventoried_bucket_arns:
        statements.append(
            statement(
                "S3EncryptsInventoryReports",
                ["kms:GenerateDataKey"],
                "*",
                principal={"Service": "s3.amazonaws.com"},
                condition={**source, "ArnLike": {"aws:SourceArn": list(inventoried_bucket_arns)}},
            )
        )
    if trail_arn:
        statements += _cloudtrail_key_statements(account_id, trail_arn)
    return document(
        statement("AccountAdministersAndDelegates", KMS_ACCOUNT_ACTIONS, "*", principal=root),
        statement(
            "CloudWatchLogsEncryptsLogGroups",
            KMS_LOGS_ACTIONS,
            "*",
            principal={"Service": f"logs.{region}.amazonaws.com"},
            condition={
                "ArnLike": {"kms:EncryptionContext:aws:logs:arn": (f"arn:aws:logs:{region}:{account_id}:log-group:*")}
            },
        ),
        statement(
            "AlarmsAndRulesPublishToEncryptedTopic",
            KMS_ENCRYPT,
            "*",
            principal={"Service": list(ALERT_PUBLISHERS)},
            condition=source,
        ),
        *statements,
    )


def _cloudtrail_key_statements(account_id: str, trail_arn: str) -> list[Statement]:
    """CloudTrail encrypts one trail's log files (its encryption context) and checks the key."""
    trail = {"StringEquals": {"aws:SourceArn": trail_arn}}
    context = f"arn:aws:cloudtrail:*:{account_id}:trail/*"
    cloudtrail = {"Service": "cloudtrail.amazonaws.com"}
    return [
        statement(
            "CloudTrailEncryptsAccessLogs",
            ["kms:GenerateDataKey"],
            "*",
            principal=cloudtrail,
            condition={**trail, "StringLike": {"kms:EncryptionContext:aws:cloudtrail:arn": context}},
        ),
        statement("CloudTrailDescribesKey", ["kms:DescribeKey"], "*", principal=cloudtrail, condition=trail),
    ]


# --- S3 ------------------------------------------------------------------------------------
def _deny_insecure_transport(bucket_arn: str) -> Statement:
    # A Deny may be broad: s3:* here only ever removes access.
    return statement(
        "DenyInsecureTransport",
        ["s3:*"],
        [bucket_arn, objects(bucket_arn)],
        effect="Deny",
        principal="*",
        condition={"Bool": {"aws:SecureTransport": "false"}},
    )


def tls_only_bucket_policy(bucket_arn: str) -> Policy:
    return document(_deny_insecure_transport(bucket_arn))


# What would change or remove a written report: deletes (a delete marker hides the current
# version even under Object Lock), retention changes and governance bypass, and the tags that
# choose the lifecycle expiry (`retention=standard|compliance`).
REPORT_TAMPERING = (
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
    "s3:PutObjectRetention",
    "s3:BypassGovernanceRetention",
    "s3:PutObjectTagging",
    "s3:DeleteObjectTagging",
)


def data_bucket_policy(
    bucket_arn: str, write_once_prefixes: Sequence[str] = (), break_glass_role_arn: str | None = None
) -> Policy:
    """TLS only; keys under `write_once_prefixes` are written once and then never changed.

    A PutObject that creates an object there must carry `If-None-Match` (S3's `s3:if-none-match`
    condition key, "Enforce conditional writes on Amazon S3 buckets"), so S3 refuses it when the
    key exists; `s3:ObjectCreationOperation` leaves the parts of a multipart upload alone (they
    cannot carry the header; its CompleteMultipartUpload must). Deletes, retention changes and
    retagging are denied too. Denies bind every principal, the job roles and administrators
    alike, except the break-glass role when one is configured.
    """
    statements = [_deny_insecure_transport(bucket_arn)]
    if write_once_prefixes:
        reports = [objects(bucket_arn, prefix) for prefix in write_once_prefixes]
        everyone_but = {"ArnNotEquals": {"aws:PrincipalArn": break_glass_role_arn}} if break_glass_role_arn else {}
        statements += [
            statement(
                "DenyReportOverwrites",
                ["s3:PutObject"],
                reports,
                effect="Deny",
                principal="*",
                condition={
                    "Null": {"s3:if-none-match": "true"},
                    "Bool": {"s3:ObjectCreationOperation": "true"},
                    **everyone_but,
                },
            ),
            statement(
                "DenyReportTampering", REPORT_TAMPERING, reports, effect="Deny", principal="*", condition=everyone_but
            ),
        ]
    return document(*statements)


def access_log_bucket_policy(log_bucket_arn: str, source_bucket_arns: Sequence[str], account_id: str) -> Policy:
    """TLS only, and the S3 logging service may write logs for our buckets only."""
    return document(
        _deny_insecure_transport(log_bucket_arn),
        statement(
            "S3ServerAccessLogsDelivery",
            ["s3:PutObject"],
            [objects(log_bucket_arn)],
            principal={"Service": "logging.s3.amazonaws.com"},
            condition={
                "ArnLike": {"aws:SourceArn": list(source_bucket_arns)},
                "StringEquals": {"aws:SourceAccount": account_id},
            },
        ),
    )


def audit_data_bucket_policy(audit_bucket_arn: str, inventoried_bucket_arns: Sequence[str], account_id: str) -> Policy:
    """TLS only, and S3 Inventory may deliver the reports of our buckets under inventory/ only."""
    return document(
        _deny_insecure_transport(audit_bucket_arn),
        statement(
            "S3InventoryDelivery",
            ["s3:PutObject"],
            [objects(audit_bucket_arn, layout.INVENTORY_PREFIX)],
            principal={"Service": "s3.amazonaws.com"},
            condition={
                "ArnLike": {"aws:SourceArn": list(inventoried_bucket_arns)},
                "StringEquals": {"aws:SourceAccount": account_id},
            },
        ),
    )


# --- batch jobs ----------------------------------------------------------------------------
def _use_data_key(key_arn: str) -> Statement:
    # SSE-KMS: S3 decrypts what the role reads and generates a data key for what it writes, with
    # the caller's permissions; DynamoDB uses the table's own grant and needs nothing here.
    return statement("UseDataKey", KMS_ENCRYPT, [key_arn])


def _arrival_statements(queue_arn: str, dead_letter_queue_arn: str) -> list[Statement]:
    """The drain receives, deletes and re-times messages of the arrival queue only, and reads the
    depth of it and of its dead-letter queue (found by name) for the run summary.
    `ingest --redrive-dlq` moves the dead-letter queue's messages back: SQS's message move task
    (started and listed on the DLQ; SQS then receives and deletes them there and sends them to
    the arrival queue with the caller's permissions), or the same three calls made by the job
    where the SQS server has no move tasks.
    """
    return [
        statement(
            "DrainArrivals",
            ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"],
            [queue_arn],
        ),
        statement("CountDeadLetters", ["sqs:GetQueueUrl", "sqs:GetQueueAttributes"], [dead_letter_queue_arn]),
        statement(
            "RedriveDeadLetters",
            ["sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:ReceiveMessage", "sqs:DeleteMessage"],
            [dead_letter_queue_arn],
        ),
        statement("ReturnDeadLetters", ["sqs:SendMessage"], [queue_arn]),
    ]


def ingest_task_policy(
    *,
    table_arn: str,
    raw_bucket_arn: str,
    processed_bucket_arn: str,
    reports_bucket_arn: str,
    key_arn: str,
    arrivals_queue_arn: str,
    arrivals_dead_letter_queue_arn: str,
    textract: bool = False,
    metrics_namespace: str | None = None,
) -> Policy:
    """Drain the arrival queue (or sweep raw/ with --backfill), read raw objects, write result.json
    (tagged with its retention) and the run summary, read items in batches and write them with
    conditional puts (TransactWriteItems of Puts).

    The queue statements: `_arrival_statements`. With `textract`, scans are read by Amazon
    Textract AnalyzeExpense (the stack's ocrEngine).

    A result.json write fenced out by another writer (jobs.ingest.process) heads the current
    result.json and reads its own item (GetItem) to learn whether it still holds the claim. The
    finish gives up the duplicate markers a re-uploaded or deleted document no longer holds
    (a Delete in the same transaction), and reads the holder of a marker it met (GetItem).
    A finished upload gets its retention tag; the claim on an upload erased before it was read is
    removed (DeleteItem), once the user's erasure marker (GetItem) says it was erased.
    """
    return document(
        *_arrival_statements(arrivals_queue_arn, arrivals_dead_letter_queue_arn),
        # The backfill lists raw/; and S3 answers 404 for an object that is gone (a raw upload
        # deleted before the drain reads it, a result.json removed under a fenced write) only to a
        # caller that may list the bucket (403 otherwise, which would read as a refusal, not as a
        # missing object). That check carries no s3:prefix: no condition here.
        statement("ListDataBuckets", ["s3:ListBucket"], [raw_bucket_arn, processed_bucket_arn]),
        statement("ReadRaw", ["s3:GetObject"], [objects(raw_bucket_arn, layout.RAW_PREFIX)]),
        statement("TagRawRetention", ["s3:PutObjectTagging"], [objects(raw_bucket_arn, layout.RAW_PREFIX)]),
        statement("HeadResults", ["s3:GetObject"], [objects(processed_bucket_arn, layout.PROCESSED_PREFIX)]),
        # A held document's result.json is written under its legal hold (the PutObject's
        # x-amz-object-lock-legal-hold, which S3 authorizes as s3:PutObjectLegalHold too).
        statement(
            "WriteResults",
            ["s3:PutObject", "s3:PutObjectTagging", "s3:PutObjectLegalHold"],
            [objects(processed_bucket_arn, layout.PROCESSED_PREFIX)],
        ),
        # Write-once; a resend refused after a lost response reads the summary back to see
        # its own bytes (jobs.store.s3.Buckets.put_once).
        statement(
            "WriteIngestRunSummary",
            ["s3:GetObject", "s3:PutObject"],
            [objects(reports_bucket_arn, layout.INGEST_RUNS_PREFIX)],
        ),
        statement(
            "ReadAndClaimItems",
            ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"],
            [table_arn],
        ),
        _use_data_key(key_arn),
        *(_textract_statements(table_arn) if textract else []),
        *publish_metrics(metrics_namespace),
    )


def _textract_statements(table_arn: str) -> list[Statement]:
    return [
        # IAM has no resource type for Textract's expense actions: "*" is the only resource.
        statement("AnalyzeExpense", TEXTRACT_EXPENSE, "*"),
        # The night's Textract page counter (jobs.ingest.pages): a conditional ADD, every task's pages.
        statement("CountTextractPages", ["dynamodb:UpdateItem"], [table_arn]),
    ]


# The night's report prefixes as an IAM glob: layout.reconciliation_prefix's
# `reconciliation/<YYYY-MM-DD>/<runId>/`. `?` is one character, so the glob admits the dated
# prefixes only, never reconciliation/acknowledgements/ or reconciliation/packs/.
REPORT_RUNS_PATTERN = f"{layout.RECONCILIATION_PREFIX}????-??-??/"


def _reconcile_statements(
    table_arn: str,
    raw_bucket_arn: str,
    processed_bucket_arn: str,
    reports_bucket_arn: str,
    key_arn: str,
    audit_log_bucket_arn: str | None = None,
) -> list[Statement]:
    documents, versions = _document_prefixes(raw_bucket_arn, processed_bucket_arn)
    return [
        *(_audit_log_statements(audit_log_bucket_arn) if audit_log_bucket_arn else []),
        # Reconcile lists the whole data buckets, so objects outside the layout are found too;
        # listing reveals keys only. It reads result.json (--deep) but never a raw document.
        statement("ListDataBuckets", ["s3:ListBucket"], [raw_bucket_arn, processed_bucket_arn]),
        statement("ReadResults", ["s3:GetObject"], [objects(processed_bucket_arn, layout.PROCESSED_PREFIX)]),
        # A live run's lifecycle rules (jobs.reconcile.lifecycle): the versions of held and of
        # hard-deleted documents, their legal holds, and (--deep) the objects' retention tags.
        *versions,
        statement("ReadLegalHoldsAndTags", ["s3:GetObjectLegalHold", "s3:GetObjectTagging"], documents),
        statement("ScanTable", ["dynamodb:Scan"], [table_arn]),
        # The report is written once (If-None-Match) beside the earlier reports it charts; the
        # drill's reports are listed, never read, for the days since the last drill (drill-overdue).
        _list_prefixes("ListReports", reports_bucket_arn, [layout.RECONCILIATION_PREFIX, layout.DRILL_RUNS_PREFIX]),
        # It reads every earlier report, ledger and acknowledgement, but writes only its own
        # night's reports: an acknowledgement is a person's acceptance of the run's findings, so
        # the run may not write one (reconciliation/acknowledgements/), nor a month's pack.
        statement("ReadReports", ["s3:GetObject"], [objects(reports_bucket_arn, layout.RECONCILIATION_PREFIX)]),
        statement("WriteReports", ["s3:PutObject"], [objects(reports_bucket_arn, REPORT_RUNS_PATTERN)]),
        _use_data_key(key_arn),
    ]


def _audit_log_statements(audit_log_bucket_arn: str) -> list[Statement]:
    """--audit-log: list and read the change log and its conversion failures (docs/audit.md)."""
    prefixes = [layout.AUDIT_CHANGES_PREFIX, layout.AUDIT_ERRORS_PREFIX]
    return [
        _list_prefixes("ListAuditLog", audit_log_bucket_arn, prefixes),
        statement("ReadAuditLog", ["s3:GetObject"], [objects(audit_log_bucket_arn, p) for p in prefixes]),
    ]


class CatalogArns(TypedDict):
    """What the Athena engine works on (AuditCatalog's resources)."""

    audit_bucket_arn: str
    workgroup_arn: str
    glue_catalog_arn: str
    glue_database_arn: str
    glue_table_arns: list[str]
    state_table_arn: str  # the Iceberg table the nightly run merges (one of glue_table_arns)


ATHENA_QUERIES = (
    "athena:StartQueryExecution",
    "athena:GetQueryExecution",
    "athena:GetQueryResults",
    "athena:StopQueryExecution",
)
GLUE_READS = ("glue:GetDatabase", "glue:GetTable", "glue:GetPartitions")
# Athena reads and writes S3 with the caller's permissions: its results location (multipart
# writes, reads of results) and, for the source data, bucket location and listing.
ATHENA_RESULT_OBJECTS = ("s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts")
# DynamoDB writes an export with the caller's permissions ("Requesting a table export").
EXPORT_WRITES = ("s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl")
# Athena writes an Iceberg table's data and metadata files with the caller's permissions, and
# VACUUM deletes the files no snapshot holds any more.
ICEBERG_OBJECTS = ("s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload")


def _chain_statements(table_arn: str, audit_bucket_arn: str) -> list[Statement]:
    """The nightly chain (`reconcile --nightly`, either engine): the table's restorable window,
    its full and incremental exports, the newest inventories, the kept table states.
    """
    audit = audit_bucket_arn
    read = [layout.INVENTORY_PREFIX, layout.DYNAMODB_EXPORTS_PREFIX, layout.TABLE_STATE_PREFIX]
    return [
        statement("ReadRestoreWindow", ["dynamodb:DescribeContinuousBackups"], [table_arn]),
        statement("ExportTable", ["dynamodb:ExportTableToPointInTime"], [table_arn]),
        statement("DescribeExports", ["dynamodb:DescribeExport"], [f"{table_arn}/export/*"]),
        statement("WriteExports", EXPORT_WRITES, [objects(audit, layout.DYNAMODB_EXPORTS_PREFIX)]),
        statement("ReadAuditData", ["s3:GetObject"], [objects(audit, p) for p in read]),
        # The newest inventory and state are found by listing; a state's location is checked
        # free with a HeadObject, whose 404 S3 gives only to a caller that may list the bucket
        # (no prefix condition then). The bucket holds generated audit data only.
        statement("ListAuditData", ["s3:ListBucket"], [audit]),
        statement("KeepTableStates", ["s3:PutObject"], [objects(audit, layout.TABLE_STATE_PREFIX)]),
    ]


def _catalog_statements(reports_bucket_arn: str, catalog: CatalogArns) -> list[Statement]:
    audit = catalog["audit_bucket_arn"]
    results = objects(reports_bucket_arn, layout.ATHENA_RESULTS_PREFIX)
    return [
        statement("QueryInWorkgroup", ATHENA_QUERIES, [catalog["workgroup_arn"]]),
        statement(
            "ReadCatalog",
            GLUE_READS,
            [catalog["glue_catalog_arn"], catalog["glue_database_arn"], *catalog["glue_table_arns"]],
        ),
        # An Iceberg commit (MERGE, DELETE, INSERT, VACUUM) points the table at its new metadata.
        statement(
            "CommitStateTable",
            ["glue:UpdateTable"],
            [catalog["glue_catalog_arn"], catalog["glue_database_arn"], catalog["state_table_arn"]],
        ),
        statement("StateTableFiles", ICEBERG_OBJECTS, [objects(audit, layout.ICEBERG_PREFIX)]),
        statement("LocateBuckets", ["s3:GetBucketLocation"], [audit, reports_bucket_arn]),
        statement("QueryResults", ATHENA_RESULT_OBJECTS, [results]),
        _list_prefixes("ListQueryResults", reports_bucket_arn, [layout.ATHENA_RESULTS_PREFIX]),
        statement("ListQueryUploads", ["s3:ListBucketMultipartUploads"], [reports_bucket_arn]),
    ]


def reconcile_task_policy(
    *,
    table_arn: str,
    raw_bucket_arn: str,
    processed_bucket_arn: str,
    reports_bucket_arn: str,
    key_arn: str,
    audit_bucket_arn: str,
    catalog: CatalogArns | None = None,
    audit_log_bucket_arn: str | None = None,
    reports_topic_arn: str | None = None,
    metrics_namespace: str | None = None,
) -> Policy:
    """The audit: read the table and both data buckets; write only its own report and, nightly,
    the table state it keeps (the chain's exports and states in the audit-data bucket). With
    `reports_topic_arn`, announce each written report there (SNS Publish).

    With `catalog` (docuflow:reconcileEngine athena): run the rules as Athena queries in the
    stack's workgroup over the Glue tables, and keep the Iceberg table they read. With
    `audit_log_bucket_arn` (the polars engine's nightly runs `--audit-log`): read the change log
    to check its completeness.
    """
    return document(
        *_reconcile_statements(
            table_arn, raw_bucket_arn, processed_bucket_arn, reports_bucket_arn, key_arn, audit_log_bucket_arn
        ),
        *_chain_statements(table_arn, audit_bucket_arn),
        *(_catalog_statements(reports_bucket_arn, catalog) if catalog else []),
        *_announce_reports(reports_topic_arn),
        *publish_metrics(metrics_namespace),
    )


def _announce_reports(topic_arn: str | None) -> list[Statement]:
    return [statement("AnnounceReports", ["sns:Publish"], [topic_arn])] if topic_arn else []


def publish_metrics(namespace: str | None) -> list[Statement]:
    """PutMetricData has no resource type in IAM: the grant is narrowed to the stage's namespace
    (jobs.contract.metrics.namespace) by its condition key instead.
    """
    if not namespace:
        return []
    condition = {"StringEquals": {"cloudwatch:namespace": namespace}}
    return [statement("PublishRunMetrics", ["cloudwatch:PutMetricData"], "*", condition=condition)]


def repair_task_policy(
    *,
    table_arn: str,
    raw_bucket_arn: str,
    processed_bucket_arn: str,
    reports_bucket_arn: str,
    key_arn: str,
    arrivals_queue_arn: str,
    audit_bucket_arn: str,
    catalog: CatalogArns | None = None,
    audit_log_bucket_arn: str | None = None,
    reports_topic_arn: str | None = None,
    metrics_namespace: str | None = None,
) -> Policy:
    """The audit plus its safe repairs: read an item again and put it back conditionally
    (TransactWriteItems of Puts guarded by the version the snapshot saw), and send UNPROCESSED_RAW
    objects back to the arrival queue so the next drain takes them. Each repair that depends on a
    raw object heads it first (an orphan is rebuilt, a tombstone written, an arrival re-queued
    only while the object is as the finding says).
    """
    return document(
        *_reconcile_statements(
            table_arn, raw_bucket_arn, processed_bucket_arn, reports_bucket_arn, key_arn, audit_log_bucket_arn
        ),
        *_chain_statements(table_arn, audit_bucket_arn),
        *(_catalog_statements(reports_bucket_arn, catalog) if catalog else []),
        # A tombstone (MISSING_RAW) deletes the duplicate markers its document held, in its transaction.
        statement("RepairItems", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"], [table_arn]),
        statement("HeadRaw", ["s3:GetObject"], [objects(raw_bucket_arn, layout.RAW_PREFIX)]),
        statement("RequeueArrivals", ["sqs:SendMessage"], [arrivals_queue_arn]),
        *_announce_reports(reports_topic_arn),
        *publish_metrics(metrics_namespace),
    )


def review_api_policy(*, table_arn: str, processed_bucket_arn: str, key_arn: str) -> Policy:
    """The review API (jobs.review, jobs.documents.url): act on one document at a time.

    Reads an item (GetItem) and a duplicate marker; writes the next version with the markers a
    correction moves (TransactWriteItems of Puts and Deletes). Reads result.json as the item knows
    it: GetObject If-Match, and when a writer that lost left bytes on top, the version with that
    ETag (ListBucketVersions on the key, GetObjectVersion); writes it back tagged with its
    retention, and under the legal hold of a held document (s3:PutObjectLegalHold); lists nothing
    else (ListBucket only so a missing key answers 404). Presigned GETs
    of result.json are signed with this role: the browser's GetObject is authorized as this
    role's, so the read grant covers them and nothing else in the bucket. No raw document, no
    report, no queue.
    """
    results = objects(processed_bucket_arn, layout.PROCESSED_PREFIX)
    return document(
        statement("ActOnItems", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"], [table_arn]),
        statement("ReadResults", ["s3:GetObject", "s3:GetObjectVersion"], [results]),
        statement("WriteResults", ["s3:PutObject", "s3:PutObjectTagging", "s3:PutObjectLegalHold"], [results]),
        statement("FindResults", ["s3:ListBucket", "s3:ListBucketVersions"], [processed_bucket_arn]),
        _use_data_key(key_arn),
    )


def _document_prefixes(
    raw_bucket_arn: str, processed_bucket_arn: str, action: str = "s3:ListBucketVersions"
) -> tuple[list[str], list[Statement]]:
    """The documents' objects in both data buckets, and the listing (of versions, by default)
    of their prefixes.
    """
    documents = [objects(raw_bucket_arn, layout.RAW_PREFIX), objects(processed_bucket_arn, layout.PROCESSED_PREFIX)]
    kind = "Versions" if action == "s3:ListBucketVersions" else "Objects"
    listing = [
        _list_prefixes(f"ListRaw{kind}", raw_bucket_arn, [layout.RAW_PREFIX], action),
        _list_prefixes(f"ListResult{kind}", processed_bucket_arn, [layout.PROCESSED_PREFIX], action),
    ]
    return documents, listing


def documents_task_policy(
    *,
    table_arn: str,
    index_arn: str,
    raw_bucket_arn: str,
    processed_bucket_arn: str,
    arrivals_queue_arn: str,
    key_arn: str,
    metrics_namespace: str | None = None,
) -> Policy:
    """The owner's actions on one document (jobs.documents: list, delete, restore).

    Delete puts delete markers over the document's current objects (DeleteObject without a
    version, listed first under its prefix); restore removes those markers, which S3 authorizes
    as s3:DeleteObjectVersion: IAM has no condition that tells a marker from a data version
    (s3:versionid only), so this role and the erasure's are the two that hold it, and the code
    removes markers only (jobs.documents.actions.markers_of_delete). Items are read and written
    conditionally on their version (GetItem, a transaction Put); the delete gives the document's
    duplicate markers up in the same transaction (Deletes) and a restore puts them back; lists are
    Queries of a user's documents or of the status index. A restore that makes current again an
    upload its delete hid sends it to the arrival queue (SendMessageBatch, authorized as
    sqs:SendMessage; the queue is encrypted with
    the data key, so SQS asks KMS on the sender's behalf), as reconcile's repair does. An action
    publishes its run's metrics (jobs.runtime, in the stage's namespace).
    """
    documents, versions = _document_prefixes(raw_bucket_arn, processed_bucket_arn)
    _, current = _document_prefixes(raw_bucket_arn, processed_bucket_arn, "s3:ListBucket")
    return document(
        statement("ReadWriteItems", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"], [table_arn]),
        statement("ListDocuments", ["dynamodb:Query"], [table_arn, index_arn]),
        *current,
        *versions,
        statement("HideObjects", ["s3:DeleteObject"], documents),
        statement("RemoveDeleteMarkers", ["s3:DeleteObjectVersion"], documents),
        statement("RequeueRestoredUploads", ["sqs:SendMessage"], [arrivals_queue_arn]),
        _use_data_key(key_arn),
        *publish_metrics(metrics_namespace),
    )


def legal_hold_task_policy(
    *, table_arn: str, raw_bucket_arn: str, processed_bucket_arn: str, metrics_namespace: str | None = None
) -> Policy:
    """An operator's legal hold (jobs.documents hold/--release): Object Lock legal holds on every
    version of the document's objects, listed first, and the item's hold, conditionally, with its
    duplicate markers written again in the same transaction (their TTL is the item's); and the
    run's metrics.
    """
    documents, listing = _document_prefixes(raw_bucket_arn, processed_bucket_arn)
    return document(
        statement("ReadWriteItems", ["dynamodb:GetItem", "dynamodb:PutItem"], [table_arn]),
        *listing,
        statement("PlaceLegalHolds", ["s3:PutObjectLegalHold"], documents),
        *publish_metrics(metrics_namespace),
    )


def erasure_task_policy(
    *,
    table_arn: str,
    raw_bucket_arn: str,
    processed_bucket_arn: str,
    reports_bucket_arn: str,
    key_arn: str,
    metrics_namespace: str | None = None,
) -> Policy:
    """A GDPR erasure (jobs.erasure): the only role that deletes object versions and items for good.

    It Queries a user's partition, reads and writes their erasure marker (GetItem, a
    transaction Put), deletes items conditionally (transaction Deletes), lists the versions
    under the data prefixes and deletes them (DeleteObjects, authorized per version as
    s3:DeleteObjectVersion), and writes its receipt once under erasure/ in the reports bucket.
    A version S3 refuses to delete is asked for its legal hold (GetObjectLegalHold): a held one
    is kept, with its item, and named in the receipt. It publishes its run's metrics.
    """
    documents, listing = _document_prefixes(raw_bucket_arn, processed_bucket_arn)
    return document(
        statement(
            "EraseItems",
            ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"],
            [table_arn],
        ),
        *listing,
        statement("DeleteVersions", ["s3:DeleteObjectVersion"], documents),
        statement("ReadLegalHolds", ["s3:GetObjectLegalHold"], documents),
        statement("WriteReceipt", ["s3:PutObject"], [objects(reports_bucket_arn, layout.ERASURE_PREFIX)]),
        statement("UseDataKey", ["kms:GenerateDataKey"], [key_arn]),
        *publish_metrics(metrics_namespace),
    )


def arrivals_queue_policy(queue_arn: str, bucket_arn: str, account_id: str) -> Policy:
    """Only the raw bucket, in this account, may send its event notifications to the queue."""
    return document(
        statement(
            "RawBucketNotifies",
            ["sqs:SendMessage"],
            [queue_arn],
            principal={"Service": "s3.amazonaws.com"},
            condition={"ArnEquals": {"aws:SourceArn": bucket_arn}, "StringEquals": {"aws:SourceAccount": account_id}},
        )
    )


def ecr_repository_arn(image_uri: str) -> str | None:
    """The repository ARN of an ECR image URI; None for images from other registries."""
    match = _ECR_IMAGE.match(image_uri)
    if not match:
        return None
    return f"arn:aws:ecr:{match['region']}:{match['account']}:repository/{match['repo']}"


# Release images a repository keeps: ECR allows no "keep" action, so a rule that expires release
# images beyond this count, ahead of the count rule, shelters them (an image one rule selects
# is never expired by a rule of lower priority). Years of releases at several a week.
RELEASE_IMAGES_KEPT = 1000


def ecr_lifecycle_policy(
    keep: int, release_tag_prefixes: Sequence[str], *, deployed_tag: str | None = None
) -> dict[str, Any]:
    """The job repository's lifecycle: the image the task definitions name (`deployed_tag`,
    whatever its kind or age), every release-tagged image (up to RELEASE_IMAGES_KEPT), then the
    newest `keep` images of any other kind (untagged, branch builds); older ones expire.
    """
    rules: list[dict[str, Any]] = []
    if deployed_tag is not None:
        # ECR cannot see task definitions, and no rule selects a digest: this one selects the
        # deployed tag exactly (a pattern without a wildcard; tags are immutable here, so one
        # image) and never counts past it, and an image a rule selects is never expired by a
        # lower-priority one: not by the 1,000 releases after it, nor by the count rule.
        rules.append(
            {
                "rulePriority": 1,
                "description": "keep the image the task definitions run",
                "selection": {
                    "tagStatus": "tagged",
                    "tagPatternList": [deployed_tag],
                    "countType": "imageCountMoreThan",
                    "countNumber": 1,
                },
                "action": {"type": "expire"},
            }
        )
    if release_tag_prefixes:
        rules.append(
            {
                "rulePriority": len(rules) + 1,
                "description": "keep release images (a stack deploys only these)",
                "selection": {
                    "tagStatus": "tagged",
                    "tagPrefixList": list(release_tag_prefixes),
                    "countType": "imageCountMoreThan",
                    "countNumber": RELEASE_IMAGES_KEPT,
                },
                "action": {"type": "expire"},
            }
        )
    rules.append(
        {
            "rulePriority": len(rules) + 1,
            "description": f"keep the newest {keep} other images",
            "selection": {"tagStatus": "any", "countType": "imageCountMoreThan", "countNumber": keep},
            "action": {"type": "expire"},
        }
    )
    return {"rules": rules}


def execution_role_policy(*, log_group_arns: Sequence[str], key_arn: str, repository_arn: str | None) -> Policy:
    """What ECS itself needs to start a job task: pull the image, write its log streams."""
    statements = [
        statement(
            "WriteJobLogs",
            ["logs:CreateLogStream", "logs:PutLogEvents"],
            [f"{arn}:log-stream:*" for arn in log_group_arns],
        ),
    ]
    if repository_arn is not None:
        statements += [
            # GetAuthorizationToken has no resource type: `*` is the only valid resource.
            statement("EcrLogin", ["ecr:GetAuthorizationToken"], "*"),
            statement(
                "PullJobImage",
                ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
                [repository_arn],
            ),
            statement("DecryptImageLayers", ["kms:Decrypt"], [key_arn]),
        ]
    return document(*statements)


def schedule_arn_pattern(region: str, account_id: str, group_name: str) -> str:
    """Every schedule of one schedule group (the KMS encryption context Scheduler decrypts with)."""
    return f"arn:aws:scheduler:{region}:{account_id}:schedule/{group_name}/*"


def scheduler_role_policy(
    *,
    cluster_arn: str,
    task_definition_arns: Sequence[str],
    pass_role_arns: Sequence[str],
    dead_letter_queue_arn: str,
    key_arn: str,
    schedule_arns: str,
) -> Policy:
    """EventBridge Scheduler starts the job tasks on our cluster and parks failures in its DLQ.

    The schedules are encrypted with the stack's key, and Scheduler decrypts a schedule's payload
    with this (execution) role when it fires: kms:Decrypt, only in the context of our schedules.
    The schedules start their tasks tagged (the stage budget must see their Fargate hours), and ECS
    authorizes tags on create as ecs:TagResource too: granted for RunTask's create action only, on
    the cluster's tasks.
    """
    return document(
        statement(
            "RunJobTasks",
            ["ecs:RunTask"],
            list(task_definition_arns),
            condition={"ArnEquals": {"ecs:cluster": cluster_arn}},
        ),
        statement(
            "TagStartedTasks",
            ["ecs:TagResource"],
            [cluster_arn.replace(":cluster/", ":task/", 1) + "/*"],
            condition={"StringEquals": {"ecs:CreateAction": "RunTask"}},
        ),
        statement(
            "PassJobRoles",
            ["iam:PassRole"],
            list(pass_role_arns),
            condition={"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}},
        ),
        statement("DeadLetter", ["sqs:SendMessage"], [dead_letter_queue_arn]),
        statement(
            "EncryptDeadLetters",
            KMS_ENCRYPT,
            [key_arn],
            condition={"ArnEquals": {"kms:EncryptionContext:aws:sqs:arn": dead_letter_queue_arn}},
        ),
        statement(
            "DecryptSchedules",
            ["kms:Decrypt"],
            [key_arn],
            condition={"ArnLike": {"kms:EncryptionContext:aws:scheduler:schedule:arn": schedule_arns}},
        ),
    )


# --- status events -------------------------------------------------------------------------
def pipe_role_policy(*, stream_arn: str, queue_arn: str, dead_letter_queue_arn: str, key_arn: str) -> Policy:
    """Read the table stream, deliver to the queue, park poison batches in the DLQ.

    The four stream actions are the ones AWS's EventBridge Pipes documentation lists for a
    DynamoDB stream source ("Event source permissions for Amazon EventBridge Pipes").
    """
    return document(
        statement(
            "ReadTableStream",
            ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
            [stream_arn],
        ),
        # ListStreams has no resource type in IAM: "*" is the only resource it accepts.
        statement("ListTableStreams", ["dynamodb:ListStreams"], "*"),
        statement("DeliverEvents", ["sqs:SendMessage"], [queue_arn, dead_letter_queue_arn]),
        statement("UseDataKey", KMS_USE, [key_arn]),
    )


# --- the audit trail (components/audit_trail.py, docs/audit.md) ---------------------------------
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
        _deny_insecure_transport(bucket_arn),
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
        _deny_insecure_transport(bucket_arn),
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
        _use_data_key(key_arn),
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
        _list_prefixes("ListQueryResults", reports_bucket_arn, [results]),
        statement("LocateResults", ["s3:GetBucketLocation", "s3:ListBucketMultipartUploads"], [reports_bucket_arn]),
        statement("DecryptLogs", KMS_ENCRYPT, [key_arn]),
    )


# --- alerts --------------------------------------------------------------------------------
def alarm_topic_policy(topic_arn: str, account_id: str) -> Policy:
    return document(
        statement(
            "AlarmsAndRulesPublish",
            ["sns:Publish"],
            [topic_arn],
            principal={"Service": list(ALERT_PUBLISHERS)},
            condition={"StringEquals": {"aws:SourceAccount": account_id}},
        ),
    )
