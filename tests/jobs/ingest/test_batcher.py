"""WriteBatcher: many threads' write groups go out in transactions of at most 25; each group learns
its own outcome, and a failed request reaches every group it carried.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from jobs.contract import DocumentItem, Status
from jobs.errors import DynamoTransactionNotSettledError
from jobs.ingest.batcher import WriteBatcher
from jobs.store.dynamo import TRANSACT_CHUNK
from jobs.store.table_writes import GroupOutcome, WriteGroup, claim_put

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def put(n: int) -> WriteGroup:
    item = DocumentItem(
        userId="u",
        documentId=f"d{n}",
        status=Status.PROCESSING,
        createdAt=NOW,
        updatedAt=NOW,
        rawS3Uri="s3://raw/k",
        rawEtag='"e"',
    )
    return WriteGroup((claim_put(item, None),))


class RecordingTable:
    """Stands in for DocumentTable.write_all: odd document numbers lose their condition."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.requests: list[list[str]] = []
        self.fail = fail
        self._lock = threading.Lock()

    def write_all(self, groups: list[WriteGroup], _operation: str) -> list[GroupOutcome]:
        ids = [g.writes[0].item.documentId for g in groups]  # type: ignore[union-attr]
        with self._lock:
            self.requests.append(ids)
        if self.fail is not None:
            raise self.fail
        return [GroupOutcome() if int(d[1:]) % 2 == 0 else GroupOutcome({0: None}) for d in ids]


def test_puts_from_many_threads_are_batched_and_each_gets_its_own_outcome() -> None:
    table = RecordingTable()
    batcher = WriteBatcher(table, "finish", max_wait=0.05)  # type: ignore[arg-type]
    with ThreadPoolExecutor(16) as pool:
        futures = list(pool.map(lambda n: (n, batcher.submit(put(n))), range(200)))
    outcomes = {n: f.result(timeout=10).landed for n, f in futures}
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
    assert [f.result(timeout=0).landed for f in futures] == [n % 2 == 0 for n in range(30)]
