"""A short-lived presigned GET of one user's result.json: how the frontend reads a document's detail.

The caller is the API, which has authenticated the user: the key is built from that userId and the
documentId (layout.result_key), never taken from the caller, so a URL can only ever name the
user's own result.json, and only of a document the user has (its item, read strongly consistent,
must name that very result.json). The URL is signed locally with the caller's credentials (S3
checks them and the expiry when the browser uses it) and lives `result_url_seconds`, a stack
setting; a URL never outlives the credentials that signed it (a role session's, on AWS).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.contract import Status, layout
from jobs.errors import DocumentNotFoundError
from jobs.observability import CallMetrics
from jobs.runtime import stores
from jobs.settings import JobSettings
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets


@dataclass(frozen=True)
class ResultUrl:
    url: str
    expires_at: datetime


def result_url(
    settings: JobSettings,
    user_id: str,
    document_id: str,
    *,
    table: DocumentTable | None = None,
    buckets: Buckets | None = None,
    clock: Callable[[], datetime] = layout.utc_now,
) -> ResultUrl:
    """The presigned GET of `user_id`'s result.json of `document_id`; DocumentNotFoundError when
    the user has no such document, or it has no result.json (yet, or any more).
    """
    metrics = CallMetrics()
    table = table or stores.document_table(settings, metrics)
    buckets = buckets or stores.buckets(settings, metrics)
    key = layout.result_key(user_id, document_id)
    item = table.get(user_id, document_id)
    if item is None:
        raise DocumentNotFoundError(f"user {user_id!r} has no document {document_id!r}")
    if item.status == Status.DELETED or item.resultS3Uri != layout.s3_uri(settings.store.processed_bucket, key):
        raise DocumentNotFoundError(f"document {document_id!r} of user {user_id!r} has no result.json to read")
    now = clock()
    url = buckets.presigned_get(settings.store.processed_bucket, key, settings.review.result_url_seconds)
    return ResultUrl(url, now + timedelta(seconds=settings.review.result_url_seconds))
