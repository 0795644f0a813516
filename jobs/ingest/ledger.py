"""The messages a drain holds, from the moment one is received to its one answer to SQS.

Every message is held here as soon as a receiver has it, read or not, until the run settles it:
deleted (DONE: every document it names is settled), hidden until a held document's lease could
end (DEFER), or made visible again (RELEASE: the run could not finish it, a dry run, a stop, a
budget, a body the contract cannot read). DONE and DEFER go out in batches of 10 within
ACK_INTERVAL. RELEASE waits for the run's close, after its receivers stopped: a message made
visible while the run still receives would come back to the same run, and every receive counts
toward the dead-letter queue's maxReceiveCount (a dry run used to bounce each message between
release and receive until SQS dead-lettered it). So a run receives each message once, unless a
lease it deferred to has ended meanwhile (DEFER: then it is worth deciding again).

Everything held is renewed before its visibility lapses, from the queue's own VisibilityTimeout,
and never past the 12 hours SQS allows after a receive. A message whose visibility lapsed anyway
and that comes back to the run that holds it takes its new receipt and is not handed out again.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from jobs.contract.events import QueueMessage
from jobs.contract.schema import SQS_MAX_VISIBILITY_SECONDS
from jobs.ingest.summary import SummaryRecorder
from jobs.store.queue import SQS_BATCH, ArrivalQueue

logger = logging.getLogger(__name__)

# Settled messages wait up to this long for nine more to share their DeleteMessageBatch: fewer
# SQS requests (each is billed), at the price of a message staying hidden a second longer.
ACK_INTERVAL = 1.0


class Settle(IntEnum):
    """How a document left the run; a message named by several documents takes the strongest."""

    DONE = 0  # nothing more to do for this object: delete the message
    DEFER = 1  # another claim holds it: look again once that lease could have ended
    RELEASE = 2  # this run could not finish it: visible again when the run closes


@dataclass
class Ticket:
    """One held message: its latest receipt, and the documents it still waits for."""

    message: QueueMessage
    received: float  # monotonic time of the latest receive (SQS's 12-hour limit counts from it)
    hidden_until: float
    pending: int | None = None  # documents not yet settled; None until the body is read
    outcome: Settle = Settle.DONE
    lock: threading.Lock = field(default_factory=threading.Lock)

    def settle(self, how: Settle) -> bool:
        """Record one document's outcome; True when that was the last one."""
        with self.lock:
            self.outcome = max(self.outcome, how)
            self.pending = (self.pending or 0) - 1
            return self.pending == 0


