"""The environment every task definition sets is JobSettings' declaration: each variable is a
declared setting, and the settings the job reads from it give back the very text the stack set.
"""

from __future__ import annotations

import json

from components.settings import StackSettings
from jobs.settings import SETTINGS, JobSettings, env_name
from tests.components.program import ProgramRun, stack_config

FIELD_OF = {env_name(name): name for name in SETTINGS}


def _environments(run: ProgramRun) -> dict[str, dict[str, str]]:
    found = {}
    for task in run.of_type("aws:ecs/taskDefinition:TaskDefinition"):
        for container in json.loads(task.inputs["containerDefinitions"]):
            found[f"{task.inputs['family']}/{container['name']}"] = {
                e["name"]: e["value"] for e in container.get("environment", [])
            }
    return found


def test_task_definitions_set_only_declared_settings(every_stack: ProgramRun) -> None:
    environments = _environments(every_stack)
    assert environments
    for where, environment in environments.items():
        undeclared = set(environment) - set(FIELD_OF)
        assert not undeclared, f"{where} sets {undeclared}: declare them as JobSettings fields"
        read = JobSettings.from_env(environment)
        assert read.env_of(*(FIELD_OF[name] for name in environment)) == environment, where


def test_the_ingest_gets_the_second_opinion_and_every_job_the_schedules_zone(every_stack: ProgramRun) -> None:
    config = stack_config(every_stack.stack)
    settings = StackSettings.from_mapping(config)
    environments = _environments(every_stack)
    assert [w for w in environments if w.endswith("-ingest/job")]  # the drain's container is among them
    for where, environment in environments.items():
        assert environment["DOCUFLOW_SCHEDULE_TIMEZONE"] == settings.scheduling.schedule_timezone, where
        ingest = where.endswith("-ingest/job")
        fallback = environment.get("DOCUFLOW_TEXTRACT_FALLBACK")
        assert fallback == ("true" if ingest and settings.ingest.second_opinion else None), where
    # Every stack reads scans with Textract, so every stack asks its second opinion.
    assert settings.ingest.ocr_engine == "textract" and settings.ingest.second_opinion
