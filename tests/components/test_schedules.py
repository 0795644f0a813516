"""The drain's time bound from the ingest's and the reconcile's cron expressions, and the
scheduled time every schedule hands its task.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from components.job_containers import SCHEDULED_TIME_ATTRIBUTE
from components.schedules import DRAIN_MARGIN_MINUTES, Cron, ScheduleError, drain_minutes
from jobs.settings import JobSettings
from tests.components.program import ProgramRun

NEW_YEAR = date(2026, 1, 1)


def test_the_bound_is_the_shortest_night_less_the_margin() -> None:
    assert drain_minutes("cron(0 2 * * ? *)", "cron(0 5 * * ? *)", "UTC", NEW_YEAR) == 180 - DRAIN_MARGIN_MINUTES
    # Europe/Berlin springs forward at 02:00 on the last Sunday of March: 01:00 → 05:00 has 3 hours.
    assert drain_minutes("cron(0 1 * * ? *)", "cron(0 5 * * ? *)", "Europe/Berlin", NEW_YEAR) == 180 - 15
    assert drain_minutes("cron(0 1 * * ? *)", "cron(0 5 * * ? *)", "America/New_York", NEW_YEAR) == 180 - 15
    # Across midnight, and a reconcile that follows only weekday ingests.
    assert drain_minutes("cron(30 23 ? * MON-FRI *)", "cron(0 1 * * ? *)", "UTC", NEW_YEAR) == 90 - 15


def test_the_next_reconcile_is_the_one_after_each_ingest() -> None:
    # Two reconciles a night: the drain must stop before the first after its start.
    assert drain_minutes("cron(0 2 * * ? *)", "cron(0 1,4 * * ? *)", "UTC", NEW_YEAR) == 120 - 15
    # A weekly reconcile on Sunday 05:00 after a nightly ingest: Saturday's drain has a day.
    assert drain_minutes("cron(0 2 * * ? *)", "cron(0 5 ? * SUN *)", "UTC", NEW_YEAR) == 180 - 15


def test_fields_read_as_eventbridge_reads_them() -> None:
    cron = Cron.parse("cron(0/20 8-10 ? JAN,MAR 2-6 2026)")
    assert cron.minutes == {0, 20, 40} and cron.hours == {8, 9, 10}
    assert cron.months == {1, 3} and cron.weekdays == {2, 3, 4, 5, 6} and cron.days is None
    assert cron.runs_on(date(2026, 1, 5))  # a Monday (EventBridge's 2)
    assert not cron.runs_on(date(2026, 1, 4))  # a Sunday
    assert not cron.runs_on(date(2027, 1, 4))


@pytest.mark.parametrize(
    "expression",
    ["cron(0 5 L * ? *)", "cron(0 5 ? * 6#3 *)", "cron(0 5 15W * ? *)", "cron(0 25 * * ? *)", "rate(1 day)"],
)
def test_what_it_cannot_read_is_refused(expression: str) -> None:
    with pytest.raises(ScheduleError):
        drain_minutes("cron(0 2 * * ? *)", expression, "UTC", NEW_YEAR)


@pytest.mark.parametrize(
    ("ingest", "reconcile"), [("cron(30 2 * * ? *)", "cron(0 5 * * ? *)"), ("cron(0 1 * * ? *)", "cron(15 2 * * ? *)")]
)
def test_a_start_the_clocks_skip_is_refused_naming_the_night(ingest: str, reconcile: str) -> None:
    # EventBridge Scheduler skips an invocation at a time the spring-forward skips: no drain that night.
    with pytest.raises(ScheduleError, match="on 2026-03-29, a time Europe/Berlin skips"):
        drain_minutes(ingest, reconcile, "Europe/Berlin", NEW_YEAR)


@pytest.mark.parametrize("expression", ["cron(0 2 1 * MON *)", "cron(0 2 * * * *)", "cron(0 2 ? * ? *)"])
def test_day_of_month_and_day_of_week_need_exactly_one_question_mark(expression: str) -> None:
    with pytest.raises(ScheduleError, match="one of day-of-month and day-of-week"):
        Cron.parse(expression)


def test_a_reconcile_that_never_follows_is_refused() -> None:
    with pytest.raises(ScheduleError, match="does not run after"):
        drain_minutes("cron(0 2 * * ? *)", "cron(0 5 * * ? 2026)", "UTC", NEW_YEAR)


def test_every_schedule_hands_its_task_the_scheduled_time(every_stack: ProgramRun) -> None:
    """EventBridge Scheduler replaces <aws.scheduler.scheduled-time> in the target's Input, which an
    ECS RunTask target takes as the task's overrides: the job container gets DOCUFLOW_SCHEDULED_TIME
    (a retry keeps the time of the invocation it retries), which the job reads as a zoned time.
    """
    containers = {
        td.name: json.loads(td.inputs["containerDefinitions"])[0]["name"]
        for td in every_stack.of_type("aws:ecs/taskDefinition:TaskDefinition")
    }
    schedules = every_stack.of_type("aws:scheduler/schedule:Schedule")
    assert {s.inputs["name"].rsplit("-", 1)[-1] for s in schedules} >= {"ingest", "reconcile", "drill"}
    for schedule in schedules:
        (override,) = json.loads(schedule.inputs["target"]["input"])["containerOverrides"]
        assert override["name"] in set(containers.values()), schedule.name
        environment = {e["name"]: e["value"] for e in override["environment"]}
        assert environment == {"DOCUFLOW_SCHEDULED_TIME": SCHEDULED_TIME_ATTRIBUTE}
        # As Scheduler fills it in (its documented example), the job reads a zoned time.
        filled = {
            name: value.replace(SCHEDULED_TIME_ATTRIBUTE, "2022-03-22T18:59:43Z") for name, value in environment.items()
        }
        assert JobSettings.from_env(filled).run.scheduled_time == datetime(2022, 3, 22, 18, 59, 43, tzinfo=UTC)


def test_no_task_definition_sets_the_scheduled_time(every_stack: ProgramRun) -> None:
    """Only the schedule sets it: a task started by hand from the same definition is manual."""
    for td in every_stack.of_type("aws:ecs/taskDefinition:TaskDefinition"):
        (container,) = json.loads(td.inputs["containerDefinitions"])
        assert "DOCUFLOW_SCHEDULED_TIME" not in {e["name"] for e in container["environment"]}, td.name
