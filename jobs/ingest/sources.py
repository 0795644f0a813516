"""Where a run's work comes from: the arrival queue (the nightly default) or a sweep of raw/.

Both hand the run batches of `Work` (≤ 100, one batched item read each). A queue message is
deleted only once every document it named is settled (its item written, or nothing to write);
a document someone else is working on defers its message until that claim's lease could have
ended; anything the run could not finish is made visible again when the run closes (the
Ledger holds every received message until then). The sweep lists the whole prefix (backfill:
first deployment, or after lost notifications) and has nothing to ack.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from jobs.contract import ObjectInfo, layout
from jobs.contract.events import Arrival, Notice, parse_body
from jobs.errors import InvalidKeyError, QueueMessageInvalidError
from jobs.ingest.ledger import Ledger, Settle, Ticket
from jobs.ingest.plan import Action, newest, shard_of
from jobs.ingest.summary import SummaryRecorder
from jobs.store.queue import ArrivalQueue

logger = logging.getLogger(__name__)

DECIDE_BATCH = 100  # one BatchGetItem decides a batch
# A receive brings 10 messages; a batch waits this long for more, so that one BatchGetItem and
# full claim transactions serve up to 100 instead of one small read and transaction per receive
# (the counts with and without: docs/tuning.md).
GATHER_SECONDS = 0.05
Settler = Callable[[Settle], None]


def _ignore(_: Settle) -> None:
    """Sweep work has no message to settle."""


@dataclass(frozen=True)
class Work:
    raw: layout.RawKey
    obj: ObjectInfo
    settle: Settler = _ignore


class WorkSource(Protocol):
    def batches(self) -> Iterator[list[Work]]: ...

    def stop(self) -> None:
        """Fetch no more work (budget reached, the run is stopping)."""

    def close(self) -> None:
        """Settle what is left (flush acks, release what was never settled)."""


def newest_per_document(
    found: list[tuple[layout.RawKey, ObjectInfo, Settler]], recorder: SummaryRecorder
) -> list[Work]:
    """One Work per documentId: the newest upload; the others are reported as superseded."""
    by_document: dict[tuple[str, str], list[tuple[layout.RawKey, ObjectInfo, Settler]]] = {}
    for entry in found:
        by_document.setdefault((entry[0].user_id, entry[0].document_id), []).append(entry)
    chosen = []
    for entries in by_document.values():
        winner = newest([obj for _, obj, _ in entries])
        for raw, obj, settle in entries:
            if obj is winner:
                chosen.append(Work(raw, obj, settle))
                continue
            if obj.key != winner.key:
                recorder.decision(Action.SKIP_SUPERSEDED, obj.key, f"superseded by {winner.key}")
            settle(Settle.DONE)
    return chosen


def _parsed_key(obj: ObjectInfo, recorder: SummaryRecorder) -> layout.RawKey | None:
    try:
        return layout.parse_raw_key(obj.key)
    except InvalidKeyError as exc:
        recorder.invalid_key(obj.key, str(exc))
        return None


class SweepSource:
    """Every raw object of one shard, a listing page at a time (the backfill)."""

    def __init__(
        self, pages: Iterator[list[ObjectInfo]], recorder: SummaryRecorder, shard_index: int, shard_count: int
    ) -> None:
        self._pages = pages
        self._recorder = recorder
        self._shard = (shard_index, shard_count)
        self._stopped = threading.Event()

    def batches(self) -> Iterator[list[Work]]:
        index, count = self._shard
        for page in self._pages:
            if self._stopped.is_set():
                return
            found: list[tuple[layout.RawKey, ObjectInfo, Settler]] = []
            for obj in page:
                raw = _parsed_key(obj, self._recorder)
                if raw is not None and shard_of(raw.user_id, raw.document_id, count) == index:
                    found.append((raw, obj, _ignore))
            work = newest_per_document(found, self._recorder)
            self._recorder.listed(len(page), len(work))
            for start in range(0, len(work), DECIDE_BATCH):
                yield work[start : start + DECIDE_BATCH]

    def stop(self) -> None:
        self._stopped.set()

    def close(self) -> None:
        self.stop()


@dataclass(frozen=True)
class DrainLimits:
    idle_seconds: int = 20  # the run ends after one receive waited this long for nothing
    defer_seconds: int = 900  # a held document's message comes back once that lease could end
    visibility_seconds: int = 1800  # the queue's own VisibilityTimeout: what holding renews
    max_waiting: int = 2 * DECIDE_BATCH  # received but not yet decided: bounds memory
    # Concurrent long polls: one receive brings at most 10 messages, and one poller's round trips
    # would otherwise cap a task's rate (docs/tuning.md).
    receivers: int = 4


class QueueSource:
    """Drain the arrival queue: receive (10 a call, long polling), hand out, settle via the Ledger."""

    def __init__(
        self,
        arrivals: ArrivalQueue,
        raw_bucket: str,
        recorder: SummaryRecorder,
        limits: DrainLimits,
        *,
        dry_run: bool = False,
    ) -> None:
        self._queue = arrivals
        self._raw_bucket = raw_bucket
        self._recorder = recorder
        self._limits = limits
        self._ledger = Ledger(arrivals, recorder, limits.visibility_seconds, limits.defer_seconds, release_all=dry_run)
        self._stopped = threading.Event()
        self._received: queue.Queue[Ticket | None] = queue.Queue(maxsize=limits.max_waiting)
        self._error: BaseException | None = None
        self._receiving = limits.receivers
        self._receiving_lock = threading.Lock()
        self._receivers = [
            threading.Thread(target=self._receive_forever, name=f"sqs-receive-{n}", daemon=True)
            for n in range(limits.receivers)
        ]
        for receiver in self._receivers:
            receiver.start()

    # --- handing out work ---------------------------------------------------------------------
    def batches(self) -> Iterator[list[Work]]:
        while True:
            first = self._received.get()
            if first is None:
                break
            tickets = [first]
            gathered_by = time.monotonic() + GATHER_SECONDS
            while len(tickets) < DECIDE_BATCH:
                try:
                    more = self._received.get(timeout=max(0.0, gathered_by - time.monotonic()))
                except queue.Empty:
                    break
                if more is None:
                    self._received.put(None)  # seen again by the next call, which then ends
                    break
                tickets.append(more)
            work = self._work(tickets)
            if work:
                yield work
        if self._error is not None:
            raise self._error

    def _work(self, tickets: list[Ticket]) -> list[Work]:
        found: list[tuple[layout.RawKey, ObjectInfo, Settler]] = []
        for ticket in tickets:
            message = ticket.message
            try:
                records = parse_body(message.body)
            except QueueMessageInvalidError as exc:
                # Handed back at the close: after maxReceiveCount receives SQS moves it to the
                # dead-letter queue, where a person can read it. Nothing is lost by keeping it.
                self._recorder.message_malformed(message.message_id, str(exc))
                self._ledger.release(ticket)
                continue
            arrivals = []
            for record in records:
                if isinstance(record, Notice):
                    self._recorder.notice(record.kind, record.detail)
                    continue
                raw = self._arrival_key(record)
                if raw is not None:
                    arrivals.append((raw, record.obj))
            self._ledger.expect(ticket, len(arrivals))
            settle = self._ledger.settler(ticket)
            found += [(raw, obj, settle) for raw, obj in arrivals]
        return newest_per_document(found, self._recorder)

    def _arrival_key(self, arrival: Arrival) -> layout.RawKey | None:
        if arrival.obj.bucket != self._raw_bucket:
            self._recorder.invalid_key(arrival.obj.uri, f"event for bucket {arrival.obj.bucket!r}, not the raw bucket")
            return None
        return _parsed_key(arrival.obj, self._recorder)

    # --- receiving ----------------------------------------------------------------------------
    def _receive_forever(self) -> None:
        try:
            while not self._stopped.is_set():
                messages = self._queue.receive(self._limits.idle_seconds)
                if not messages:
                    break
                for message in messages:
                    ticket = self._ledger.hold(message)
                    if ticket is None:
                        continue  # the run holds it already
                    if self._stopped.is_set():
                        self._ledger.release(ticket)
                    else:
                        self._received.put(ticket)
        except BaseException as exc:
            self._error = exc
            self._stopped.set()  # the other receivers end too
        finally:
            with self._receiving_lock:
                self._receiving -= 1
                last = self._receiving == 0
            if last:  # the run ends when every receiver has waited in vain (or was stopped)
                self._received.put(None)

    def stop(self) -> None:
        """No more receives; what was received but not handed out is handed back at the close,
        and a run waiting for its next batch is woken at once (not after the long poll).
        """
        self._stopped.set()
        while True:
            try:
                ticket = self._received.get_nowait()
            except queue.Empty:
                break
            if ticket is not None:
                self._ledger.release(ticket)
        # Full: the receiver refilled it; batches() ends at the receiver's own None.
        with contextlib.suppress(queue.Full):
            self._received.put_nowait(None)

    def close(self) -> None:
        """Stop, wait for the receivers' last long polls, then settle: releases go out only now,
        when no receiver of this run can take them again.
        """
        self.stop()
        for receiver in self._receivers:
            receiver.join()
        self.stop()  # anything the receivers queued while stopping
        self._ledger.close()
