"""Where a run's work comes from: the arrival queue (the nightly default) or a sweep of raw/.

Both hand the run batches of `Work` (≤ 100, one batched item read each). A queue message is
deleted only once every document it named is settled (its item written, or nothing to write);
a document someone else is working on defers its message until that claim's lease could have
ended; anything the run could not finish is made visible again at once. The sweep lists the
whole prefix (backfill: first deployment, or after lost notifications) and has nothing to ack.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

from jobs.contract import ObjectInfo, layout
from jobs.contract.events import Arrival, Notice, QueueMessage, parse_body
from jobs.errors import InvalidKeyError, QueueMessageInvalidError
from jobs.ingest.plan import Action, newest, shard_of
from jobs.ingest.summary import SummaryRecorder
from jobs.store.queue import SQS_BATCH, ArrivalQueue

logger = logging.getLogger(__name__)

DECIDE_BATCH = 100  # one BatchGetItem decides a batch
# A receive brings 10 messages; a batch waits this long for more, so that one BatchGetItem and
# full claim transactions serve up to 100 (1,000 new documents took 101 reads and 318
# transactions when each receive was decided on its own).
GATHER_SECONDS = 0.05
# Settled messages wait up to this long for nine more to share their DeleteMessageBatch: fewer
# SQS requests (each is billed), at the price of a message staying hidden a second longer.
ACK_INTERVAL = 1.0


class Settle(IntEnum):
    """How a document left the run; a message named by several documents takes the strongest."""

    DONE = 0  # nothing more to do for this object: delete the message
    DEFER = 1  # another claim holds it: look again once that lease could have ended
    RELEASE = 2  # this run could not finish it: visible again at once


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


@dataclass
class _Ticket:
    """One received message and the documents it still waits for."""

    message: QueueMessage
    received: float
    pending: int
    outcome: Settle = Settle.DONE
    lock: threading.Lock = field(default_factory=threading.Lock)

    def settle(self, how: Settle) -> bool:
        """Record one document's outcome; True when that was the last one."""
        with self.lock:
            self.outcome = max(self.outcome, how)
            self.pending -= 1
            return self.pending == 0


@dataclass(frozen=True)
class DrainLimits:
    idle_seconds: int = 20  # the run ends after one receive waited this long for nothing
    defer_seconds: int = 900  # a held document's message comes back once that lease could end
    visibility_seconds: int = 1800  # the queue's visibility timeout, renewed for slow documents
    max_waiting: int = 2 * DECIDE_BATCH  # received but not yet decided: bounds memory and hold times
    # Concurrent long polls: one receive brings at most 10 messages, and its round trip (20-30 ms
    # on AWS, more on a busy emulator) would otherwise cap a task at a few hundred documents/s.
    receivers: int = 4


