"""Helpers of the reliability tests: ingest subprocesses, invariants, stream checks.

`assert_consistent` is the invariant every test ends on: every raw document has exactly one item
in a terminal status and one result.json whose source ETag is the item's rawEtag, and no item or
result exists without its raw document. `reconcile_findings` asks the reconcile job the same
question (deep, no grace) so both views must agree.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

import pytest

from jobs.contract import ResultDocument, Status, layout
from jobs.contract.status import TERMINAL
from jobs.errors import InvalidKeyError
from jobs.local.stack import job_env as local_job_env

REPO_ROOT = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 1


def job_env(stack, **extra: str) -> dict[str, str]:
    """The environment of a `python -m jobs ingest` child: the stage, the endpoints, short leases."""
    env = {**os.environ, **local_job_env(stack.endpoints, stack.settings)}
    env.update(
        {
            "DOCUFLOW_LEASE_SECONDS": str(LEASE_SECONDS),
            "DOCUFLOW_IO_THREADS": "8",
            "DOCUFLOW_EXTRACT_WORKERS": "2",
            "DOCUFLOW_LOG_FORMAT": "json",
            "DOCUFLOW_OCR_ENGINE": stack.settings.extraction.ocr_engine,  # as the in-process runs of the stage
            "PYTHONPATH": str(REPO_ROOT),
        }
    )
    env.update(extra)
    return env


def spawn_ingest(env: dict[str, str], *args: str, backfill: bool = True) -> subprocess.Popen[str]:
    """A new process group, so a kill -9 takes the forkserver and extraction workers with it.
    A backfill sweep unless `backfill=False` (then a drain of the arrival queue).
    """
    mode = ["backfill"] if backfill else ["drain", "--idle-seconds", "1"]
    return subprocess.Popen(
        [sys.executable, "-m", "jobs", "ingest", *mode, *args],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def kill_group(process: subprocess.Popen[str]) -> None:
    """Kill -9 the ingest we started and every child of its session (by its own pid)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)


def run_ingest_cli(
    env: dict[str, str], *args: str, timeout: float = 180, backfill: bool = True
) -> subprocess.CompletedProcess[str]:
    process = spawn_ingest(env, *args, backfill=backfill)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def rerun_until_complete(stack, env: dict[str, str], max_runs: int = 6) -> list[subprocess.CompletedProcess[str]]:
    """Rerun the ingest (each time after the leases of a dead run expired) until nothing is PROCESSING."""
    runs = []
    for _ in range(max_runs):
        done = run_ingest_cli(env)
        runs.append(done)
        assert done.returncode == 0, done.stderr[-2000:]
        if all(i.status in TERMINAL for i in stack.items()):
            return runs
        time.sleep(LEASE_SECONDS + 0.3)
    pytest.fail(
        f"still PROCESSING after {max_runs} runs: {[i.documentId for i in stack.items() if i.status not in TERMINAL]}"
    )


def raw_documents(stack) -> dict[tuple[str, str], dict]:
    """Valid raw documents by (userId, documentId): key and ETag."""
    s3 = stack.s3()
    docs: dict[tuple[str, str], dict] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=stack.settings.store.raw_bucket, Prefix=layout.RAW_PREFIX
    ):
        for obj in page.get("Contents", []):
            try:
                raw = layout.parse_raw_key(obj["Key"])
            except InvalidKeyError:
                continue
            assert (raw.user_id, raw.document_id) not in docs, f"two files under one documentId: {obj['Key']}"
            docs[(raw.user_id, raw.document_id)] = {"key": obj["Key"], "etag": obj["ETag"]}
    return docs


def read_result(stack, user_id: str, document_id: str) -> ResultDocument:
    body = (
        stack.s3()
        .get_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key(user_id, document_id))["Body"]
        .read()
    )
    return ResultDocument.from_json_bytes(body)


def assert_consistent(stack, expected: int | None = None) -> dict[tuple[str, str], object]:
    """The ingest invariants, checked directly against the table and the buckets."""
    raws = raw_documents(stack)
    items = stack.items()
    by_id = {(i.userId, i.documentId): i for i in items}
    assert len(by_id) == len(items), "two items for one document"
    if expected is not None:
        assert len(raws) == expected
    assert set(by_id) == set(raws), {
        "items without raw": set(by_id) - set(raws),
        "raw without item": set(raws) - set(by_id),
    }
    result_keys = set(stack.keys(stack.settings.store.processed_bucket, "processed/"))
    assert result_keys == {layout.result_key(*ident) for ident in raws}, "results do not match raw documents one to one"
    for ident, item in by_id.items():
        assert item.status in TERMINAL, (ident, item.status)
        assert item.leaseOwner is None and item.leaseExpiresAt is None, ident
        assert item.rawEtag == raws[ident]["etag"], ident
        assert item.resultS3Uri == layout.s3_uri(stack.settings.store.processed_bucket, layout.result_key(*ident)), (
            ident
        )
        result = read_result(stack, *ident)
        assert result.source.etag == item.rawEtag, ident
        assert result.validation.status == item.status, ident
        if item.status == Status.FAILED:
            assert item.failureCode and item.failureMessage, ident
    return by_id


def reconcile_findings(stack) -> list[dict]:
    """Findings of a deep live reconcile with no grace period (an empty list: reconcile is clean)."""
    from jobs.reconcile import LivePlan, ReconcileRun

    outcome = ReconcileRun(stack.settings, LivePlan(deep=True, grace=timedelta(0), write_report=False)).execute()
    return outcome.findings.to_dicts()


def assert_clean(stack, expected: int | None = None) -> dict[tuple[str, str], object]:
    items = assert_consistent(stack, expected)
    findings = reconcile_findings(stack)
    assert findings == [], findings[:5]
    return items


def claims_and_finishes(stack) -> dict[str, list[tuple[str, str | None, str | None]]]:
    per_doc: dict[str, list[tuple[str, str | None, str | None]]] = defaultdict(list)
    for change in stack.stream_changes():
        per_doc[change.sort_key].append((change.event, change.old_status, change.new_status))
    return per_doc


def assert_one_finish_per_claim(stack) -> dict[str, int]:
    """On the stream, every claim (→ PROCESSING) is followed by at most one terminal write, the last
    claim by exactly one; no terminal status is ever overwritten by another terminal write.
    """
    claims: dict[str, int] = {}
    for sort_key, changes in claims_and_finishes(stack).items():
        finishes_since_claim = None
        claims[sort_key] = 0
        for _event, old, new in changes:
            if new == Status.PROCESSING:
                claims[sort_key] += 1
                finishes_since_claim = 0
            else:
                assert new in TERMINAL and old == Status.PROCESSING, (sort_key, changes)
                assert finishes_since_claim is not None, (sort_key, changes)
                finishes_since_claim += 1
                assert finishes_since_claim == 1, f"terminal status written twice for one claim: {sort_key} {changes}"
        assert finishes_since_claim == 1, (sort_key, changes)
    return claims
