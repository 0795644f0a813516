"""The drill's heartbeat as pure rules (issue 44): a schedule's period from its expression, the
drill-overdue bound derived from it, the age the nightly reconcile publishes, and the alarm's
verdict over the periods it reads. No AWS: the live night is test_night_alarms.py's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs.contract.alarms import DRILL_MARGIN_DAYS, HEARTBEAT_HOURS, Missing, drill_overdue_days
from jobs.contract.cron import longest_gap_days
from jobs.contract.metrics import LEVELS, Job, Metric
from jobs.contract.objects import ObjectInfo
from jobs.local.standins.alarms import judge
from jobs.reconcile.chain.drill_age import days_since, drill_age, drill_age_datum, newest
from jobs.reconcile.report.written import ReconcileSummary
from jobs.reconcile.run import metrics_of
from jobs.registry import job, published
from tests.alarm_specs import stack_alarms

QUARTERLY = job("drill").tasks[0].schedule.default  # type: ignore[union-attr]
T0 = datetime(2026, 4, 1, 6, 40, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "days"),
    [
        # Jul 1 → Oct 1 and Oct 1 → Jan 1 are 92 days, the longest of the quarters.
        ("cron(0 6 1 1,4,7,10 ? *)", 92),
        ("cron(0 6 1 JAN,APR,JUL,OCT ? *)", 92),
        ("cron(0 5 * * ? *)", 1),
        ("cron(0 6 ? * 2-6 *)", 3),  # weekdays: Friday to Monday
        ("cron(0 6 ? * MON#1 *)", 35),  # the first Monday of a month
        ("cron(0 6 L * ? *)", 31),
        ("cron(0 6 15W * ? *)", 32),  # the weekday nearest the 15th moves by up to two days
        ("cron(0 6 ? 1/3 2L *)", 98),  # the last Monday of each quarter's first month
        ("cron(0 6 1 1 ? *)", 366),
        ("cron(0 6 29 2 ? *)", 1461),  # only leap years
        ("cron(0 6 1 1 ? 2027)", 366),  # the year field is the pattern's, not a stop
        ("rate(90 days)", 90),
        ("rate(12 hours)", 1),
    ],
)
def test_a_schedules_period_is_its_longest_gap_between_firing_days(expression: str, days: int) -> None:
    assert longest_gap_days(expression) == days


@pytest.mark.parametrize(
    "expression",
    ["cron(0 6 1 1 MON *)", "cron(0 6 ? * ? *)", "cron(0 6 32 1 ? *)", "0 6 1 1 ? *", "cron(0 6 30 2 ? *)"],
)
def test_an_expression_that_is_wrong_or_never_fires_is_refused(expression: str) -> None:
    with pytest.raises(ValueError):
        longest_gap_days(expression)


def test_the_bound_is_the_drill_schedules_period_plus_the_margin() -> None:
    assert QUARTERLY == "cron(0 6 1 1,4,7,10 ? *)"
    assert drill_overdue_days(QUARTERLY) == 92 + DRILL_MARGIN_DAYS == 99
    assert drill_overdue_days("cron(0 6 1 * ? *)") == 31 + DRILL_MARGIN_DAYS  # a monthly drill


def test_only_a_stack_with_a_drill_schedule_declares_drill_overdue() -> None:
    assert "drill-overdue" not in {s.name for s in stack_alarms(0.5)}
    (spec,) = [s for s in stack_alarms(0.5, drill_schedule=QUARTERLY) if s.name == "drill-overdue"]
    assert spec.metric == Metric.DAYS_SINCE_DRILL and spec.dimensions == {"Job": "reconcile"}
    assert spec.threshold == 99 and spec.missing is Missing.NOT_BREACHING and spec.deployed
    # Hourly periods over more than a day, one enough: within CloudWatch's 7-day window.
    assert (spec.period, spec.evaluation_periods, spec.datapoints) == (3600, HEARTBEAT_HOURS, 1)
    assert spec.window <= 7 * 86_400 and spec.runbook_url == "docs/operations.md#drill-overdue"
    assert Metric.DAYS_SINCE_DRILL in published()[Job.RECONCILE] and Metric.DAYS_SINCE_DRILL in LEVELS


def _night(value: float | None, hours_ago: int) -> list[float | None]:
    """The alarm's 30 hourly periods, oldest first, with one figure `hours_ago` hours back."""
    periods: list[float | None] = [None] * HEARTBEAT_HOURS
    if value is not None:
        periods[HEARTBEAT_HOURS - 1 - hours_ago] = value
    return periods


def test_the_alarm_judges_the_nights_figure_and_keeps_quiet_without_one() -> None:
    (spec,) = [s for s in stack_alarms(0.5, drill_schedule=QUARTERLY) if s.name == "drill-overdue"]
    assert not judge(spec, _night(12.5, 3))
    assert not judge(spec, _night(99.0, 3))  # at the bound: not yet over it
    assert judge(spec, _night(99.2, 3))
    # Last night's figure, 26 hours back (tonight's run ended two hours late), still alarms: no
    # gap between two overdue nights, so CloudWatch sends one notification, not one a night.
    assert judge(spec, _night(100.2, 26))
    # No figure at all (the reconcile did not run): the reconcile's heartbeat alarms, not this.
    assert not judge(spec, _night(None, 0))


def _object(key: str, at: datetime) -> ObjectInfo:
    return ObjectInfo("reports", key, '"e"', 10, at)


def test_the_age_runs_from_the_newest_drill_report_else_from_the_first_night() -> None:
    reports = [_object("runs/drill/2026-01-01/a.json", T0 - timedelta(days=90)), _object("runs/drill/x.json", T0)]
    assert newest(reports) == T0 and newest([]) is None
    assert drill_age(T0, T0 - timedelta(days=400), T0 + timedelta(days=1, hours=12)) == 1.5
    assert drill_age(None, T0, T0 + timedelta(days=100)) == 100.0  # never drilled: since the first night
    assert drill_age(None, None, T0) is None  # the very first night: nothing to measure from
    assert days_since(T0 + timedelta(seconds=5), T0) == 0.0  # a clock a little behind S3's
    with pytest.raises(ValueError, match="tz-aware"):
        days_since(datetime(2026, 4, 1), T0)


def test_the_reconciles_night_carries_the_age_only_when_known() -> None:
    summary = ReconcileSummary.model_construct(
        startedAt=T0, finishedAt=T0, itemCount=1, severities={"error": 0}, counts={}
    )
    ages = [d for d in metrics_of(summary, None, 42.25).data if d.metric is Metric.DAYS_SINCE_DRILL]
    assert [(d.value, d.unit.value) for d in ages] == [(42.25, "None")]
    assert drill_age_datum(None) == []
    assert all(d.metric is not Metric.DAYS_SINCE_DRILL for d in metrics_of(summary, None).data)
