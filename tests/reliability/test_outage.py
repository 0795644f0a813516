"""Sustained outages mid-run: DynamoDB Local (keeping its data on disk) or the S3 server killed.

The ingest stops with exit 3 and a message naming the cause after its bounded retries. DynamoDB
down: nothing is half-written (an item is absent, PROCESSING with a lease, or terminal with its
result.json); once the server is back on the same port and data directory, the next run (after
the leases expired) completes and the invariants hold. S3 down: the run hands back the claims it
could not finish (moto keeps objects in memory, so there is no rerun on the same objects).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from reliability_helpers import (
    LEASE_SECONDS,
    assert_clean,
    job_env,
    read_result,
    run_ingest_cli,
    spawn_ingest,
)

from jobs.contract import Status, layout
from jobs.contract.status import TERMINAL
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.local import servers
from jobs.local.stack import Endpoints, bootstrap_endpoints
from jobs.local.standins.audit_pipe import StagePipe
from jobs.settings import JobSettings

pytestmark = pytest.mark.slow

DOCS = 240  # enough that the run is still going when the server is killed


class DedicatedServer:
    """An emulator of our own, stopped and restarted on one port."""

    def __init__(self, spec: servers.ServerSpec) -> None:
        self.spec = spec
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = servers.start(self.spec)
        servers.wait_until_ready(self.spec, self.process)

    def stop(self) -> None:
        """Kill -9 the server's process group (DynamoDB Local takes 10 s to honour a SIGTERM);
        what DynamoDB Local committed stays in its SQLite files.
        """
        if self.process is not None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
            self.process = None


@contextmanager
def _stage_on(
    stack, endpoints: Endpoints, server: DedicatedServer, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[object]:
    """A new stage on `endpoints`, one of which is `server` (started here, stopped on exit)."""
    server.start()
    try:
        for key, value in endpoints.aws_env().items():
            monkeypatch.setenv(key, value)
        settings = bootstrap_endpoints(endpoints, JobSettings(stage=f"{stack.settings.stage}{suffix}"))
        for key, value in settings.env().items():
            monkeypatch.setenv(key, value)
        # Its own audit pipe, never started: an outage test reads no change log.
        yield type(stack)(settings=settings, endpoints=endpoints, audit_pipe=StagePipe.for_settings(settings))
    finally:
        server.stop()


@pytest.fixture
def outage_stack(stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[object, DedicatedServer]]:
    """A stage whose table lives on a dedicated DynamoDB Local (data on disk); S3 stays the session's."""
    data_dir = tmp_path / "dynamodb-data"
    data_dir.mkdir()
    dynamo = DedicatedServer(servers.dynamodb_spec(servers.free_port(), data_dir, tmp_path))
    with _stage_on(
        stack, Endpoints(dynamodb=dynamo.spec.endpoint, s3=stack.endpoints.s3), dynamo, "o", monkeypatch
    ) as staged:
        yield staged, dynamo


@pytest.fixture
def s3_outage_stack(stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[object, DedicatedServer]]:
    """A stage whose buckets live on a dedicated moto server; DynamoDB stays the session's."""
    s3 = DedicatedServer(servers.s3_spec(servers.free_port(), tmp_path))
    with _stage_on(
        stack, Endpoints(dynamodb=stack.endpoints.dynamodb, s3=s3.spec.endpoint), s3, "s", monkeypatch
    ) as staged:
        yield staged, s3


def assert_nothing_half_written(stack) -> Counter[str]:
    """Each item absent, PROCESSING under a lease, or terminal with the result.json it points at."""
    seen: Counter[str] = Counter()
    raws = {}
    for key in stack.keys(stack.settings.store.raw_bucket, layout.RAW_PREFIX):
        raw = layout.parse_raw_key(key)
        raws[(raw.user_id, raw.document_id)] = key
    for item in stack.items():
        assert (item.userId, item.documentId) in raws
        if item.status == Status.PROCESSING:
            assert item.leaseOwner and item.leaseExpiresAt is not None and item.resultS3Uri is None
        else:
            assert item.status in TERMINAL and item.leaseOwner is None
            result = read_result(stack, item.userId, item.documentId)
            assert result.source.etag == item.rawEtag and result.validation.status == item.status
        seen[item.status.value] += 1
    seen["absent"] = len(raws) - sum(seen.values())
    return seen


def kill_mid_run(stack, server: DedicatedServer, seed: int) -> tuple[dict[str, str], float]:
    """Seed DOCS documents, start an ingest, kill `server` once claims landed: exit 3, said clearly.
    Returns the job's environment and the seconds from the kill to the exit.
    """
    rng = random.Random(seed)
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(4, DOCS, bad_ratio=0.1, seed=seed))
    env = job_env(stack, DOCUFLOW_RETRY_ATTEMPTS="3")
    process = spawn_ingest(env)
    client = stack.dynamodb()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:  # until the first claims landed
        if client.scan(TableName=stack.settings.store.table_name, Select="COUNT", Limit=1)["Count"]:
            break
        time.sleep(0.05)
    time.sleep(rng.uniform(0.2, 1.0))
    assert process.poll() is None, "the run finished before the outage: no outage tested"
    started = time.monotonic()
    server.stop()
    out, err = process.communicate(timeout=120)
    assert process.returncode == 3, err[-2000:]
    assert time.monotonic() - started < 90  # bounded retries, not a hang
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: ingest aborted: ") and "Could not connect to the endpoint URL" in last, last
    assert out == ""
    return env, time.monotonic() - started


@pytest.mark.parametrize("seed", [1, 2])
def test_dynamodb_outage_mid_run_exits_3_and_the_next_run_completes(outage_stack, seed: int) -> None:
    stack, dynamo = outage_stack
    env, exited = kill_mid_run(stack, dynamo, seed)
    dynamo.start()  # same port, same data directory
    seen = assert_nothing_half_written(stack)
    print(f"outage seed {seed}: exit 3 after {exited:.1f}s, state {dict(seen)}")
    time.sleep(LEASE_SECONDS + 0.3)
    done = run_ingest_cli(env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert_clean(stack, DOCS)


def test_s3_outage_mid_run_exits_3_and_hands_back_the_claims_it_held(s3_outage_stack) -> None:
    """DynamoDB stays up, so the aborted run can end the leases of what it claimed but could not
    finish: the next run (once S3 is back) need not wait for them.
    """
    stack, s3 = s3_outage_stack
    _, exited = kill_mid_run(stack, s3, seed=3)
    now = layout.utc_now()
    items = stack.items()
    handed_back = [i for i in items if i.status == Status.PROCESSING]
    assert handed_back, "nothing was in flight at the outage: no hand-back tested"
    for item in handed_back:
        assert item.leaseExpiresAt is not None and item.leaseExpiresAt <= now and item.resultS3Uri is None
    # Claims never started are refunded; those whose reads or writes hit the outage keep the attempt.
    charged = [i for i in handed_back if i.attempts == 1]
    assert {i.attempts for i in handed_back} <= {0, 1} and len(charged) < len(handed_back)
    assert len(charged) <= 2 * stack.settings.store.io_threads  # at most what was in flight
    assert all(i.leaseOwner is None for i in items if i.status in TERMINAL)
    print(
        f"s3 outage: exit 3 after {exited:.1f}s, {len(handed_back)} claims handed back "
        f"({len(charged)} were in flight), "
        f"{len(items) - len(handed_back)} finished"
    )
