"""The erasure task's role (registry task `erasure`): the only role that deletes for good.

Pure: built from the stack's TaskResources (jobs.contract.iam), no Pulumi, no boto3.
"""

from __future__ import annotations

from jobs.contract import layout
from jobs.contract.iam import Policy, TaskResources, document, document_prefixes, objects, publish_metrics, statement


def erasure_task_policy(resources: TaskResources) -> Policy:
    """A GDPR erasure (jobs.erasure): the only role that deletes object versions and items for good.

    It Queries a user's partition, reads and writes their erasure marker (GetItem, a
    transaction Put), deletes items conditionally (transaction Deletes), lists the versions
    under the data prefixes and deletes them (DeleteObjects, authorized per version as
    s3:DeleteObjectVersion), and writes its receipt once under erasure/ in the reports bucket.
    A version S3 refuses to delete is asked for its legal hold (GetObjectLegalHold): a held one
    is kept, with its item, and named in the receipt. It publishes its run's metrics.
    """
    r = resources
    documents, listing = document_prefixes(r.raw_bucket_arn, r.processed_bucket_arn)
    return document(
        statement(
            "EraseItems",
            ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"],
            [r.table_arn],
        ),
        *listing,
        statement("DeleteVersions", ["s3:DeleteObjectVersion"], documents),
        statement("ReadLegalHolds", ["s3:GetObjectLegalHold"], documents),
        statement("WriteReceipt", ["s3:PutObject"], [objects(r.reports_bucket_arn, layout.ERASURE_PREFIX)]),
        statement("UseDataKey", ["kms:GenerateDataKey"], [r.key_arn]),
        *publish_metrics(r.metrics_namespace),
    )
