"""The stack settings in sections: each section small, the keys flat and one per field, each
task's size and each schedule's cron in maps by the registry's names (an override reaches the
task definition and the schedule, on the real stack files too), the old per-task keys refused
with their new spelling.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import yaml
from pydantic.alias_generators import to_camel

from components.settings import StackSettings, StackSettingsError
from jobs.registry import tasks
from tests.components.program import MOCKS, REPO_ROOT, ProgramRun, run_as_main, stack_config, stack_files

MAX_FIELDS = 25  # issue 45: no settings class over 25 fields
TASK_DEFINITION = "aws:ecs/taskDefinition:TaskDefinition"
SCHEDULE = "aws:scheduler/schedule:Schedule"
DOC = REPO_ROOT / "docs" / "deploy.md"
BEGIN, END = "<!-- stack-settings:begin -->", "<!-- stack-settings:end -->"
RECORD = "DOCUFLOW_RECORD_STACK_SETTINGS=1 .venv/bin/python -m pytest -q tests/components/test_settings_sections.py"


def _registry_schedules() -> dict[str, str]:
    return {t.schedule.name: t.schedule.default for _, t in tasks().values() if t.schedule is not None}


def test_every_section_and_the_whole_have_at_most_25_fields() -> None:
    models = {"StackSettings": StackSettings, **StackSettings.sections()}
    counts = {name: len(model.model_fields) for name, model in models.items()}
    assert max(counts.values()) <= MAX_FIELDS, counts
    assert len(StackSettings.sections()) >= 5, counts  # grouped by concern, not one flat class


def test_every_key_is_one_field_of_one_section() -> None:
    """The keys stay flat (`docuflow:retentionDays`, whatever its section): no two fields may
    share one, and each lands in the section that declares it.
    """
    sections = StackSettings.sections()
    own = [n for n, f in StackSettings.model_fields.items() if (f.alias or n) not in sections]
    assert len(StackSettings.keys()) == len(own) + sum(len(m.model_fields) for m in sections.values())
    for name, where in StackSettings.keys().items():
        model = StackSettings if where.section is None else sections[where.section]
        assert where.info in model.model_fields.values(), name


def test_no_key_is_spelled_from_a_task_name() -> None:
    """A task's size and schedule are entries of the maps, so a new task needs no new key."""
    keys = set(StackSettings.keys())
    for name in tasks():
        for suffix in ("Cpu", "Memory", "Size", "Schedule"):
            assert f"docuflow:{to_camel(name.replace('-', '_'))}{suffix}" not in keys


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("docuflow:ingestCpu", "docuflow:taskSizes.ingest.cpu"),
        ("docuflow:ingestMemory", "docuflow:taskSizes.ingest.memory"),
        ("docuflow:reconcileCpu", "docuflow:taskSizes.reconcile.cpu (and .repair, .drill"),
        ("docuflow:reconcileMemory", "docuflow:taskSizes.reconcile.memory (and .repair, .drill"),
        ("docuflow:ingestSchedule", "docuflow:schedules.ingest"),
        ("docuflow:reconcileSchedule", "docuflow:schedules.reconcile"),
        ("docuflow:drillSchedule", "docuflow:schedules.drill"),
    ],
)
def test_an_old_per_task_key_is_refused_naming_its_new_spelling(old: str, new: str) -> None:
    with pytest.raises(StackSettingsError) as info:
        StackSettings.from_mapping({**stack_config("dev"), old: "2048"})
    message = str(info.value)
    assert f"{old} is now {new}" in message and "docuflow:taskSizes: {ingest: {cpu:" in message, message


def test_the_program_refuses_an_old_key_before_any_resource() -> None:
    before = len(MOCKS.resources)
    config = {**stack_config("prod"), "docuflow:stage": "oldkeys", "docuflow:reconcileMemory": "16384"}
    with pytest.raises(StackSettingsError, match=r"docuflow:reconcileMemory is now docuflow:taskSizes"):
        run_as_main(config)
    # (Another test's component may still register while this one runs: only this stage's count.)
    assert [r.name for r in MOCKS.resources[before:] if "oldkeys" in r.name] == []


