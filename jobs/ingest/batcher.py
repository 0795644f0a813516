"""Groups the conditional item writes of many worker threads into DynamoDB transactions.

A worker hands over its finished item and waits for the outcome; a flusher thread sends up to
`max_batch` waiting puts per TransactWriteItems after at most `max_wait` seconds. Each put keeps
its own condition, so batching changes the request count, never the semantics.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field

from jobs.store.dynamo import TRANSACT_CHUNK, ConditionalPut, DocumentTable


@dataclass
class _Entry:
    put: ConditionalPut
    done: threading.Event = field(default_factory=threading.Event)
    landed: bool = False
    error: BaseException | None = None


class WriteBatcher:
    def __init__(self, table: DocumentTable, operation: str, max_batch: int = TRANSACT_CHUNK, max_wait: float = 0.02) -> None:
        self._table = table
        self._operation = operation
        self._max_batch = max_batch
        self._max_wait = max_wait
        self._queue: queue.Queue[_Entry] = queue.Queue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._flush_forever, name=f"batcher-{operation}", daemon=True)
        self._thread.start()

    def put(self, put: ConditionalPut) -> bool:
        """Block until the put was sent; False when its condition failed."""
        entry = _Entry(put)
        self._queue.put(entry)
        entry.done.wait()
        if entry.error is not None:
            raise entry.error
        return entry.landed

    def close(self) -> None:
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
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    batch.append(self._queue.get(timeout=remaining))
                except queue.Empty:
                    break
            self._flush(batch)

    def _flush(self, batch: list[_Entry]) -> None:
        try:
            landed = self._table.put_all([e.put for e in batch], self._operation)
        except BaseException as exc:  # noqa: BLE001 - handed to every waiting worker, which re-raises
            for entry in batch:
                entry.error = exc
                entry.done.set()
            return
        for entry, ok in zip(batch, landed, strict=True):
            entry.landed = ok
            entry.done.set()
