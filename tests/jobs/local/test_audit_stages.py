"""The audit stand-in logs every stage brought up on the servers, not only the first one.

Before, a second `local up` with another DOCUFLOW_STAGE found the stand-in running and left it
watching the first stage alone: the second stage's change log stayed empty, and
`reconcile --audit-log` reported a gap nobody had caused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest

from jobs.local.servers import free_port
from jobs.local.standins.audit_pipe import AuditPipes, StagePipe
from jobs.settings import JobSettings

REPO_ROOT = Path(__file__).resolve().parents[3]


def _jobs(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobs", *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240
    )


def _up(env: dict[str, str]) -> dict[str, str]:
    done = _jobs(env, "local", "up")
    assert done.returncode == 0, done.stderr
    exported = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    return {**env, **{k: v.strip("'") for k, v in exported.items()}}


def _put(env: dict[str, str], count: int) -> None:
    client = boto3.client(
        "dynamodb",
        endpoint_url=env["AWS_ENDPOINT_URL_DYNAMODB"],
        region_name=env["AWS_DEFAULT_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
    )
    for n in range(count):
        client.put_item(TableName=env["DOCUFLOW_TABLE_NAME"], Item={"PK": {"S": "USER#u"}, "SK": {"S": f"DOC#d{n}"}})


def test_a_second_stage_brought_up_on_running_servers_gets_its_change_log(tmp_path: Path) -> None:
    base = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DOCUFLOW_")},
        "DOCUFLOW_LOCAL_DIR": str(tmp_path),
        "DOCUFLOW_DYNAMODB_PORT": str(free_port()),
        "DOCUFLOW_S3_PORT": str(free_port()),
        "DOCUFLOW_LOG_FORMAT": "json",
    }
    try:
        first = _up({**base, "DOCUFLOW_STAGE": "first"})
        second = _up({**base, "DOCUFLOW_STAGE": "second"})  # the servers and the stand-in already run
        _put(first, 1)
        _put(second, 3)
        flushed = _jobs(second, "local", "flush-audit")
        assert flushed.returncode == 0, flushed.stderr
        stages = json.loads(flushed.stdout)["stages"]
        assert {name: counters["records"] for name, counters in stages.items()} == {"first": 1, "second": 3}
        status = json.loads(_jobs(second, "local", "status").stdout)
        assert status["audit-pipe"]["stages"] == ["first", "second"] and status["audit-pipe"]["running"] is True
        # Each stage's records are in its own audit bucket, as its own Pipe would put them.
        s3 = boto3.client(
            "s3",
            endpoint_url=second["AWS_ENDPOINT_URL_S3"],
            region_name=second["AWS_DEFAULT_REGION"],
            aws_access_key_id=second["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=second["AWS_SECRET_ACCESS_KEY"],
        )
        for env in (first, second):
            bucket = JobSettings.from_env(env).audit.audit_bucket
            assert s3.list_objects_v2(Bucket=bucket).get("KeyCount", 0) >= 1, bucket
    finally:
        _jobs(base, "local", "down")
    assert not (tmp_path / "audit-stages").exists()  # `down` forgets the stages with the data


def test_a_registered_stage_is_watched_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []

    def make(settings: JobSettings) -> StagePipe:
        made.append(settings.stage)
        return StagePipe(settings, lambda: None, None)  # type: ignore[arg-type]

    monkeypatch.setenv("DOCUFLOW_STAGE", "ignored")  # the process's own stage is not the registration's
    pipes = AuditPipes(make)
    (tmp_path / "beta.json").write_text(json.dumps(JobSettings(stage="beta").env()))
    (tmp_path / "beta.tmp").write_text("{half a")  # a registration being written is not read
    assert pipes.watch_registered(tmp_path) == ["beta"]
    assert pipes.watch_registered(tmp_path) == []
    assert made == ["beta"] and [p.stage for p in pipes.pipes()] == ["beta"]