@pytest.mark.parametrize("stack", stack_files())
def test_every_stack_file_sizes_every_task_and_times_every_schedule(stack: str) -> None:
    settings = StackSettings.from_mapping(stack_config(stack))
    assert set(settings.tasks.sizes()) == set(tasks())
    assert set(settings.scheduling.expressions()) == set(_registry_schedules())


def test_the_stack_files_sizes_reach_the_task_definitions(every_stack: ProgramRun) -> None:
    settings = StackSettings.from_mapping(stack_config(every_stack.stack))
    definitions = {r.inputs["family"]: r.inputs for r in every_stack.of_type(TASK_DEFINITION)}
    for name, size in settings.tasks.sizes().items():
        made = definitions[f"docuflow-{every_stack.stack}-{name}"]
        assert (made["cpu"], made["memory"]) == (str(size.cpu), str(size.memory)), name
    if every_stack.stack.startswith("prod"):  # production's reconcile tasks are the large ones
        assert settings.tasks.sizes()["drill"].memory == 16384


def test_a_size_and_a_schedule_override_reach_the_task_definition_and_the_schedule() -> None:
    config = {
        **stack_config("dev"),
        "docuflow:stage": "sized",
        "docuflow:taskSizes": json.dumps({"erasure": {"cpu": 1024, "memory": 3072}}),
        "docuflow:schedules": json.dumps({"drill": "cron(0 7 1 * ? *)"}),
    }
    recorded = run_as_main(config)
    definitions = {r.inputs["family"]: r.inputs for r in recorded if r.typ == TASK_DEFINITION}
    for name, (_, task) in tasks().items():
        expected = ("1024", "3072") if name == "erasure" else (str(task.size.cpu), str(task.size.memory))
        made = definitions[f"docuflow-sized-{name}"]
        assert (made["cpu"], made["memory"]) == expected, name  # a task not named keeps the registry's
    schedules = {r.inputs["name"]: r.inputs for r in recorded if r.typ == SCHEDULE}
    expected_crons = _registry_schedules() | {"drill": "cron(0 7 1 * ? *)"}
    assert {n: schedules[f"docuflow-sized-{n}"]["scheduleExpression"] for n in expected_crons} == expected_crons


# --- The table in docs/deploy.md ----------------------------------------------------------------
def _default(declared: dict[str, Any] | None) -> str:
    if declared is None or "default" not in declared:
        return "required"
    value = declared["default"]
    if value in ("", {}, []):
        return "unset" if value == "" else "empty"
    return f"`{json.dumps(value) if isinstance(value, list | bool) else value}`"


def settings_table() -> str:
    """Every key by section, with Pulumi.yaml's default and description (test_project_config
    holds those in step with the fields).
    """
    declared: dict[str, dict[str, Any]] = yaml.safe_load((REPO_ROOT / "Pulumi.yaml").read_text())["config"]
    rows = ["| Section | Key | Default | Description |", "|---|---|---|---|"]
    for name, where in StackSettings.keys().items():
        entry = declared.get(name)
        description = entry["description"] if entry else "The AWS provider's region: the stack's home region"
        cells = (f"`{where.section or 'stack'}`", f"`{name}`", _default(entry), description)
        rows.append("| " + " | ".join(cell.replace("|", r"\|") for cell in cells) + " |")
    return "\n".join(rows)


def test_the_docs_list_every_key_by_section() -> None:
    text = DOC.read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1, f"docs/deploy.md needs {BEGIN} … {END}"
    head, rest = text.split(BEGIN)
    documented, tail = rest.split(END)
    expected = f"\n{settings_table()}\n"
    if os.environ.get("DOCUFLOW_RECORD_STACK_SETTINGS") and documented != expected:
        DOC.write_text(f"{head}{BEGIN}{expected}{END}{tail}")
        pytest.skip("docs/deploy.md's stack settings table rewritten: review its diff")
    assert documented == expected, f"docs/deploy.md's stack settings table is out of step: {RECORD}"
    assert "| `tasks` | `docuflow:taskSizes` | empty |" in expected
