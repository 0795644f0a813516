"""SQS adapter: the arrival queue (receive, delete, change visibility, send, depth) and its DLQ.

Batches of at most 10 as SQS requires; per-entry failures of a batch call are returned, not
raised (a receipt that expired is the caller's business, not an outage). Errors leave as
jobs.errors, never botocore's; a queue that does not exist is named in the error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from jobs.contract.events import QueueMessage
from jobs.observability import CallMetrics
from jobs.store._aws import translated

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.literals import QueueAttributeFilterType
    from mypy_boto3_sqs.type_defs import (
        ChangeMessageVisibilityBatchRequestEntryTypeDef,
        DeleteMessageBatchRequestEntryTypeDef,
        SendMessageBatchRequestEntryTypeDef,
    )

SQS_BATCH = 10


def _batches(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), SQS_BATCH):
        yield items[start : start + SQS_BATCH]


class ArrivalQueue:
    def __init__(self, client: SQSClient, url: str, metrics: CallMetrics) -> None:
        self._client = client
        self.url = url
        self._metrics = metrics

    def _translated(self, operation: str) -> AbstractContextManager[None]:
        return translated(operation, resource=f"queue {self.url}")

    def receive(
        self, wait_seconds: int, max_messages: int = SQS_BATCH, visibility_seconds: int | None = None
    ) -> list[QueueMessage]:
        """Long-poll for up to `max_messages` (≤ 10); an empty list after `wait_seconds`.
        `visibility_seconds`: hide them for that long instead of the queue's own timeout.
        """
        with self._metrics.call("sqs.ReceiveMessage"), self._translated("sqs.ReceiveMessage"):
            if visibility_seconds is None:
                response = self._client.receive_message(
                    QueueUrl=self.url,
                    MaxNumberOfMessages=max_messages,
                    WaitTimeSeconds=wait_seconds,
                    MessageSystemAttributeNames=["ApproximateReceiveCount"],
                )
            else:
                response = self._client.receive_message(
                    QueueUrl=self.url,
                    MaxNumberOfMessages=max_messages,
                    WaitTimeSeconds=wait_seconds,
                    VisibilityTimeout=visibility_seconds,
                    MessageSystemAttributeNames=["ApproximateReceiveCount"],
                )
        return [
            QueueMessage(
                message_id=m["MessageId"],
                receipt=m["ReceiptHandle"],
                body=m.get("Body", ""),
                receive_count=int(m.get("Attributes", {}).get("ApproximateReceiveCount", "1")),
            )
            for m in response.get("Messages", [])
        ]

    def delete(self, messages: Sequence[QueueMessage]) -> list[str]:
        """Delete the messages; returns the ids SQS could not delete (they will come back)."""
        failed: list[str] = []
        for batch in _batches(messages):
            entries: list[DeleteMessageBatchRequestEntryTypeDef] = [
                {"Id": str(i), "ReceiptHandle": m.receipt} for i, m in enumerate(batch)
            ]
            with self._metrics.call("sqs.DeleteMessageBatch"), self._translated("sqs.DeleteMessageBatch"):
                response = self._client.delete_message_batch(QueueUrl=self.url, Entries=entries)
            failed += [batch[int(f["Id"])].message_id for f in response.get("Failed", [])]
        return failed

    def change_visibility(self, messages: Sequence[QueueMessage], seconds: int) -> list[str]:
        """Hide the messages for `seconds` more from now (0: visible again at once)."""
        failed: list[str] = []
        for batch in _batches(messages):
            entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
                {"Id": str(i), "ReceiptHandle": m.receipt, "VisibilityTimeout": seconds} for i, m in enumerate(batch)
            ]
            with (
                self._metrics.call("sqs.ChangeMessageVisibilityBatch"),
                self._translated("sqs.ChangeMessageVisibilityBatch"),
            ):
                response = self._client.change_message_visibility_batch(QueueUrl=self.url, Entries=entries)
            failed += [batch[int(f["Id"])].message_id for f in response.get("Failed", [])]
        return failed

    def send(self, bodies: Sequence[str]) -> int:
        """Send message bodies; returns how many SQS accepted."""
        return len(bodies) - len(self.send_refused(bodies))

    def send_refused(self, bodies: Sequence[str]) -> list[int]:
        """Send message bodies; returns the indexes (into `bodies`) SQS refused."""
        refused: list[int] = []
        for start in range(0, len(bodies), SQS_BATCH):
            batch = bodies[start : start + SQS_BATCH]
            entries: list[SendMessageBatchRequestEntryTypeDef] = [
                {"Id": str(i), "MessageBody": body} for i, body in enumerate(batch)
            ]
            with self._metrics.call("sqs.SendMessageBatch"), self._translated("sqs.SendMessageBatch"):
                response = self._client.send_message_batch(QueueUrl=self.url, Entries=entries)
            refused += [start + int(f["Id"]) for f in response.get("Failed", [])]
        return refused

    def visibility_timeout(self) -> int:
        """The queue's own VisibilityTimeout in seconds (what a receive hides a message for)."""
        return int(self._attributes(["VisibilityTimeout"])["VisibilityTimeout"])

    def arn(self) -> str:
        return self._attributes(["QueueArn"])["QueueArn"]

    def depth(self) -> tuple[int, int]:
        """(waiting, in flight) as SQS approximates them."""
        attributes = self._attributes(["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
        return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])

    def dead_letters(self) -> ArrivalQueue | None:
        """The queue's dead-letter queue (from its RedrivePolicy), None when it has none."""
        policy = self._attributes(["RedrivePolicy"]).get("RedrivePolicy")
        if not policy:
            return None
        arn = str(json.loads(policy)["deadLetterTargetArn"])
        _, _, _, _, account, name = arn.split(":", 5)
        with self._metrics.call("sqs.GetQueueUrl"), translated("sqs.GetQueueUrl", resource=f"queue {arn}"):
            url = self._client.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
        return ArrivalQueue(self._client, url, self._metrics)

    def dead_letter_depth(self) -> int | None:
        """Messages waiting in the queue's dead-letter queue, None when it has none."""
        dead_letters = self.dead_letters()
        return None if dead_letters is None else dead_letters.depth()[0]

    def _attributes(self, names: list[QueueAttributeFilterType]) -> dict[str, str]:
        with self._metrics.call("sqs.GetQueueAttributes"), self._translated("sqs.GetQueueAttributes"):
            response = self._client.get_queue_attributes(QueueUrl=self.url, AttributeNames=names)
        return {str(name): value for name, value in response.get("Attributes", {}).items()}
