"""The two dashboard reads, on top of the table adapter; pages carry an opaque next-token."""

from __future__ import annotations

from jobs.contract import Status
from jobs.errors import BadInputError
from jobs.runtime.stores import document_table
from jobs.settings import JobSettings
from jobs.store.dynamo import DocumentTable, Page

MAX_LIMIT = 1000


def list_documents(
    settings: JobSettings,
    *,
    user_id: str | None,
    status: Status | None,
    limit: int = 25,
    next_token: str | None = None,
    table: DocumentTable | None = None,
) -> Page:
    """A user's documents (optionally one status), or with only `status` the queue, newest first.

    A user's list leaves out deleted documents (their own deletes, and uploads that vanished)
    unless it asks for DELETED.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInputError(f"limit {limit} is outside 1..{MAX_LIMIT}")
    table = table or document_table(settings)
    if user_id is not None:
        return table.query_user(user_id, status, limit, next_token, exclude=Status.DELETED)
    if status is None:
        raise BadInputError("give --user, --status, or both")
    return table.query_status(status, limit, next_token)
