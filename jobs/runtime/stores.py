"""The AWS adapters a run builds from its settings, built one way: the document table (with its
index), the buckets and the arrival queue, on the clients boto3's configuration gives, counted in
the run's call metrics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client, sqs_client
from jobs.store.dynamo import DocumentTable
from jobs.store.queue import ArrivalQueue
from jobs.store.s3 import Buckets

if TYPE_CHECKING:
    from jobs.store.clients import DynamoDBClient, S3Client, SQSClient


def document_table(
    settings: JobSettings,
    calls: CallMetrics | None = None,
    *,
    table_name: str | None = None,
    client: DynamoDBClient | None = None,
) -> DocumentTable:
    """The stack's table (or `table_name`: a drill's or a restored one, with the same index name)."""
    return DocumentTable(
        client or dynamodb_client(settings),
        table_name or settings.store.table_name,
        settings.store.index_name,
        calls or CallMetrics(),
    )


def buckets(settings: JobSettings, calls: CallMetrics | None = None, *, client: S3Client | None = None) -> Buckets:
    """The stack's buckets (raw, processed, reports, ...: one S3 client for all)."""
    return Buckets(client or s3_client(settings), calls or CallMetrics())


def arrivals(
    settings: JobSettings, calls: CallMetrics | None = None, *, client: SQSClient | None = None
) -> ArrivalQueue | None:
    """The stack's arrival queue, or None when it has none (a backfill-only stack)."""
    if not settings.store.arrivals_queue_url:
        return None
    return ArrivalQueue(client or sqs_client(settings), settings.store.arrivals_queue_url, calls or CallMetrics())
