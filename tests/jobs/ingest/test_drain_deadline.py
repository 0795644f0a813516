"""The scheduled drain stops taking work at its deadline (`ingest drain --max-minutes`, which the
stack derives from the ingest and reconcile schedules): it claims nothing more, lets what it
holds finish, hands the rest back, and ends as a completed night (exit 0) whose summary says it
stopped for the deadline.
"""

from __future__ import annotations

import json
import time

import boto3
import pytest

from jobs.contract import Status
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.errors import ExitCode
from jobs.ingest import cli


def _await_arrivals(stack, count: int) -> None:
    """Until the uploads' notifications are in the arrival queue: a drain that finds it empty
    ends idle, before any deadline (on a loaded machine they can trail the uploads).
    """
    sqs = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        attributes = sqs.get_queue_attributes(
            QueueUrl=stack.settings.arrivals_queue_url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        if int(attributes["ApproximateNumberOfMessages"]) >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"the arrival queue never held the {count} uploads' notifications")


def test_a_drain_past_its_deadline_ends_completed_and_leaves_the_rest_queued(
    stack, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = list(generate(2, 30, bad_ratio=0, seed=41))
    upload(stack.s3(), stack.settings.raw_bucket, docs)
    _await_arrivals(stack, len(docs))
    # A deadline passed before the first messages are decided: nothing is taken, all stays queued.
    # Idle for up to 5 s: a first receive that comes back empty on a loaded machine must not end
    # the drain before it meets a batch and its deadline.
    assert cli.main(["drain", "--max-minutes", "0.0001", "--idle-seconds", "5"]) == ExitCode.SUCCESS
    summary = json.loads(capsys.readouterr().out)
    assert summary["outcome"] == "completed" and summary["stoppedFor"] == "deadline"
    done = [i for i in stack.items() if i.status != Status.PROCESSING]
    assert len(done) == summary["processed"] < len(docs)
    assert not [i for i in stack.items() if i.status == Status.PROCESSING]  # nothing left claimed
    assert summary["queueWaiting"] + summary["queueInFlight"] >= len(docs) - len(done)  # the rest stays queued

    assert cli.main(["drain", "--idle-seconds", "1"]) == ExitCode.SUCCESS  # the next night takes the rest
    rest = json.loads(capsys.readouterr().out)
    assert rest["stoppedFor"] is None and rest["processed"] == len(docs) - len(done)
