"""The document actions' roles (registry tasks `documents` and `legal-hold`): an owner's list,
delete and restore, and an operator's legal hold.

Pure: built from the stack's TaskResources (jobs.contract.iam), no Pulumi, no boto3.
"""

from __future__ import annotations

from jobs.contract.iam import (
    Policy,
    TaskResources,
    document,
    document_prefixes,
    publish_metrics,
    statement,
    use_data_key,
)


def documents_task_policy(resources: TaskResources) -> Policy:
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
    r = resources
    documents, versions = document_prefixes(r.raw_bucket_arn, r.processed_bucket_arn)
    _, current = document_prefixes(r.raw_bucket_arn, r.processed_bucket_arn, "s3:ListBucket")
    return document(
        statement("ReadWriteItems", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"], [r.table_arn]),
        statement("ListDocuments", ["dynamodb:Query"], [r.table_arn, r.index_arn]),
        *current,
        *versions,
        statement("HideObjects", ["s3:DeleteObject"], documents),
        statement("RemoveDeleteMarkers", ["s3:DeleteObjectVersion"], documents),
        statement("RequeueRestoredUploads", ["sqs:SendMessage"], [r.arrivals_queue_arn]),
        use_data_key(r.key_arn),
        *publish_metrics(r.metrics_namespace),
    )


def legal_hold_task_policy(resources: TaskResources) -> Policy:
    """An operator's legal hold (jobs.documents hold/--release): Object Lock legal holds on every
    version of the document's objects, listed first, and the item's hold, conditionally, with its
    duplicate markers written again in the same transaction (their TTL is the item's); and the
    run's metrics.
    """
    r = resources
    documents, listing = document_prefixes(r.raw_bucket_arn, r.processed_bucket_arn)
    return document(
        statement("ReadWriteItems", ["dynamodb:GetItem", "dynamodb:PutItem"], [r.table_arn]),
        *listing,
        statement("PlaceLegalHolds", ["s3:PutObjectLegalHold"], documents),
        *publish_metrics(r.metrics_namespace),
    )
