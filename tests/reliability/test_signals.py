"""SIGTERM and SIGINT (ECS stopping a task, a Spot interruption, Ctrl-C) stop a drain cleanly.

The run claims nothing more, lets the documents in flight finish for a grace period, hands back
what is left (claims end their lease at once, messages are visible again at once), exits with
128 + the signal, and leaves no process behind (forkserver, resource tracker, workers).
"""

from __future__ import annotations

import json
import signal
import time

import boto3
import psutil
import pytest
from reliability_helpers import job_env, spawn_ingest

from jobs.contract import Status, layout
from jobs.demo.corpus import generate
from jobs.demo.seed import upload


def _visible(stack) -> int:
    client = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    attributes = client.get_queue_attributes(
        QueueUrl=stack.settings.store.arrivals_queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


@pytest.mark.parametrize("signum", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow)])
def test_a_signalled_drain_hands_everything_back_and_leaves_no_process(stack, signum: signal.Signals) -> None:
    docs = list(generate(3, 40, bad_ratio=0, ocr_ratio=0.5, seed=21))  # scans keep tesseract busy
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    env = job_env(stack, DOCUFLOW_LEASE_SECONDS="600")
    process = spawn_ingest(env, backfill=False)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(i.status != Status.PROCESSING for i in stack.items()):
        time.sleep(0.2)
    family = psutil.Process(process.pid).children(recursive=True)
    assert family, "the run has no extraction processes yet"

    process.send_signal(signum)
    out, err = process.communicate(timeout=45)

    assert process.returncode == 128 + signum, err[-2000:]
    assert "handed back" in err
    time.sleep(0.5)
    assert not [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    now = layout.utc_now()
    items = stack.items()
    leased = [i for i in items if i.status == Status.PROCESSING and i.leaseExpiresAt and i.leaseExpiresAt > now]
    assert not leased  # every claim it held was handed back, none waits out its 10-minute lease
    finished = sum(i.status != Status.PROCESSING for i in items)
    assert finished < len(docs)
    assert _visible(stack) >= len(docs) - finished  # the unfinished documents' messages are back at once

    rerun = spawn_ingest(env, backfill=False)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err[-2000:]
    assert json.loads(out)["outcome"] == "completed"
    assert {i.status for i in stack.items()} <= {Status.PROCESSED, Status.REVIEW_REQUIRED}
    assert len(stack.items()) == len(docs)
