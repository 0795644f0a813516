"""The program as Pulumi runs it (the job image's files: test_image.py)."""

from __future__ import annotations

import json

import pytest

from components.settings import StackSettings, StackSettingsError
from jobs.contract import layout
from tests.components.program import MOCKS, REPO_ROOT, ProgramRun, run_as_main, stack_config


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
    # The config is read whole, in one place (load_settings), never key by key.
    assert "pulumi.Config(" not in source and source.count("get_config_env()") == 1
    assert "aws.s3." not in source and "aws.iam." not in source  # resources live in components


def test_a_misspelt_key_stops_the_program_before_any_resource() -> None:
    """The engine hands the program the whole stack config (Pulumi.dev.yaml plus a typo here):
    a `docuflow:` key no setting reads fails the run, naming the key and the one it resembles.
    """
    config = {**stack_config("dev"), "docuflow:retentionDayz": "5"}
    before = len(MOCKS.resources)
    with pytest.raises(StackSettingsError, match=r"docuflow:retentionDayz.*did you mean docuflow:retentionDays"):
        run_as_main(config)
    assert MOCKS.resources[before:] == []


def test_the_config_the_host_hands_in_its_environment_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python language host passes the stack's config as PULUMI_CONFIG (JSON), not through
    set_all_config: a typo there is refused too, and the keys there are the ones read.
    """
    config = {**stack_config("dev"), "docuflow:ingestTaskz": "2"}
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(config))
    before = len(MOCKS.resources)
    with pytest.raises(StackSettingsError, match=r"docuflow:ingestTaskz.*did you mean docuflow:ingestTasks"):
        run_as_main({})
    assert MOCKS.resources[before:] == []
    del config["docuflow:ingestTaskz"]
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({**config, "docuflow:ingestTasks": "3"}))
    (ingest,) = [
        r
        for r in run_as_main({})
        if r.typ == "aws:scheduler/schedule:Schedule" and r.inputs["name"] == "docuflow-dev-ingest"
    ]
    assert ingest.inputs["target"]["ecsParameters"]["taskCount"] == 3


def test_the_scheduled_drain_stops_in_time_for_the_reconcile(every_stack: ProgramRun) -> None:
    settings = StackSettings.from_mapping(stack_config(every_stack.stack))
    (ingest,) = [
        t
        for t in every_stack.of_type("aws:ecs/taskDefinition:TaskDefinition")
        if t.inputs["family"] == f"docuflow-{every_stack.stack}-ingest"
    ]
    (container,) = json.loads(ingest.inputs["containerDefinitions"])
    assert container["command"][-2:] == ["--max-minutes", str(settings.scheduling.drain_minutes)]
    assert settings.scheduling.drain_minutes == 165  # 01:00 → 05:00, 3 h on the spring-forward night, less 15 minutes
