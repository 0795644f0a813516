"""A sustained DynamoDB outage mid-run, on a dedicated DynamoDB Local that keeps its data on disk.

The ingest stops with exit 3 and a message naming the cause after its bounded retries; nothing is
half-written (an item is absent, PROCESSING with a lease, or terminal with its result.json); once
the server is back on the same port and data directory, the next run (after the leases expired)
completes and the invariants hold.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
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
from jobs.settings import JobSettings

pytestmark = pytest.mark.slow

DOCS = 240  # enough that the run is still going when the server is killed


class DedicatedDynamo:
    """A DynamoDB Local of our own (data in `data_dir`), stopped and restarted on one port."""

    def __init__(self, tmp_path: Path) -> None:
        self.data_dir = tmp_path / "dynamodb-data"
        self.data_dir.mkdir()
        self.spec = servers.dynamodb_spec(servers.free_port(), self.data_dir, tmp_path)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = servers.start(self.spec)
        servers.wait_until_ready(self.spec, self.process)

    def stop(self) -> None:
        """kill -9 the server's process group (DynamoDB Local takes 10 s to honour a SIGTERM);
        what it committed stays in its SQLite files."""
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def outage_stack(stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[object, DedicatedDynamo]]:  # noqa: ANN001
    """A stage whose table lives on a dedicated DynamoDB Local; S3 stays the session's."""
    dynamo = DedicatedDynamo(tmp_path)
    dynamo.start()
    try:
        endpoints = Endpoints(dynamodb=dynamo.spec.endpoint, s3=stack.endpoints.s3)
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoints.dynamodb)
        settings = JobSettings(stage=f"{stack.settings.stage}o")
        bootstrap_endpoints(endpoints, settings)
        for key, value in settings.env().items():
            monkeypatch.setenv(key, value)
        yield type(stack)(settings=settings, endpoints=endpoints), dynamo
    finally:
        dynamo.stop()


def assert_nothing_half_written(stack) -> Counter[str]:  # noqa: ANN001
    """Each item absent, PROCESSING under a lease, or terminal with the result.json it points at."""
    seen: Counter[str] = Counter()
    raws = {}
    for key in stack.keys(stack.settings.raw_bucket, layout.RAW_PREFIX):
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


@pytest.mark.parametrize("seed", [1, 2])
def test_dynamodb_outage_mid_run_exits_3_and_the_next_run_completes(outage_stack, seed: int) -> None:  # noqa: ANN001
    stack, dynamo = outage_stack
    rng = random.Random(seed)
    upload(stack.s3(), stack.settings.raw_bucket, generate(4, DOCS, bad_ratio=0.1, seed=seed))
    env = job_env(stack, DOCUFLOW_RETRY_ATTEMPTS="3")
    process = spawn_ingest(env)
    client = stack.dynamodb()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:  # until the first claims landed
        if client.scan(TableName=stack.settings.table_name, Select="COUNT", Limit=1)["Count"]:
            break
        time.sleep(0.05)
    time.sleep(rng.uniform(0.2, 1.0))
    assert process.poll() is None, "the run finished before the outage: no outage tested"
    started = time.monotonic()
    dynamo.stop()
    stopped = time.monotonic() - started
    out, err = process.communicate(timeout=120)
    assert process.returncode == 3, err[-2000:]
    assert time.monotonic() - started < 90  # bounded retries, not a hang
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: ingest aborted: ") and "Could not connect to the endpoint URL" in last, last
    assert out == ""

    exited = time.monotonic() - started
    dynamo.start()  # same port, same data directory
    restarted = time.monotonic() - started
    seen = assert_nothing_half_written(stack)
    print(f"outage seed {seed}: server stopped in {stopped:.1f}s, exit 3 after {exited:.1f}s, back after {restarted:.1f}s, state {dict(seen)}")
    time.sleep(LEASE_SECONDS + 0.3)
    done = run_ingest_cli(env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert_clean(stack, DOCS)
