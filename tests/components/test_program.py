"""The program as Pulumi runs it (the job image's files: test_image.py)."""

from __future__ import annotations

from jobs.contract import layout
from tests.components.program import REPO_ROOT, ProgramRun, run_as_main, stack_config


def test_main_runs_the_whole_program_for_a_new_stage(dev: ProgramRun) -> None:
    config = {**stack_config("dev"), "docuflow:stage": "qa", "docuflow:ingestTasks": "2"}
    recorded = run_as_main(config)
    custom = [r for r in recorded if r.custom]
    # dev's graph: the number of ingest tasks is the schedule's task count, not more resources.
    assert len(custom) == len(dev.custom)
    tables = [r for r in custom if r.typ == "aws:dynamodb/table:Table"]
    assert [t.inputs["name"] for t in tables] == [layout.table_name("qa")]
    (ingest,) = [
        r for r in custom if r.typ == "aws:scheduler/schedule:Schedule" and r.inputs["name"] == "docuflow-qa-ingest"
    ]
    assert ingest.inputs["target"]["ecsParameters"]["taskCount"] == 2


def test_main_stays_thin() -> None:
    source = (REPO_ROOT / "__main__.py").read_text()
    assert "pulumi.Config(" in source and source.count("pulumi.Config(") == 1
    assert "aws.s3." not in source and "aws.iam." not in source  # resources live in components
