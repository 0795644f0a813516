"""WriteBatcher: many threads' puts go out in transactions of at most 25; each put learns its own
outcome, and a failed request reaches every put it carried.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from jobs.contract import DocumentItem, Status
from jobs.errors import DynamoTransactionNotSettledError
from jobs.ingest.batcher import WriteBatcher
from jobs.store.dynamo import TRANSACT_CHUNK, ConditionalPut, claim_put

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def put(n: int) -> ConditionalPut:
    item = DocumentItem(
        userId="u",
        documentId=f"d{n}",
        status=Status.PROCESSING,
        createdAt=NOW,
        updatedAt=NOW,
        rawS3Uri="s3://raw/k",
        rawEtag='"e"',
    )
    return claim_put(item, None)


class RecordingTable:
    """Stands in for DocumentTable.write_all: odd document numbers lose their condition."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.requests: list[list[str]] = []
        self.fail = fail
        self._lock = threading.Lock()

    def write_all(self, puts: list[ConditionalPut], _operation: str) -> list[bool]:
        with self._lock:
            self.requests.append([p.item.documentId for p in puts])
        if self.fail is not None:
            raise self.fail
        return [int(p.item.documentId[1:]) % 2 == 0 for p in puts]


def test_puts_from_many_threads_are_batched_and_each_gets_its_own_outcome() -> None:
    table = RecordingTable()
    batcher = WriteBatcher(table, "finish", max_wait=0.05)  # type: ignore[arg-type]
    with ThreadPoolExecutor(16) as pool:
        futures = list(pool.map(lambda n: (n, batcher.submit(put(n))), range(200)))
    outcomes = {n: f.result(timeout=10) for n, f in futures}
    batcher.close()
    assert outcomes == {n: n % 2 == 0 for n in range(200)}
    sent = [doc for request in table.requests for doc in request]
    assert sorted(sent) == sorted(f"d{n}" for n in range(200))  # each put sent exactly once
    assert max(len(r) for r in table.requests) <= TRANSACT_CHUNK
    assert len(table.requests) < 200 // 4  # batched, not one request per put


def test_a_failed_request_fails_every_put_it_carried() -> None:
    batcher = WriteBatcher(RecordingTable(fail=DynamoTransactionNotSettledError("still throttled")), "finish")  # type: ignore[arg-type]
    futures = [batcher.submit(put(n)) for n in range(3)]
    batcher.close()
    for future in futures:
        with pytest.raises(DynamoTransactionNotSettledError, match="still throttled"):
            future.result(timeout=10)


def test_close_sends_what_is_still_queued() -> None:
    table = RecordingTable()
    batcher = WriteBatcher(table, "finish", max_wait=5.0)  # type: ignore[arg-type]
    futures = [batcher.submit(put(n)) for n in range(30)]
    batcher.close()
    assert [f.result(timeout=0) for f in futures] == [n % 2 == 0 for n in range(30)]
