"""The dead-letter queue's way back: move its messages to the arrival queue again.

On AWS, SQS's own message move task does it (StartMessageMoveTask, then ListMessageMoveTasks
until the task ends): SQS receives from the DLQ, sends to the arrival queue and deletes, with
the caller's permissions, and gives each message a new id and a fresh retention period. moto's
server (5.2) implements neither call (it answers 500), so where the server has no move tasks
(`JobSettings.ingest.sqs_move_tasks`, off by default when AWS_ENDPOINT_URL_SQS points elsewhere) the
job moves the messages itself: receive 10 from the DLQ, send their bodies to the arrival queue,
delete from the DLQ only what was sent. A crash between send and delete sends a message twice,
which the ingest handles like any duplicate delivery.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jobs.errors import SettingsError, StoreUnavailableError
from jobs.observability import CallMetrics
from jobs.store._aws import translated
from jobs.store.polling import Polling
from jobs.store.queue import ArrivalQueue

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import ListMessageMoveTasksResultEntryTypeDef

logger = logging.getLogger(__name__)

POLLING = Polling(every_s=5.0, timeout_s=3600.0)
MOVE_TASK = "StartMessageMoveTask"
BY_HAND = "receive-send-delete"
# While a moved batch is being sent, it stays hidden in the DLQ (deleted once sent).
HOLD_SECONDS = 60
_ENDED = frozenset({"COMPLETED", "FAILED", "CANCELLED"})


@dataclass(frozen=True)
class Redrive:
    """What a redrive did: messages moved, those left in the DLQ, how, and the task's end."""

    dead_letter_queue: str
    moved: int
    left: int
    method: str
    status: str = "COMPLETED"


def redrive(
    client: SQSClient,
    arrivals: ArrivalQueue,
    metrics: CallMetrics,
    *,
    move_task: bool,
    polling: Polling = POLLING,
) -> Redrive:
    """Move every message of the arrival queue's DLQ back to the arrival queue."""
    dead_letters = arrivals.dead_letters()
    if dead_letters is None:
        raise SettingsError(f"queue {arrivals.url} has no dead-letter queue (no RedrivePolicy)")
    if dead_letters.depth()[0] == 0:
        return Redrive(dead_letters.url, 0, 0, MOVE_TASK if move_task else BY_HAND)
    if move_task:
        return _with_move_task(client, arrivals, dead_letters, metrics, polling)
    return _by_hand(arrivals, dead_letters)


def _with_move_task(
    client: SQSClient, arrivals: ArrivalQueue, dead_letters: ArrivalQueue, metrics: CallMetrics, polling: Polling
) -> Redrive:
    source, destination = dead_letters.arn(), arrivals.arn()
    with metrics.call("sqs.StartMessageMoveTask"), translated("sqs.StartMessageMoveTask", resource=f"queue {source}"):
        client.start_message_move_task(SourceArn=source, DestinationArn=destination)
    logger.info("message move task started", extra={"source": source, "destination": destination})
    task: ListMessageMoveTasksResultEntryTypeDef = {}
    for _ in polling.checks():
        # One task runs per source queue at a time: the most recent one is ours.
        with metrics.call("sqs.ListMessageMoveTasks"), translated("sqs.ListMessageMoveTasks"):
            results = client.list_message_move_tasks(SourceArn=source, MaxResults=1).get("Results", [])
        task = results[0] if results else {}
        if task.get("Status") in _ENDED:
            break
    status = task.get("Status", "UNKNOWN")
    moved, to_move = task.get("ApproximateNumberOfMessagesMoved", 0), task.get("ApproximateNumberOfMessagesToMove", 0)
    if status == "FAILED":
        raise StoreUnavailableError(
            f"message move task from {source} failed: {task.get('FailureReason')}", "MoveTaskFailed"
        )
    return Redrive(dead_letters.url, moved, max(to_move - moved, 0), MOVE_TASK, status)


def _by_hand(arrivals: ArrivalQueue, dead_letters: ArrivalQueue) -> Redrive:
    moved = left = 0
    while messages := dead_letters.receive(wait_seconds=1, visibility_seconds=HOLD_SECONDS):
        refused = set(arrivals.send_refused([m.body for m in messages]))
        sent = [m for i, m in enumerate(messages) if i not in refused]
        not_deleted = dead_letters.delete(sent)
        moved += len(sent)
        left += len(refused)
        if not_deleted:
            logger.warning(
                "moved messages not deleted from the DLQ: they will be moved again",
                extra={"messages": len(not_deleted)},
            )
    return Redrive(dead_letters.url, moved, left, BY_HAND)
