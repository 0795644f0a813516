"""Stand-in for the arrival queue's CloudWatch metric: ApproximateAgeOfOldestMessage, which AWS
publishes under AWS/SQS (dimension QueueName) every minute and no local server emits.

It reads the queue's real state, the oldest visible message's SentTimestamp (one ReceiveMessage
with VisibilityTimeout 0, which leaves the messages visible), and puts the age that message has
at each minute of the stand-in's clock into moto's CloudWatch, as AWS would while the queue
stayed as it is; the declared `arrivals-stalled` alarm (jobs.contract.alarms) is then judged
against it like any other (jobs.local.standins.alarms). A test makes messages older by moving
this clock, never by sleeping. Each read counts as a receive (moto, like SQS, dead-letters a
message received more than maxReceiveCount times), so one read serves a whole span of minutes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from jobs.contract import layout
from jobs.contract.alarms import OLDEST_MESSAGE_AGE, QUEUE_NAME, SQS_NAMESPACE
from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.store.clients import cloudwatch_client, sqs_client
from jobs.store.metrics import MetricsStore

MINUTE = timedelta(minutes=1)
_PEEK = 10  # ReceiveMessage's most; moto returns a standard queue's messages oldest first


def oldest_sent(settings: JobSettings) -> datetime | None:
    """When the oldest visible message of the arrival queue was sent (None: the queue is empty)."""
    response = sqs_client(settings).receive_message(
        QueueUrl=settings.store.arrivals_queue_url,
        MaxNumberOfMessages=_PEEK,
        VisibilityTimeout=0,
        AttributeNames=["SentTimestamp"],
    )
    sent = [int(m["Attributes"]["SentTimestamp"]) for m in response.get("Messages", [])]
    return datetime.fromtimestamp(min(sent) / 1000, tz=UTC) if sent else None


def minutes(start: datetime, end: datetime) -> list[datetime]:
    """Each minute from `start` to `end`, both included: the times AWS would publish at."""
    count = int((end - start) / MINUTE)
    return [start + MINUTE * i for i in range(count + 1)]


def publish_oldest_age(settings: JobSettings, at: Sequence[datetime]) -> int:
    """Put the queue's ApproximateAgeOfOldestMessage at each time of `at`, from its state now;
    the data put (0 when the queue is empty: AWS then publishes 0).
    """
    sent = oldest_sent(settings)
    store = MetricsStore(cloudwatch_client(settings), CallMetrics())
    dimensions = [{"Name": QUEUE_NAME, "Value": layout.arrivals_queue_name(settings.stage)}]
    for moment in at:
        age = max(0.0, (moment - sent).total_seconds()) if sent is not None else 0.0
        datum = {"MetricName": OLDEST_MESSAGE_AGE, "Dimensions": dimensions, "Value": age, "Unit": "Seconds"}
        store.put(SQS_NAMESPACE, [datum], moment)
    return len(at)
