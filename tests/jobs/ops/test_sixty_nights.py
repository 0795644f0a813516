"""Sixty nights on the local stack, judged as CloudWatch judges them (issue 44's acceptance).

Each night publishes what the real jobs publish, built by their own code (the ingest's
`RunSummary.run_metrics`, the reconcile's `metrics_of` over the ledger `jobs.reconcile.chain.ledger.carry`
carries night to night) and put through the run context (a manual run's heartbeat is ManualRuns)
and the run-metrics emitter into moto's CloudWatch, stamped with the simulated run ends. The
stack's zone is Europe/Berlin: the ingest starts at 01:00 and the reconcile at 05:00 local time,
and each run ends up to two hours earlier or later than usual. Two stretches of 30 nights, one
over the spring-forward night and one over the fall-back night (each stretch with a seed night
before it), hold: four ingest tasks publishing at once every night, one manual backfill in place
of a scheduled ingest, one night with nothing run, one new error behind an old open one, a
night one task judged bad while the night was good, and a bad night across the tasks. The
reconcile publishes the days since the last restore drill (`jobs.reconcile.chain.drill_age`) from the
drills' report times: the quarterly drill of 1 January reported, that of 1 April failed before
its report, that of 1 October reported; `drill-overdue` (the default quarterly schedule: 99 days)
notifies once, on the night its bound passes, and stays in ALARM to the stretch's end.

The alarms' stand-in then evaluates every declared alarm every hour over each stretch, and a
second after each datum enters or leaves an alarm's window (where a state can change); a
night's alarms are the notifications CloudWatch would send in it (a change into ALARM), from
midnight before its ingest to the next midnight, local time. The table is printed (`-s`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import polars as pl
import pytest

from jobs.contract.metrics import Job
from jobs.contract.status import Status
from jobs.ingest.summary import RunSummary
from jobs.local.standins.alarms import Notification, in_alarm, walk
from jobs.observability import CallMetrics
from jobs.reconcile.chain import ledger as ledgers
from jobs.reconcile.chain.drill_age import drill_age
from jobs.reconcile.rules.findings import FINDINGS_SCHEMA, Code
from jobs.reconcile.run import metrics_of
from jobs.reconcile.summary import ReconcileSummary
from jobs.registry import job
from jobs.runtime.context import RunContext
from jobs.settings import JobSettings
from jobs.store.clients import cloudwatch_client
from jobs.store.metrics import MetricsStore
from tests.alarm_specs import stack_alarms

ZONE = ZoneInfo("Europe/Berlin")
INGEST_AT, RECONCILE_AT = time(1, 0), time(5, 0)
INGEST_USUAL, RECONCILE_USUAL = timedelta(hours=2), timedelta(hours=1)  # after the start
TASKS = 4
STEP = timedelta(hours=3)  # between the edges below, where a state may change first
# Each run's lateness in minutes, night by night (−120 … +120): deterministic, and with the
# worst pairs on the DST nights (the earliest end, then the latest).
LATENESS = [0, 45, -30, 90, -120, 120, 15, -60, 60, -90, 30, -15, 105, -105, 75]
STRETCHES = (date(2026, 3, 14), date(2026, 10, 10))  # the first night of each (after its seed night)
NIGHTS = 30
# The first nights after each change: their runs start an hour earlier (spring) or later (fall)
# in UTC than the night before's.
SPRING, FALL = date(2026, 3, 29), date(2026, 10, 25)
DRILL_SCHEDULE = job("drill").tasks[0].schedule.default  # type: ignore[union-attr]
# When the drills' reports landed (the 1 April drill failed before its report: none). 99 days
# after 1 January's is 10 April 06:40 UTC: the reconcile of the night of the 9th (about 04:00
# UTC on the 10th) is within the bound, the next night's past it.
DRILL_REPORTS = (datetime(2026, 1, 1, 6, 40, tzinfo=UTC), datetime(2026, 10, 1, 6, 40, tzinfo=UTC))
OVERDUE = date(2026, 4, 10)


@dataclass
class Night:
    """What one night runs (the date is the evening's; its runs start after midnight)."""

    day: date
    lateness: int  # minutes
    ingest: str = "scheduled"  # scheduled | manual (a person's backfill at 10:00, no schedule) | none
    reconcile: str = "scheduled"  # scheduled | none
    manual_reconcile: bool = False  # a person's reconcile live in the afternoon, beside the nightly
    failed: tuple[int, ...] = (1, 0, 0, 1)  # FAILED documents per task (of 25 each)
    errors: tuple[str, ...] = ()  # error findings open tonight (documentIds)
    warnings: tuple[str, ...] = ()
    expected: list[str] = field(default_factory=list)


def _at(day: date, clock: time, after: timedelta, lateness: int) -> datetime:
    """The UTC end of a run started at `clock` local time the morning after `day`."""
    start = datetime.combine(day + timedelta(days=1), clock, tzinfo=ZONE).astimezone(UTC)
    return start + after + timedelta(minutes=lateness)  # elapsed time, not wall-clock time


def _plan() -> list[Night]:
    nights: list[Night] = []
    for first in STRETCHES:
        nights += [Night(first + timedelta(days=i), LATENESS[i % len(LATENESS)]) for i in range(NIGHTS)]
    by_day = {n.day: n for n in nights}
    # The DST nights: the earliest end the night before, the latest on the night itself (fall-back
    # adds the hour the clocks go back: 24 h + 4 h + 1 h between two heartbeats).
    for change in (SPRING, FALL):
        by_day[change - timedelta(days=1)].lateness, by_day[change].lateness = -120, 120
    spring, fall = STRETCHES
    # A bad night across the tasks (60 of 100 FAILED), and a night one task judged bad alone (15
    # of its 25, with 0 elsewhere: 15 % for the night, below the threshold).
    by_day[spring + timedelta(days=3)].failed = (15, 15, 15, 15)
    by_day[spring + timedelta(days=3)].expected = ["ingest-failed-ratio"]
    by_day[spring + timedelta(days=5)].failed = (15, 0, 0, 0)
    # One new error, open for ten nights; on its fifth a second one appears behind it.
    for i in range(8, 18):
        by_day[spring + timedelta(days=i)].errors = ("d-old",)
    for i in range(12, 16):
        by_day[spring + timedelta(days=i)].errors = ("d-old", "d-new")
    by_day[spring + timedelta(days=8)].expected = ["reconcile-error-findings"]
    by_day[spring + timedelta(days=12)].expected = ["reconcile-error-findings"]
    by_day[spring + timedelta(days=20)].warnings = ("d-warn",)  # a new warning: no alarm
    # A manual backfill in place of the scheduled ingest: the missed night still alarms.
    manual = by_day[fall + timedelta(days=6)]
    manual.ingest, manual.expected = "manual", ["ingest-heartbeat"]
    by_day[fall + timedelta(days=9)].manual_reconcile = True  # beside the nightly: quiet
    skipped = by_day[fall + timedelta(days=20)]
    skipped.ingest, skipped.reconcile = "none", "none"
    skipped.expected = ["ingest-heartbeat", "reconcile-heartbeat"]
    by_day[OVERDUE].expected = ["drill-overdue"]  # then in ALARM, not notified again, to 12 Apr
    return nights


def _seed(first: date) -> Night:
    return Night(first - timedelta(days=1), 0)


STAMPS: list[datetime] = []  # when each run published: where an alarm's state can change


def _publish(settings: JobSettings, run_job: Job, metrics, at: datetime, scheduled: bool) -> None:
    STAMPS.append(at)
    run_settings = settings.changed(scheduled_time=at if scheduled else None)
    context = RunContext(run_job.value, run_settings, scheduled_job=True)  # ingest, reconcile, drill
    context.publish(metrics)
    context.flush(at)


def _ingest(settings: JobSettings, night: Night) -> None:
    if night.ingest == "none":
        return
    scheduled = night.ingest == "scheduled"
    if scheduled:
        end = _at(night.day, INGEST_AT, INGEST_USUAL, night.lateness)
    else:
        end = datetime.combine(night.day + timedelta(days=1), time(10, 0), tzinfo=ZONE).astimezone(UTC)
    tasks = night.failed if scheduled else (night.failed[0],)  # a person runs one backfill
    for task, failed in enumerate(tasks):
        # The tasks finish one after another, 15 minutes apart, the first alone for a while: the
        # night is judged once all have published, never its first task alone.
        done = end - timedelta(minutes=15 * (len(tasks) - 1 - task))
        summary = RunSummary(
            runId=f"{night.day}-{task}",
            mode="drain" if scheduled else "backfill",
            shard=f"{task}/{len(tasks)}",
            dryRun=False,
            startedAt=done - timedelta(hours=1),
            finishedAt=done,
            outcome="completed",
            seconds=3600,
            processed=25,
            decisions={"CLAIM": 25},
            statuses={Status.FAILED.value: failed, Status.PROCESSED.value: 25 - failed},
            queueWaiting=0 if scheduled else None,
            deadLetterQueue=0 if scheduled else None,
        )
        _publish(settings, Job.INGEST, summary.run_metrics(), done, scheduled)


def _findings(night: Night) -> pl.DataFrame:
    rows = [
        {"code": Code.MISSING_RESULT.value, "severity": "error", "userId": "u0", "documentId": d} for d in night.errors
    ] + [
        {"code": Code.STALE_RESULT.value, "severity": "warning", "userId": "u0", "documentId": d}
        for d in night.warnings
    ]
    return pl.DataFrame(rows, schema=FINDINGS_SCHEMA) if rows else pl.DataFrame(schema=FINDINGS_SCHEMA)


def _drill_days(at: datetime) -> float | None:
    """What the reconcile ending `at` publishes: the days since the last drill report before it."""
    return drill_age(max((d for d in DRILL_REPORTS if d <= at), default=None), None, at)


def _reconcile(settings: JobSettings, night: Night, previous: pl.DataFrame | None) -> pl.DataFrame | None:
    """Tonight's ledger (the previous one when nothing ran)."""
    if night.reconcile == "none":
        return previous
    end = _at(night.day, RECONCILE_AT, RECONCILE_USUAL, night.lateness)
    findings = _findings(night)
    ledger = ledgers.carry(ledgers.with_ids(findings), previous, {}, end, [])
    counts = {c: findings.filter(pl.col("code") == c).height for c in (Code.MISSING_RESULT, Code.STALE_RESULT)}
    summary = ReconcileSummary.model_construct(
        startedAt=end - RECONCILE_USUAL,
        finishedAt=end,
        itemCount=100,
        severities={s: findings.filter(pl.col("severity") == s).height for s in ("error", "warning")},
        counts={c.value: n for c, n in counts.items()},
    )
    _publish(settings, Job.RECONCILE, metrics_of(summary, ledger, _drill_days(end)), end, scheduled=True)
    if night.manual_reconcile:  # a person's reconcile live, after the nightly: it finds the same
        later = datetime.combine(night.day + timedelta(days=1), time(15, 0), tzinfo=ZONE).astimezone(UTC)
        again = ledgers.carry(ledgers.with_ids(findings), ledger, {}, later, [])
        _publish(settings, Job.RECONCILE, metrics_of(summary, again, _drill_days(later)), later, scheduled=False)
        return again
    return ledger


def _slot(day: date) -> tuple[datetime, datetime]:
    """A night's span: local midnight before its ingest to the next local midnight."""
    start = datetime.combine(day + timedelta(days=1), time(0, 0), tzinfo=ZONE)
    end = datetime.combine(day + timedelta(days=2), time(0, 0), tzinfo=ZONE)
    return start.astimezone(UTC), end.astimezone(UTC)


def _times(start: datetime, end: datetime, windows: set[int]) -> list[datetime]:
    """Every STEP from `start` to `end`, and a second after each datum enters or leaves a window
    (where CloudWatch, evaluating every minute, would see a state change first).
    """
    count = int((end - start) / STEP)
    grid = {start + STEP * i for i in range(count + 1)}
    second = timedelta(seconds=1)
    edges = {at + timedelta(seconds=w) + second for at in STAMPS for w in windows} | {at + second for at in STAMPS}
    return sorted(t for t in grid | edges if start <= t <= end)


# moto's GetMetricData reads every datum the worker's server holds: late in a loaded suite the
# walk's ~1,200 evaluations take minutes, not the ~1 min they take on a fresh server.
@pytest.mark.timeout(900)
def test_sixty_nights_each_show_exactly_their_alarms(stack) -> None:
    settings = stack.settings
    nights = _plan()
    specs = stack_alarms(settings.ingest.failed_ratio_threshold, drill_schedule=DRILL_SCHEDULE, ingest_tasks=TASKS)
    store = MetricsStore(cloudwatch_client(settings), CallMetrics())
    sent: list[Notification] = []
    evaluations = 0
    for first in STRETCHES:
        stretch = [_seed(first), *(n for n in nights if first <= n.day < first + timedelta(days=NIGHTS))]
        ledger: pl.DataFrame | None = None
        for night in stretch:
            _ingest(settings, night)
            ledger = _reconcile(settings, night, ledger)
        # From the seed night's runs on (an empty stack before them is every heartbeat's alarm).
        start = _at(stretch[0].day, RECONCILE_AT, RECONCILE_USUAL, 0) + STEP
        times = _times(start, _slot(stretch[-1].day)[1], {spec.window for spec in specs})
        evaluations += len(times)
        sent += walk(store, settings.stage, specs, times)
        # The overdue drill stayed in ALARM from its notification to the stretch's end (notified once).
        overdue = ["drill-overdue"] if first == STRETCHES[0] else []
        assert in_alarm(store, settings.stage, specs, times[-1]) == overdue
    STAMPS.clear()
    rows = []
    for night in nights:
        begin, end = _slot(night.day)
        seen = [n.alarm for n in sent if begin <= n.at < end]
        rows.append((night, seen))
    print(f"\n{evaluations} evaluations of {len(specs)} alarms")
    print(f"{'night':<12}{'ingest':<10}{'late':>6}  {'expected':<46}seen")
    for night, seen in rows:
        marks = {SPRING: " DST+", FALL: " DST-"}.get(night.day, "")
        what, expected = night.ingest + marks, ", ".join(night.expected) or "-"
        print(f"{night.day!s:<12}{what:<10}{night.lateness:>+6}  {expected:<46}{', '.join(seen) or '-'}")
    assert len(rows) == 60
    assert [(str(n.day), seen) for n, seen in rows] == [(str(n.day), n.expected) for n, _ in rows]
    slots = [_slot(n.day) for n in nights]
    assert [n for n in sent if not any(a <= n.at < b for a, b in slots)] == []  # the seed nights were quiet too