class Ledger:
    """Thread-safe: receivers hold, the run settles, one thread answers SQS and renews."""

    def __init__(
        self,
        arrivals: ArrivalQueue,
        recorder: SummaryRecorder,
        visibility_seconds: int,
        defer_seconds: int,
        *,
        release_all: bool = False,
    ) -> None:
        """`visibility_seconds`: the queue's VisibilityTimeout; `release_all`: a dry run, which
        hands every message back as it found it.
        """
        self._queue = arrivals
        self._recorder = recorder
        self._visibility = visibility_seconds
        self._defer = defer_seconds
        self._release_all = release_all
        self._held: dict[str, Ticket] = {}
        self._lock = threading.Lock()
        self._settled: queue.Queue[Ticket | None] = queue.Queue()
        self._thread = threading.Thread(target=self._answer_forever, name="sqs-ack", daemon=True)
        self._thread.start()

    # --- what the receivers and the run call ---------------------------------------------------
    def hold(self, message: QueueMessage) -> Ticket | None:
        """Hold a received message; None when the run holds it already (received again after its
        visibility lapsed): its newer receipt replaces the old one, and it is not handed out twice.
        """
        now = time.monotonic()
        self._recorder.message_received(message.receive_count)
        with self._lock:
            known = self._held.get(message.message_id)
            if known is not None:
                known.message, known.received, known.hidden_until = message, now, now + self._visibility
                self._recorder.message_received_again()
                return None
            ticket = Ticket(message, now, now + self._visibility)
            self._held[message.message_id] = ticket
            return ticket

    def expect(self, ticket: Ticket, documents: int) -> None:
        """The body is read: `documents` will settle it (none: it is settled now, DONE)."""
        with ticket.lock:
            ticket.pending = documents
            if self._release_all:
                ticket.outcome = Settle.RELEASE
        if documents == 0:
            self._settled.put(ticket)

    def settler(self, ticket: Ticket) -> Callable[[Settle], None]:
        def settle(how: Settle) -> None:
            if ticket.settle(Settle.RELEASE if self._release_all else how):
                self._settled.put(ticket)

        return settle

    def release(self, ticket: Ticket) -> None:
        """Hand back unworked (a stop, a body the contract cannot read): visible again at close."""
        with ticket.lock:
            ticket.pending, ticket.outcome = 0, Settle.RELEASE

    def close(self) -> None:
        """Answer what is settled, then make everything still held visible again."""
        self._settled.put(None)
        self._thread.join()

    # --- the answering thread ------------------------------------------------------------------
    def _answer_forever(self) -> None:
        by_outcome: dict[Settle, list[Ticket]] = defaultdict(list)
        last_flush = last_renewal = time.monotonic()
        while True:
            try:
                ticket = self._settled.get(timeout=0.2)
            except queue.Empty:
                ticket = None
            else:
                if ticket is None:
                    break
                by_outcome[ticket.outcome].append(ticket)
            now = time.monotonic()
            if now - last_flush >= ACK_INTERVAL or any(len(t) >= SQS_BATCH for t in by_outcome.values()):
                self._flush(by_outcome)
                last_flush = now
            if now - last_renewal >= max(self._visibility / 6, 0.2):
                self._renew(now)
                last_renewal = now
        self._flush(by_outcome)
        with self._lock:
            left = list(self._held.values())
        self._answer(Settle.RELEASE, left)

    def _flush(self, by_outcome: dict[Settle, list[Ticket]]) -> None:
        """Delete and defer what is settled; releases wait for the close."""
        for how in (Settle.DONE, Settle.DEFER):
            tickets = by_outcome.pop(how, [])
            if tickets:
                self._answer(how, tickets)
        by_outcome.pop(Settle.RELEASE, None)  # still held: released by the close

    def _answer(self, how: Settle, tickets: list[Ticket]) -> None:
        messages = [t.message for t in tickets]
        try:
            if how == Settle.DONE:
                failed = self._queue.delete(messages)
            else:
                failed = self._queue.change_visibility(messages, self._defer if how == Settle.DEFER else 0)
        except Exception as exc:
            logger.warning(
                "could not settle messages; they come back after their visibility timeout",
                extra={"settle": how.name, "messages": len(messages), "error": str(exc)},
            )
            failed = [m.message_id for m in messages]
        self._recorder.messages_settled(how.name, len(messages) - len(failed), len(failed))
        with self._lock:
            for message in messages:
                self._held.pop(message.message_id, None)

    def _renew(self, now: float) -> None:
        """Hide again, for the queue's visibility timeout, every held message that has less than
        half of it left, within the 12 hours SQS allows after its receive.
        """
        by_timeout: dict[int, list[Ticket]] = defaultdict(list)
        with self._lock:
            for ticket in self._held.values():
                if ticket.hidden_until - now < self._visibility / 2:
                    left = int(SQS_MAX_VISIBILITY_SECONDS - (now - ticket.received))
                    if left > 0:
                        by_timeout[min(self._visibility, left)].append(ticket)
        for seconds, tickets in by_timeout.items():
            try:
                failed = set(self._queue.change_visibility([t.message for t in tickets], seconds))
            except Exception as exc:
                logger.warning(
                    "could not extend message visibility", extra={"messages": len(tickets), "error": str(exc)}
                )
                continue
            for ticket in tickets:
                if ticket.message.message_id not in failed:
                    ticket.hidden_until = now + seconds
            self._recorder.messages_settled("renewed", len(tickets) - len(failed), len(failed))
