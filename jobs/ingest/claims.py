"""Claims: sent 25 to a transaction, held while their documents are worked, handed back on a stop.

A claim is a conditional put on the item's version (attribute_not_exists for a new document)
that sets PROCESSING with a lease. A run that stops early (an outage, throttling past the retry
budget, SIGTERM) hands back every claim it has not finished: the lease ends at once, under the
same condition as a finish (our lease and version still hold), so a document another worker has
taken over is left alone and the next run need not wait out the lease.
"""

from __future__ import annotations

import logging
import threading

from jobs.contract import DocumentItem, layout
from jobs.errors import StoreError
from jobs.ingest.plan import released
from jobs.store.dynamo import TRANSACT_CHUNK, DocumentTable
from jobs.store.table_writes import claim_put, finish_put

logger = logging.getLogger(__name__)


class Claims:
    """Thread-safe: claim threads add, finished documents drop out, the run releases what is left."""

    def __init__(self, table: DocumentTable) -> None:
        self._table = table
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str], DocumentItem] = {}
        self._failed: set[tuple[str, str]] = set()

    def claim(self, claims: list[tuple[DocumentItem, int | None]]) -> list[bool]:
        """Send (claim, expected version) pairs in one transaction each chunk; the ones that
        landed are held. False: another worker's write came first.
        """
        landed = self._table.put_all(
            [claim_put(item, version) for item, version in claims], "dynamodb.TransactWrite.claim"
        )
        with self._lock:
            for (item, _), ok in zip(claims, landed, strict=True):
                if ok:
                    self._held[(item.userId, item.documentId)] = item
        return landed

    def drop(self, user_id: str, document_id: str) -> None:
        """The document was finished (or its claim lost): nothing of ours is left to hand back."""
        with self._lock:
            self._held.pop((user_id, document_id), None)

    def failed(self, user_id: str, document_id: str) -> None:
        """The document's own processing raised: if handed back, its attempt counts."""
        with self._lock:
            self._failed.add((user_id, document_id))

    def release_all(self) -> tuple[int, int]:
        """Best effort (the store may be the thing that is down): (released, still leased)."""
        with self._lock:
            claims = [(c, (c.userId, c.documentId) not in self._failed) for c in self._held.values()]
            self._held.clear()
        if not claims:
            return 0, 0
        now = layout.utc_now()
        puts = [finish_put(released(c, now, refund=refund), c.leaseOwner or "", c.version) for c, refund in claims]
        released_count = settled = 0
        try:
            for start in range(0, len(puts), TRANSACT_CHUNK):
                chunk = puts[start : start + TRANSACT_CHUNK]
                # A put that loses its condition was taken over meanwhile: nothing of ours is left.
                released_count += sum(self._table.put_all(chunk, "dynamodb.TransactWrite.release"))
                settled += len(chunk)
        except StoreError as exc:
            logger.warning(
                "could not release every claim; the rest wait for their lease to expire",
                extra={"released": released_count, "leased": len(puts) - settled, "error": str(exc)},
            )
        return released_count, len(puts) - settled
