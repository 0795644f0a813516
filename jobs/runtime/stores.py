"""The AWS adapters a run builds from its settings, built one way: the document table (with its
index, on the client boto3's configuration gives, counted in the run's call metrics).
"""

from __future__ import annotations

from typing import Any

from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client
from jobs.store.dynamo import DocumentTable


def document_table(
    settings: JobSettings, calls: CallMetrics | None = None, *, table_name: str | None = None, client: Any = None
) -> DocumentTable:
    """The stack's table (or `table_name`: a drill's or a restored one, with the same index name)."""
    return DocumentTable(
        client or dynamodb_client(settings),
        table_name or settings.store.table_name,
        settings.store.index_name,
        calls or CallMetrics(),
    )
