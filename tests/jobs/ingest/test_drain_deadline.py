"""The scheduled drain stops taking work at its deadline (`ingest drain --max-minutes`, which the
stack derives from the ingest and reconcile schedules): it claims nothing more, lets what it
holds finish, hands the rest back, and ends as a completed night (exit 0) whose summary says it
stopped for the deadline.
"""

from __future__ import annotations

import json

import pytest

from jobs.contract import Status
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.errors import ExitCode
from jobs.ingest import cli


def test_a_drain_past_its_deadline_ends_completed_and_leaves_the_rest_queued(
    stack, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = list(generate(2, 30, bad_ratio=0, seed=41))
    upload(stack.s3(), stack.settings.raw_bucket, docs)
    # A deadline passed before the first messages are decided: nothing is taken, all stays queued.
    assert cli.main(["drain", "--max-minutes", "0.0001", "--idle-seconds", "1"]) == ExitCode.SUCCESS
    summary = json.loads(capsys.readouterr().out)
    assert summary["outcome"] == "completed" and summary["stoppedFor"] == "deadline"
    done = [i for i in stack.items() if i.status != Status.PROCESSING]
    assert len(done) == summary["processed"] < len(docs)
    assert not [i for i in stack.items() if i.status == Status.PROCESSING]  # nothing left claimed
    assert summary["queueWaiting"] + summary["queueInFlight"] >= len(docs) - len(done)  # the rest stays queued

    assert cli.main(["drain", "--idle-seconds", "1"]) == ExitCode.SUCCESS  # the next night takes the rest
    rest = json.loads(capsys.readouterr().out)
    assert rest["stoppedFor"] is None and rest["processed"] == len(docs) - len(done)
