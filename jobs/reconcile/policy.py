"""The reconcile tasks' roles (registry tasks `reconcile` and `repair`): the nightly audit, and the
audit plus its safe repairs.

Pure: built from the stack's TaskResources (jobs.contract.iam), no Pulumi, no boto3.
"""

from __future__ import annotations

from jobs.contract import layout
from jobs.contract.iam import (
    ATHENA_QUERIES,
    ATHENA_RESULT_OBJECTS,
    GLUE_READS,
    CatalogArns,
    Policy,
    Statement,
    TaskResources,
    document,
    document_prefixes,
    list_prefixes,
    objects,
    publish_metrics,
    statement,
    use_data_key,
)

# The night's report prefixes as an IAM glob: layout.reconciliation_prefix's
# `reconciliation/<YYYY-MM-DD>/<runId>/`. `?` is one character, so the glob admits the dated
# prefixes only, never reconciliation/acknowledgements/ or reconciliation/packs/.
REPORT_RUNS_PATTERN = f"{layout.RECONCILIATION_PREFIX}????-??-??/"
# DynamoDB writes an export with the caller's permissions ("Requesting a table export").
EXPORT_WRITES = ("s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl")
# Athena writes an Iceberg table's data and metadata files with the caller's permissions, and
# VACUUM deletes the files no snapshot holds any more.
ICEBERG_OBJECTS = ("s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload")


def _reconcile_statements(r: TaskResources) -> list[Statement]:
    documents, versions = document_prefixes(r.raw_bucket_arn, r.processed_bucket_arn)
    return [
        *(_audit_log_statements(r.audit_log_bucket_arn) if r.audit_log_bucket_arn else []),
        # Reconcile lists the whole data buckets, so objects outside the layout are found too;
        # listing reveals keys only. It reads result.json (--deep) but never a raw document.
        statement("ListDataBuckets", ["s3:ListBucket"], [r.raw_bucket_arn, r.processed_bucket_arn]),
        statement("ReadResults", ["s3:GetObject"], [objects(r.processed_bucket_arn, layout.PROCESSED_PREFIX)]),
        # A live run's lifecycle rules (jobs.reconcile.rules.lifecycle): the versions of held and of
        # hard-deleted documents, their legal holds, and (--deep) the objects' retention tags.
        *versions,
        statement("ReadLegalHoldsAndTags", ["s3:GetObjectLegalHold", "s3:GetObjectTagging"], documents),
        statement("ScanTable", ["dynamodb:Scan"], [r.table_arn]),
        # The report is written once (If-None-Match) beside the earlier reports it charts; the
        # drill's reports are listed, never read, for the days since the last drill (drill-overdue).
        list_prefixes("ListReports", r.reports_bucket_arn, [layout.RECONCILIATION_PREFIX, layout.DRILL_RUNS_PREFIX]),
        # It reads every earlier report, ledger and acknowledgement, but writes only its own
        # night's reports: an acknowledgement is a person's acceptance of the run's findings, so
        # the run may not write one (reconciliation/acknowledgements/), nor a month's pack.
        statement("ReadReports", ["s3:GetObject"], [objects(r.reports_bucket_arn, layout.RECONCILIATION_PREFIX)]),
        statement("WriteReports", ["s3:PutObject"], [objects(r.reports_bucket_arn, REPORT_RUNS_PATTERN)]),
        use_data_key(r.key_arn),
    ]


def _audit_log_statements(audit_log_bucket_arn: str) -> list[Statement]:
    """--audit-log: list and read the change log and its conversion failures (docs/audit.md)."""
    prefixes = [layout.AUDIT_CHANGES_PREFIX, layout.AUDIT_ERRORS_PREFIX]
    return [
        list_prefixes("ListAuditLog", audit_log_bucket_arn, prefixes),
        statement("ReadAuditLog", ["s3:GetObject"], [objects(audit_log_bucket_arn, p) for p in prefixes]),
    ]


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
        list_prefixes("ListQueryResults", reports_bucket_arn, [layout.ATHENA_RESULTS_PREFIX]),
        statement("ListQueryUploads", ["s3:ListBucketMultipartUploads"], [reports_bucket_arn]),
    ]


def _audit_statements(r: TaskResources) -> list[Statement]:
    """What the audit and its repair share: the reconcile, the nightly chain and the catalog."""
    return [
        *_reconcile_statements(r),
        *_chain_statements(r.table_arn, r.audit_bucket_arn),
        *(_catalog_statements(r.reports_bucket_arn, r.catalog) if r.catalog else []),
    ]


def reconcile_task_policy(resources: TaskResources) -> Policy:
    """The audit: read the table and both data buckets; write only its own report and, nightly,
    the table state it keeps (the chain's exports and states in the audit-data bucket). With
    `reports_topic_arn`, announce each written report there (SNS Publish).

    With `catalog` (docuflow:reconcileEngine athena): run the rules as Athena queries in the
    stack's workgroup over the Glue tables, and keep the Iceberg table they read. With
    `audit_log_bucket_arn` (the polars engine's nightly runs `--audit-log`): read the change log
    to check its completeness.
    """
    return document(
        *_audit_statements(resources),
        *_announce_reports(resources.reports_topic_arn),
        *publish_metrics(resources.metrics_namespace),
    )


def _announce_reports(topic_arn: str | None) -> list[Statement]:
    return [statement("AnnounceReports", ["sns:Publish"], [topic_arn])] if topic_arn else []


def repair_task_policy(resources: TaskResources) -> Policy:
    """The audit plus its safe repairs: read an item again and put it back conditionally
    (TransactWriteItems of Puts guarded by the version the snapshot saw), and send UNPROCESSED_RAW
    objects back to the arrival queue so the next drain takes them. Each repair that depends on a
    raw object heads it first (an orphan is rebuilt, a tombstone written, an arrival re-queued
    only while the object is as the finding says).
    """
    r = resources
    return document(
        *_audit_statements(r),
        # A tombstone (MISSING_RAW) deletes the duplicate markers its document held, in its transaction.
        statement("RepairItems", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"], [r.table_arn]),
        statement("HeadRaw", ["s3:GetObject"], [objects(r.raw_bucket_arn, layout.RAW_PREFIX)]),
        statement("RequeueArrivals", ["sqs:SendMessage"], [r.arrivals_queue_arn]),
        *_announce_reports(r.reports_topic_arn),
        *publish_metrics(r.metrics_namespace),
    )
