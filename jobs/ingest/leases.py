"""The claims a run holds but has not finished, and their release when the run aborts.

A run that stops on an infrastructure error (an outage, throttling past the retry budget) would
otherwise leave each claimed-but-unfinished document leased until its lease expires, as after a
crash. Releasing ends those leases at once, each under the same condition as a finish (our lease
and version still hold), so a document another worker has taken over is left alone.
"""

from __future__ import annotations

import logging
import threading

from botocore.exceptions import BotoCoreError, ClientError

from jobs.contract import DocumentItem, layout
from jobs.ingest.plan import released
from jobs.store.dynamo import TRANSACT_CHUNK, DocumentTable, TransactionNotSettledError, finish_put

logger = logging.getLogger(__name__)


class HeldClaims:
    """Thread-safe: claim threads add, finished documents drop out, the run releases what is left."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str], DocumentItem] = {}
        self._failed: set[tuple[str, str]] = set()

    def hold(self, claim: DocumentItem) -> None:
        with self._lock:
            self._held[(claim.userId, claim.documentId)] = claim

    def drop(self, user_id: str, document_id: str) -> None:
        with self._lock:
            self._held.pop((user_id, document_id), None)

    def failed(self, user_id: str, document_id: str) -> None:
        """The document's own processing raised: if handed back, its attempt counts."""
        with self._lock:
            self._failed.add((user_id, document_id))

    def release_all(self, table: DocumentTable) -> tuple[int, int]:
        """Best effort (the store may be the thing that is down): (released, still leased)."""
        with self._lock:
            claims = [(c, (c.userId, c.documentId) not in self._failed) for c in self._held.values()]
        if not claims:
            return 0, 0
        now = layout.utc_now()
        puts = [finish_put(released(c, now, refund=refund), c.leaseOwner or "", c.version) for c, refund in claims]
        released_count = settled = 0
        try:
            for start in range(0, len(puts), TRANSACT_CHUNK):
                chunk = puts[start : start + TRANSACT_CHUNK]
                # A put that loses its condition was taken over meanwhile: nothing of ours is left.
                released_count += sum(table.put_all(chunk, "dynamodb.TransactWrite.release"))
                settled += len(chunk)
        except (BotoCoreError, ClientError, TransactionNotSettledError) as exc:
            logger.warning(
                "could not release every claim; the rest wait for their lease to expire",
                extra={"released": released_count, "leased": len(puts) - settled, "error": str(exc)},
            )
        return released_count, len(puts) - settled
