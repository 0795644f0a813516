"""The program as Pulumi runs it, and the files that ship with it (Dockerfile, .dockerignore)."""

from __future__ import annotations

import re

from jobs.contract import layout
from tests.components.program import REPO_ROOT, ProgramRun, run_as_main, stack_config


def test_main_runs_the_whole_program_for_a_new_stage(dev: ProgramRun) -> None:
    config = {**stack_config("dev"), "docuflow:stage": "qa", "docuflow:shardCount": "2"}
    recorded = run_as_main(config)
    custom = [r for r in recorded if r.custom]
    # dev's graph minus two ingest schedules.
    assert len(custom) == len(dev.custom) - 2
    tables = [r for r in custom if r.typ == "aws:dynamodb/table:Table"]
    assert [t.inputs["name"] for t in tables] == [layout.table_name("qa")]


def test_main_stays_thin() -> None:
    source = (REPO_ROOT / "__main__.py").read_text()
    assert "pulumi.Config(" in source and source.count("pulumi.Config(") == 1
    assert "aws.s3." not in source and "aws.iam." not in source  # resources live in components


def test_dockerfile() -> None:
    lines = [
        line.strip()
        for line in (REPO_ROOT / "Dockerfile").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert lines[0] == "FROM python:3.11-slim"
    copies = [line for line in lines if line.startswith("COPY")]
    assert copies == ["COPY requirements-jobs.txt ./", "COPY jobs/ ./jobs/"]
    assert "pip install --no-cache-dir -r requirements-jobs.txt" in " ".join(lines)
    (user,) = [line for line in lines if line.startswith("USER")]
    assert re.fullmatch(r"USER [1-9]\d*:[1-9]\d*", user)
    assert 'ENTRYPOINT ["python", "-m", "jobs"]' in lines


def test_dockerignore_admits_only_the_image_inputs() -> None:
    rules = [
        line.strip()
        for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "*"
    assert {r for r in rules if r.startswith("!")} == {"!requirements-jobs.txt", "!jobs/"}
