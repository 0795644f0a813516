"""The ingest task's role (registry task `ingest`): what a drain, a backfill and a redrive call.

Pure: built from the stack's TaskResources (jobs.contract.iam), no Pulumi, no boto3.
"""

from __future__ import annotations

from jobs.contract import layout
from jobs.contract.iam import (
    Policy,
    Statement,
    TaskResources,
    document,
    objects,
    publish_metrics,
    statement,
    use_data_key,
)

# Amazon Textract AnalyzeExpense, synchronous for images and asynchronous for PDFs. Textract reads
# the S3 object with the caller's own permissions (ReadRaw) and key (UseDataKey).
TEXTRACT_EXPENSE = ("textract:AnalyzeExpense", "textract:StartExpenseAnalysis", "textract:GetExpenseAnalysis")


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


def ingest_task_policy(resources: TaskResources) -> Policy:
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
    r = resources
    raw, processed = r.raw_bucket_arn, r.processed_bucket_arn
    return document(
        *_arrival_statements(r.arrivals_queue_arn, r.arrivals_dead_letter_queue_arn),
        # The backfill lists raw/; and S3 answers 404 for an object that is gone (a raw upload
        # deleted before the drain reads it, a result.json removed under a fenced write) only to a
        # caller that may list the bucket (403 otherwise, which would read as a refusal, not as a
        # missing object). That check carries no s3:prefix: no condition here.
        statement("ListDataBuckets", ["s3:ListBucket"], [raw, processed]),
        statement("ReadRaw", ["s3:GetObject"], [objects(raw, layout.RAW_PREFIX)]),
        statement("TagRawRetention", ["s3:PutObjectTagging"], [objects(raw, layout.RAW_PREFIX)]),
        statement("HeadResults", ["s3:GetObject"], [objects(processed, layout.PROCESSED_PREFIX)]),
        # A held document's result.json is written under its legal hold (the PutObject's
        # x-amz-object-lock-legal-hold, which S3 authorizes as s3:PutObjectLegalHold too).
        statement(
            "WriteResults",
            ["s3:PutObject", "s3:PutObjectTagging", "s3:PutObjectLegalHold"],
            [objects(processed, layout.PROCESSED_PREFIX)],
        ),
        # Write-once; a resend refused after a lost response reads the summary back to see
        # its own bytes (jobs.store.s3.Buckets.put_once).
        statement(
            "WriteIngestRunSummary",
            ["s3:GetObject", "s3:PutObject"],
            [objects(r.reports_bucket_arn, layout.INGEST_RUNS_PREFIX)],
        ),
        statement(
            "ReadAndClaimItems",
            ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"],
            [r.table_arn],
        ),
        use_data_key(r.key_arn),
        *(_textract_statements(r.table_arn) if r.textract else []),
        *publish_metrics(r.metrics_namespace),
    )


def _textract_statements(table_arn: str) -> list[Statement]:
    return [
        # IAM has no resource type for Textract's expense actions: "*" is the only resource.
        statement("AnalyzeExpense", TEXTRACT_EXPENSE, "*"),
        # The night's Textract page counter (jobs.ingest.pages): a conditional ADD, every task's pages.
        statement("CountTextractPages", ["dynamodb:UpdateItem"], [table_arn]),
    ]
