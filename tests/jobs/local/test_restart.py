"""`local down` then `local up` gives an empty, consistent stack: a restart never produces
findings nobody caused (before, DynamoDB kept its items on disk while S3 came back empty).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest

from jobs.contract.duplicates import is_marker_item
from jobs.local.servers import free_port
from jobs.store.dynamo_wire import from_wire

REPO_ROOT = Path(__file__).resolve().parents[3]


def _jobs(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobs", *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240
    )


def _markers(env: dict[str, str]) -> int:
    """The duplicate markers in the stage's table (each written once, by its document's finish)."""
    client = boto3.client(
        "dynamodb",
        endpoint_url=env["AWS_ENDPOINT_URL_DYNAMODB"],
        region_name=env["AWS_DEFAULT_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
    )
    pages = client.get_paginator("scan").paginate(TableName=env["DOCUFLOW_TABLE_NAME"])
    return sum(is_marker_item(from_wire(item)) for page in pages for item in page["Items"])


def _up(env: dict[str, str]) -> dict[str, str]:
    done = _jobs(env, "local", "up")
    assert done.returncode == 0, done.stderr
    exported = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    return {**env, **{k: v.strip("'") for k, v in exported.items()}}


def test_down_then_up_then_reconcile_finds_nothing(tmp_path: Path) -> None:
    base = {
        **os.environ,
        "DOCUFLOW_LOCAL_DIR": str(tmp_path),
        "DOCUFLOW_DYNAMODB_PORT": str(free_port()),
        "DOCUFLOW_S3_PORT": str(free_port()),
        "DOCUFLOW_STAGE": "restart",
        "DOCUFLOW_LOG_FORMAT": "json",
    }
    try:
        env = _up(base)
        assert _jobs(env, "demo", "seed", "--users", "2", "--docs", "12").returncode == 0
        ingest = _jobs(env, "ingest", "drain", "--idle-seconds", "1")
        assert ingest.returncode == 0, ingest.stderr[-1500:]
        assert json.loads(ingest.stdout)["processed"] == 12
        status = json.loads(_jobs(env, "local", "status").stdout)
        assert {s["data"] for s in status.values() if "port" in s} == {"memory"}
        assert status["audit-pipe"]["running"] is True
        # `up` started the audit stand-in: the night's claims and finishes are in the change log.
        flushed = _jobs(env, "local", "flush-audit")
        assert flushed.returncode == 0, flushed.stderr
        # Each document's claim and finish, and each duplicate marker its finish put (docs/review.md).
        assert json.loads(flushed.stdout)["stages"]["restart"]["records"] == 24 + _markers(env)

        assert _jobs(env, "local", "down").returncode == 0
        env = _up(base)
        reconcile = _jobs(env, "reconcile", "live", "--grace", "0s", "--fail-on", "warning")
        assert reconcile.returncode == 0, reconcile.stdout[-1500:] + reconcile.stderr[-1500:]
        assert "0 findings" in reconcile.stdout
        listed = json.loads(_jobs(env, "documents", "list", "--status", "PROCESSED").stdout)
        assert listed["items"] == []  # nothing survived on one side only
    finally:
        _jobs(base, "local", "down")


@pytest.fixture(autouse=True)
def _no_leftover_servers(tmp_path: Path) -> None:
    yield
    assert not (tmp_path / "stack.json").exists()
