"""Crash safety: kill -9 the ingest at seeded random moments, rerun after the leases expired.

After the reruns every raw document has exactly one terminal item and one result.json of the same
ETag, reconcile (deep, no grace) finds nothing, and the table stream shows at most one terminal
write per claim. A document the dead run held is claimed once more: its attempts count its claims.
"""

from __future__ import annotations

import random
import time

import boto3
import pytest
from reliability_helpers import (
    LEASE_SECONDS,
    assert_clean,
    assert_one_finish_per_claim,
    job_env,
    kill_group,
    rerun_until_complete,
    run_ingest_cli,
    spawn_ingest,
)

from jobs.contract import TERMINAL, Status, layout
from jobs.demo.corpus import generate
from jobs.demo.seed import upload

DOCS = 40
# A fifth of the kills land a seeded delay after the start (interpreter start-up, listing, first
# claims); the others once a seeded number of documents is finished on the table (plus a seeded
# jitter), so they hit a run with documents in flight whatever the machine's speed: a clean run
# of DOCS takes about a second once the first claims landed.
BLIND_WINDOW = (0.2, 1.5)
JITTER = (0.0, 0.15)
FAST_SEEDS = [102, 110]  # both kill with documents in flight
SLOW_SEEDS = [seed for seed in range(100, 121) if seed not in FAST_SEEDS]  # 21 seeds in `make test-slow`


def wait_for_finished(stack, process, at_least: int, timeout: float = 60) -> None:
    """Until the table holds `at_least` terminal items (0: any item, i.e. the first claims)."""
    client = stack.dynamodb()
    table = stack.settings.store.table_name
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if at_least == 0:
            if client.scan(TableName=table, Select="COUNT", Limit=1)["Count"]:
                return
        else:
            terminal = client.scan(
                TableName=table,
                Select="COUNT",
                FilterExpression="#s <> :p",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":p": {"S": "PROCESSING"}},
            )["Count"]
            if terminal >= at_least:
                return
        time.sleep(0.03)


def crash_then_recover(stack, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(3, DOCS, bad_ratio=0.15, seed=seed))
    env = job_env(stack)
    crashes = rng.choice([1, 1, 2])  # at most max_attempts - 1, so no claim is dead-lettered
    killed = 0
    for _ in range(crashes):
        process = spawn_ingest(env)
        if rng.random() < 0.2:
            time.sleep(rng.uniform(*BLIND_WINDOW))
        else:
            wait_for_finished(stack, process, rng.randrange(0, DOCS - 4))
            time.sleep(rng.uniform(*JITTER))
        if process.poll() is None:
            kill_group(process)
            killed += 1
        else:
            process.communicate()
        left = [i for i in stack.items() if i.status == Status.PROCESSING]
        print(f"crash seed {seed}: killed={killed} processing_left={len(left)} items={len(stack.items())}")
        time.sleep(LEASE_SECONDS + 0.3)
    rerun_until_complete(stack, env)

    items = assert_clean(stack, DOCS)
    claims = assert_one_finish_per_claim(stack)
    assert len(claims) == DOCS
    for (user, doc), item in items.items():
        assert item.attempts == claims[layout.document_sk(doc)], (user, doc)
        assert item.version == item.attempts + 1, (user, doc)  # each claim +1, the finish +1
    return {"killed": killed, "reclaimed": sum(1 for n in claims.values() if n > 1)}


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_kill_9_then_rerun_converges(stack, seed: int) -> None:
    crash_then_recover(stack, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_kill_9_then_rerun_converges_many_seeds(stack, seed: int) -> None:
    crash_then_recover(stack, seed)


def crash_mid_drain(stack, seed: int) -> None:
    """Kill -9 of a drain: the messages it held come back after their visibility timeout, and the
    next drain converges (the claims it left expire first: the queue's timeout outlasts the lease).
    """
    rng = random.Random(seed)
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(3, DOCS, bad_ratio=0.15, seed=seed))
    visibility = LEASE_SECONDS + 2
    sqs = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    sqs.set_queue_attributes(
        QueueUrl=stack.settings.store.arrivals_queue_url, Attributes={"VisibilityTimeout": str(visibility)}
    )
    env = job_env(stack)
    process = spawn_ingest(env, backfill=False)
    wait_for_finished(stack, process, rng.randrange(1, DOCS // 2))
    assert process.poll() is None, "the drain finished before the kill"
    kill_group(process)
    assert any(i.status == Status.PROCESSING for i in stack.items()), "no document was in flight"
    time.sleep(visibility + 0.5)
    for _ in range(4):
        done = run_ingest_cli(env, backfill=False)
        assert done.returncode == 0, done.stderr[-2000:]
        if all(i.status in TERMINAL for i in stack.items()) and len(stack.items()) == DOCS:
            break
        time.sleep(visibility + 0.5)
    assert_clean(stack, DOCS)
    waiting = sqs.get_queue_attributes(
        QueueUrl=stack.settings.store.arrivals_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )
    assert set(waiting["Attributes"].values()) == {"0"}


@pytest.mark.parametrize("seed", [131])
def test_kill_9_mid_drain_then_the_messages_come_back_and_converge(stack, seed: int) -> None:
    crash_mid_drain(stack, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(132, 138))
def test_kill_9_mid_drain_many_seeds(stack, seed: int) -> None:
    crash_mid_drain(stack, seed)
