"""The scheduled drain stops taking work at its deadline (`ingest drain --max-minutes`, which the
stack derives from the ingest and reconcile schedules): it claims nothing more, lets what it
holds finish, hands the rest back, and ends as a completed night (exit 0) whose summary says it
stopped for the deadline.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from jobs.contract import Status, layout
from jobs.contract.metrics import Metric
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.errors import ExitCode, SettingsError
from jobs.ingest import cli
from jobs.ingest.plan import drain_deadline
from jobs.ingest.plans import DrainPlan
from jobs.ingest.run import IngestRun
from jobs.settings import JobSettings


def _await_arrivals(stack, count: int) -> None:
    """Until the uploads' notifications are in the arrival queue: a drain that finds it empty
    ends idle, before any deadline (on a loaded machine they can trail the uploads).
    """
    sqs = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        attributes = sqs.get_queue_attributes(
            QueueUrl=stack.settings.store.arrivals_queue_url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        if int(attributes["ApproximateNumberOfMessages"]) >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"the arrival queue never held the {count} uploads' notifications")


def test_a_drain_past_its_deadline_ends_completed_and_leaves_the_rest_queued(
    stack, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = list(generate(2, 30, bad_ratio=0, seed=41))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
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


def test_the_bound_counts_from_the_scheduled_time_when_the_schedule_gives_one() -> None:
    started = datetime(2026, 3, 2, 1, 40, tzinfo=UTC)
    scheduled = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)
    assert drain_deadline(started, scheduled, 3600) == scheduled + timedelta(hours=1)  # 40 min late: 20 min left
    assert drain_deadline(started, None, 3600) == started + timedelta(hours=1)  # a manual run: from its start
    assert drain_deadline(started, scheduled, None) is None  # no bound, whoever started it


def test_a_scheduled_drain_started_past_its_deadline_takes_nothing_and_ends_cleanly(stack) -> None:
    docs = list(generate(1, 5, bad_ratio=0, seed=43))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    _await_arrivals(stack, len(docs))
    # The scheduler started this task two hours after its time (a retry near the maximum event
    # age): an hour's bound from the process start would drain the lot into the reconcile.
    late = stack.settings.changed(scheduled_time=layout.utc_now() - timedelta(hours=2))
    summary = IngestRun(late, DrainPlan(max_seconds=3600, idle_seconds=1)).execute()
    assert summary.outcome == "completed" and summary.stoppedFor == "deadline"
    assert summary.processed == 0 and stack.items() == []
    assert summary.deadline == late.run.scheduled_time + timedelta(hours=1)
    assert summary.scheduledAt == late.run.scheduled_time
    assert summary.queueWaiting >= len(docs) and summary.queueInFlight == 0  # nothing received, nothing hidden
    # It drained nothing, so it is no heartbeat: a night whose only task started this late alarms.
    assert summary.startedPastDeadline
    assert Metric.HEARTBEAT not in {d.metric for d in summary.run_metrics().data}


def test_a_scheduled_drain_on_time_drains_until_its_queue_is_empty(stack) -> None:
    docs = list(generate(1, 3, bad_ratio=0, seed=44))
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    _await_arrivals(stack, len(docs))
    on_time = stack.settings.changed(scheduled_time=layout.utc_now() - timedelta(minutes=1))
    summary = IngestRun(on_time, DrainPlan(max_seconds=3600, idle_seconds=1)).execute()
    assert summary.stoppedFor is None and summary.processed == len(docs)
    assert not summary.startedPastDeadline and Metric.HEARTBEAT in {d.metric for d in summary.run_metrics().data}


def test_a_naive_scheduled_time_is_refused() -> None:
    with pytest.raises(SettingsError, match="DOCUFLOW_SCHEDULED_TIME"):
        JobSettings.from_env({"DOCUFLOW_SCHEDULED_TIME": "2026-03-02T01:00:00"})
    aware = JobSettings.from_env({"DOCUFLOW_SCHEDULED_TIME": "2026-03-02T01:00:00Z"})
    assert aware.run.scheduled_time == datetime(2026, 3, 2, 1, 0, tzinfo=UTC)
