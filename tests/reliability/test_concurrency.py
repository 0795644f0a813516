"""Concurrent ingests on one prefix (separate processes): every document is processed exactly once.

The conditional claims decide: on the table stream each document shows exactly one claim and one
finish, and the processed counts of the runs' summaries add up to the number of documents.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from reliability_helpers import assert_clean, assert_one_finish_per_claim, job_env, spawn_ingest

from jobs.demo.corpus import generate
from jobs.demo.seed import upload


def run_concurrently(stack, docs: int, runs: int, seed: int) -> list[dict]:
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(5, docs, bad_ratio=0.1, seed=seed))
    # A long lease: no run may take over another's claim, however slow the machine.
    env = job_env(stack, DOCUFLOW_LEASE_SECONDS="900", DOCUFLOW_EXTRACT_WORKERS="1", DOCUFLOW_IO_THREADS="4")
    processes = [spawn_ingest(env) for _ in range(runs)]
    summaries = []
    for process in processes:
        out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err[-2000:]
        summaries.append(json.loads(out))
    assert sum(s["processed"] for s in summaries) == docs
    # every claim a run decided on either landed and was processed or lost to the other run
    assert sum(s["processed"] + s["lostClaims"] for s in summaries) == sum(
        s["decisions"].get("CLAIM", 0) for s in summaries
    )
    claims = assert_one_finish_per_claim(stack)
    assert len(claims) == docs and set(claims.values()) == {1}, Counter(claims.values())
    items = assert_clean(stack, docs)
    assert all(i.attempts == 1 and i.version == 2 for i in items.values())
    return summaries


def test_two_ingest_processes_on_one_prefix(stack) -> None:
    summaries = run_concurrently(stack, docs=40, runs=2, seed=31)
    print(
        "runs:",
        [
            (
                s["processed"],
                s["lostClaims"],
                s["decisions"],
                s["calls"].get("dynamodb.TransactWrite.claim", {}).get("conditional_check_failures"),
            )
            for s in summaries
        ],
    )


@pytest.mark.slow
def test_three_ingest_processes_on_a_larger_prefix(stack) -> None:
    summaries = run_concurrently(stack, docs=150, runs=3, seed=32)
    print(
        "runs:",
        [
            (
                s["processed"],
                s["lostClaims"],
                s["decisions"],
                s["calls"].get("dynamodb.TransactWrite.claim", {}).get("conditional_check_failures"),
            )
            for s in summaries
        ],
    )
