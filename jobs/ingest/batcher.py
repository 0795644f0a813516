"""Groups the conditional item writes of many worker threads into DynamoDB transactions.

A worker hands over its finished item (with the duplicate markers it takes or gives up, one write
group) and moves on to its next document; a flusher thread sends up to `max_batch` waiting groups
per TransactWriteItems after at most `max_wait` seconds, and each group's future then says
whether it landed or which of its conditions failed. Each group keeps its own conditions, so
batching changes the request count, never the semantics.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field

from jobs.errors import DynamoItemRejectedError
from jobs.store.dynamo import TRANSACT_CHUNK, DocumentTable
from jobs.store.table_writes import GroupOutcome, WriteGroup


@dataclass
class _Entry:
    group: WriteGroup
    landed: Future[GroupOutcome] = field(default_factory=Future)


class WriteBatcher:
    def __init__(
        self, table: DocumentTable, operation: str, max_batch: int = TRANSACT_CHUNK, max_wait: float = 0.1
    ) -> None:
        self._table = table
        self._operation = operation
        self._max_batch = max_batch
        self._max_wait = max_wait
        self._queue: queue.Queue[_Entry] = queue.Queue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._flush_forever, name=f"batcher-{operation}", daemon=True)
        self._thread.start()

    def submit(self, group: WriteGroup) -> Future[GroupOutcome]:
        """Queue a group; its future says whether it landed, or raises what the request raised."""
        entry = _Entry(group)
        self._queue.put(entry)
        return entry.landed

    def close(self) -> None:
        """Send what is queued, then stop."""
        self._closed.set()
        self._thread.join()

    def _flush_forever(self) -> None:
        while not (self._closed.is_set() and self._queue.empty()):
            try:
                first = self._queue.get(timeout=0.05)
            except queue.Empty:
                continue
            batch = [first]
            deadline = time.monotonic() + self._max_wait
            while len(batch) < self._max_batch:
                remaining = 0.0 if self._closed.is_set() else deadline - time.monotonic()
                try:
                    batch.append(self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait())
                except queue.Empty:
                    break
            self._flush(batch)

    def _flush(self, batch: list[_Entry]) -> None:
        try:
            landed = self._table.write_all([e.group for e in batch], self._operation)
        except DynamoItemRejectedError as exc:
            if len(batch) == 1:
                batch[0].landed.set_exception(exc)
                return
            # One item DynamoDB will not store cancels the whole transaction: resend one by one,
            # so only that item's worker learns of it and its neighbours land.
            for entry in batch:
                self._flush([entry])
            return
        except BaseException as exc:
            for entry in batch:
                entry.landed.set_exception(exc)
            return
        for entry, ok in zip(batch, landed, strict=True):
            entry.landed.set_result(ok)
