"""The move-task path of `ingest redrive` (jobs.store.redrive) against botocore's Stubber:
moto's server implements neither StartMessageMoveTask nor ListMessageMoveTasks (it answers 500),
so the calls and their order are checked here; the receive-send-delete path runs on the local
stack (tests/jobs/ingest/test_drain_live.py).
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from jobs.errors import SettingsError, StoreUnavailableError
from jobs.observability import CallMetrics
from jobs.store.polling import Polling
from jobs.store.queue import ArrivalQueue
from jobs.store.redrive import redrive

ACCOUNT = "123456789012"
QUEUE = f"https://sqs.eu-west-1.amazonaws.com/{ACCOUNT}/arrivals"
DLQ = f"https://sqs.eu-west-1.amazonaws.com/{ACCOUNT}/arrivals-dlq"
QUEUE_ARN, DLQ_ARN = f"arn:aws:sqs:eu-west-1:{ACCOUNT}:arrivals", f"arn:aws:sqs:eu-west-1:{ACCOUNT}:arrivals-dlq"
NO_WAIT = Polling(every_s=1, timeout_s=10, sleep=lambda _: None)


def _client() -> tuple[Any, Stubber]:
    client = boto3.client("sqs", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    return client, Stubber(client)


def _attributes(stub: Stubber, url: str, names: list[str], values: dict[str, str]) -> None:
    stub.add_response("get_queue_attributes", {"Attributes": values}, {"QueueUrl": url, "AttributeNames": names})


def _dead_letters_found(stub: Stubber, waiting: int) -> None:
    policy = json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 10})
    _attributes(stub, QUEUE, ["RedrivePolicy"], {"RedrivePolicy": policy})
    stub.add_response(
        "get_queue_url", {"QueueUrl": DLQ}, {"QueueName": "arrivals-dlq", "QueueOwnerAWSAccountId": ACCOUNT}
    )
    depth = {"ApproximateNumberOfMessages": str(waiting), "ApproximateNumberOfMessagesNotVisible": "0"}
    _attributes(stub, DLQ, ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"], depth)


def _task(status: str, moved: int, **extra: Any) -> dict[str, Any]:
    task = {
        "Status": status,
        "SourceArn": DLQ_ARN,
        "DestinationArn": QUEUE_ARN,
        "ApproximateNumberOfMessagesMoved": moved,
    }
    return {"Results": [task | {"ApproximateNumberOfMessagesToMove": 7} | extra]}


def test_the_move_task_is_started_from_the_dlq_to_the_arrival_queue_and_awaited() -> None:
    client, stub = _client()
    _dead_letters_found(stub, waiting=7)
    _attributes(stub, DLQ, ["QueueArn"], {"QueueArn": DLQ_ARN})
    _attributes(stub, QUEUE, ["QueueArn"], {"QueueArn": QUEUE_ARN})
    stub.add_response(
        "start_message_move_task", {"TaskHandle": "h1"}, {"SourceArn": DLQ_ARN, "DestinationArn": QUEUE_ARN}
    )
    stub.add_response(
        "list_message_move_tasks", _task("RUNNING", 3, TaskHandle="h1"), {"SourceArn": DLQ_ARN, "MaxResults": 1}
    )
    stub.add_response("list_message_move_tasks", _task("COMPLETED", 7), {"SourceArn": DLQ_ARN, "MaxResults": 1})
    with stub:
        moved = redrive(
            client, ArrivalQueue(client, QUEUE, CallMetrics()), CallMetrics(), move_task=True, polling=NO_WAIT
        )
    stub.assert_no_pending_responses()
    assert (moved.moved, moved.left, moved.method, moved.status) == (7, 0, "StartMessageMoveTask", "COMPLETED")


def test_a_failed_move_task_is_an_error_and_an_empty_dlq_starts_none() -> None:
    client, stub = _client()
    _dead_letters_found(stub, waiting=2)
    _attributes(stub, DLQ, ["QueueArn"], {"QueueArn": DLQ_ARN})
    _attributes(stub, QUEUE, ["QueueArn"], {"QueueArn": QUEUE_ARN})
    stub.add_response("start_message_move_task", {"TaskHandle": "h2"})
    stub.add_response("list_message_move_tasks", _task("FAILED", 0, FailureReason="AccessDenied"))
    with stub, pytest.raises(StoreUnavailableError, match="AccessDenied"):
        redrive(client, ArrivalQueue(client, QUEUE, CallMetrics()), CallMetrics(), move_task=True, polling=NO_WAIT)
    _dead_letters_found(stub, waiting=0)
    with stub:
        moved = redrive(
            client, ArrivalQueue(client, QUEUE, CallMetrics()), CallMetrics(), move_task=True, polling=NO_WAIT
        )
    stub.assert_no_pending_responses()
    assert moved.moved == 0


def test_a_queue_without_a_dead_letter_queue_is_a_settings_error() -> None:
    client, stub = _client()
    _attributes(stub, QUEUE, ["RedrivePolicy"], {})
    with stub, pytest.raises(SettingsError, match="no dead-letter queue"):
        redrive(client, ArrivalQueue(client, QUEUE, CallMetrics()), CallMetrics(), move_task=True, polling=NO_WAIT)