class QueueSource:
    """Drain the arrival queue: receive (10 a call, long polling), hand out, ack in batches."""

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
        self._dry_run = dry_run
        self._stopped = threading.Event()
        self._received: queue.Queue[QueueMessage | None] = queue.Queue(maxsize=limits.max_waiting)
        self._acks: queue.Queue[_Ticket | None] = queue.Queue()
        self._held: dict[str, _Ticket] = {}
        self._held_lock = threading.Lock()
        self._error: BaseException | None = None
        self._receiving = limits.receivers
        self._receiving_lock = threading.Lock()
        self._receivers = [
            threading.Thread(target=self._receive_forever, name=f"sqs-receive-{n}", daemon=True)
            for n in range(limits.receivers)
        ]
        self._acker = threading.Thread(target=self._ack_forever, name="sqs-ack", daemon=True)
        for receiver in self._receivers:
            receiver.start()
        self._acker.start()

    # --- handing out work ---------------------------------------------------------------------
    def batches(self) -> Iterator[list[Work]]:
        while True:
            first = self._received.get()
            if first is None:
                break
            messages = [first]
            gathered_by = time.monotonic() + GATHER_SECONDS
            while len(messages) < DECIDE_BATCH:
                try:
                    more = self._received.get(timeout=max(0.0, gathered_by - time.monotonic()))
                except queue.Empty:
                    break
                if more is None:
                    self._received.put(None)  # seen again by the next call, which then ends
                    break
                messages.append(more)
            work = self._work(messages)
            if work:
                yield work
        if self._error is not None:
            raise self._error

    def _work(self, messages: list[QueueMessage]) -> list[Work]:
        found: list[tuple[layout.RawKey, ObjectInfo, Settler]] = []
        for message in messages:
            self._recorder.message_received(message.receive_count)
            try:
                records = parse_body(message.body)
            except QueueMessageInvalidError as exc:
                # Left in the queue: after max receives SQS moves it to the dead-letter queue,
                # where a person can read it. Nothing is lost by not deleting it.
                self._recorder.message_malformed(message.message_id, str(exc))
                continue
            arrivals = []
            for record in records:
                if isinstance(record, Notice):
                    self._recorder.notice(record.kind, record.detail)
                    continue
                raw = self._arrival_key(record)
                if raw is not None:
                    arrivals.append((raw, record.obj))
            outcome = Settle.RELEASE if self._dry_run else Settle.DONE
            ticket = _Ticket(message, time.monotonic(), pending=len(arrivals), outcome=outcome)
            if not arrivals:
                self._acks.put(ticket)
                continue
            with self._held_lock:
                self._held[message.message_id] = ticket
            found += [(raw, obj, self._settler(ticket)) for raw, obj in arrivals]
        return newest_per_document(found, self._recorder)

    def _arrival_key(self, arrival: Arrival) -> layout.RawKey | None:
        if arrival.obj.bucket != self._raw_bucket:
            self._recorder.invalid_key(arrival.obj.uri, f"event for bucket {arrival.obj.bucket!r}, not the raw bucket")
            return None
        return _parsed_key(arrival.obj, self._recorder)

    def _settler(self, ticket: _Ticket) -> Settler:
        def settle(how: Settle) -> None:
            if ticket.settle(Settle.RELEASE if self._dry_run else how):
                self._acks.put(ticket)

        return settle

    # --- receiving ----------------------------------------------------------------------------
    def _receive_forever(self) -> None:
        try:
            while not self._stopped.is_set():
                messages = self._queue.receive(self._limits.idle_seconds)
                if not messages:
                    break
                for message in messages:
                    if self._stopped.is_set():
                        self._acks.put(_Ticket(message, time.monotonic(), 0, Settle.RELEASE))
                    else:
                        self._received.put(message)
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
        """No more receives; what was received but not handed out becomes visible again, and
        a run waiting for its next batch is woken at once (not after the long poll).
        """
        self._stopped.set()
        while True:
            try:
                message = self._received.get_nowait()
            except queue.Empty:
                break
            if message is not None:
                self._acks.put(_Ticket(message, time.monotonic(), 0, Settle.RELEASE))
        # Full: the receiver refilled it; batches() ends at the receiver's own None.
        with contextlib.suppress(queue.Full):
            self._received.put_nowait(None)

    def close(self) -> None:
        self.stop()
        for receiver in self._receivers:
            receiver.join()
        self.stop()  # anything the receivers queued while stopping
        with self._held_lock:
            unsettled = [t for t in self._held.values() if t.pending > 0]
        for ticket in unsettled:
            ticket.outcome = Settle.RELEASE
            self._acks.put(ticket)
        self._acks.put(None)
        self._acker.join()

    # --- acknowledging ------------------------------------------------------------------------
    def _ack_forever(self) -> None:
        """Delete, defer or release settled messages in batches of 10; renew slow ones."""
        by_outcome: dict[Settle, list[_Ticket]] = {s: [] for s in Settle}
        last_flush = last_renewal = time.monotonic()
        closing = False
        while not closing:
            try:
                ticket = self._acks.get(timeout=0.2)
            except queue.Empty:
                ticket = None
            else:
                if ticket is None:
                    closing = True
                else:
                    by_outcome[ticket.outcome].append(ticket)
            now = time.monotonic()
            if closing or now - last_flush >= ACK_INTERVAL or any(len(v) >= SQS_BATCH for v in by_outcome.values()):
                self._flush(by_outcome)
                last_flush = now
            if now - last_renewal >= self._limits.visibility_seconds / 6:
                self._renew(now)
                last_renewal = now

    def _flush(self, by_outcome: dict[Settle, list[_Ticket]]) -> None:
        for how, tickets in by_outcome.items():
            if not tickets:
                continue
            messages = [t.message for t in tickets]
            tickets.clear()
            try:
                if how == Settle.DONE:
                    failed = self._queue.delete(messages)
                elif how == Settle.DEFER:
                    failed = self._queue.change_visibility(messages, self._limits.defer_seconds)
                else:
                    failed = self._queue.change_visibility(messages, 0)
            except Exception as exc:
                logger.warning(
                    "could not settle messages; they come back after their visibility timeout",
                    extra={"settle": how.name, "messages": len(messages), "error": str(exc)},
                )
                failed = [m.message_id for m in messages]
            self._recorder.messages_settled(how.name, len(messages) - len(failed), len(failed))
            with self._held_lock:
                for message in messages:
                    self._held.pop(message.message_id, None)

    def _renew(self, now: float) -> None:
        """Messages held for half their visibility get a fresh timeout, so a slow document's
        message is not delivered to another task while its claim is still being worked.
        """
        with self._held_lock:
            slow = [
                t
                for t in self._held.values()
                if t.pending > 0 and now - t.received > self._limits.visibility_seconds / 2
            ]
        if not slow:
            return
        try:
            self._queue.change_visibility([t.message for t in slow], self._limits.visibility_seconds)
        except Exception as exc:
            logger.warning("could not extend message visibility", extra={"messages": len(slow), "error": str(exc)})
            return
        for ticket in slow:
            ticket.received = now
