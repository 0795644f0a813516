"""Bad settings and options give one clear line and exit 2, never a traceback (issue 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in {**os.environ, **(env or {})}.items() if k not in drop}
    return subprocess.run(
        [sys.executable, "-m", "jobs", *args], env=environ, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("args", "env", "drop", "says"),
    [
        (("ingest", "backfill"), {"SHARD_INDEX": "one"}, (), "SHARD_INDEX"),
        (("ingest", "backfill"), {"SHARD_COUNT": "0"}, (), "SHARD_COUNT"),
        (("ingest", "backfill"), {"SHARD_INDEX": "3", "SHARD_COUNT": "2"}, (), "SHARD_INDEX 3 / SHARD_COUNT 2"),
        (("ingest", "backfill", "--shard", "4/4"), {}, (), "--shard '4/4'"),
        (("ingest", "drain", "--max-docs", "0"), {}, (), "--max-docs"),
        # nan and inf pass a plain `> 0`: a drain with no bound at all.
        (("ingest", "drain", "--max-minutes", "nan"), {}, (), "--max-minutes must be a positive number"),
        (("ingest", "drain", "--max-minutes", "inf"), {}, (), "--max-minutes must be a positive number"),
        (("ingest", "drain", "--shard", "1/4"), {}, (), "unrecognized arguments: --shard"),
        (("ingest", "backfill"), {}, ("AWS_REGION", "AWS_DEFAULT_REGION"), "region"),
        (("ingest", "backfill"), {"AWS_ENDPOINT_URL_DYNAMODB": "ht!tp//::nope"}, (), "AWS_ENDPOINT_URL_DYNAMODB"),
        (("ingest", "drain"), {"DOCUFLOW_ARRIVALS_QUEUE_URL": ""}, (), "ingest backfill"),
        (("ingest", "backfill"), {"DOCUFLOW_TABLE_NAME": "docuflow-missing-table"}, (), "docuflow-missing-table"),
        (("ingest", "drain"), {"DOCUFLOW_TABLE_NAME": "docuflow-missing-table"}, (), "docuflow-missing-table"),
        # SQS hides a message 12 hours at most: a longer lease could never be deferred to.
        (("ingest", "drain"), {"DOCUFLOW_LEASE_SECONDS": "43201"}, (), "DOCUFLOW_LEASE_SECONDS"),
        # The old spellings are gone (issue 45): refused, never run.
        (("ingest",), {}, (), "the following arguments are required"),
        (("ingest", "--backfill"), {}, (), "the following arguments are required"),
        (("ingest", "--redrive-dlq"), {}, (), "the following arguments are required"),
        (("documents", "list", "--user", "u", "--next-token", "Zm9yZ2Vk"), {}, (), "next-token"),
        (
            ("documents", "list", "--user", "u"),
            {"DOCUFLOW_TABLE_NAME": "docuflow-missing-table"},
            (),
            "docuflow-missing-table",
        ),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(stack, args, env, drop, says) -> None:
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key="raw/u/d/a.json", Body=b"{}")  # work to do
    done = run(*args, env=env, drop=drop)
    assert done.returncode == 2, done.stderr[-1500:]
    assert says in done.stderr
    assert "Traceback" not in done.stderr


def test_the_help_says_what_each_command_does() -> None:
    done = run("--help")
    assert done.returncode == 0
    (ingest,) = [line for line in done.stdout.splitlines() if line.strip().startswith("ingest")]
    assert "arrival queue" in ingest and "backfill" in ingest


def test_redrive_runs(stack) -> None:
    done = run("ingest", "redrive")
    assert done.returncode == 0, done.stderr[-1500:]
    assert "deprecated" not in done.stderr
