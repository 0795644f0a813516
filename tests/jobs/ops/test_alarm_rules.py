"""The alarm rules as pure values: CloudWatch's M of N and missing-data treatment in the stand-in's
`judge`, the failed ratio's metric math, a manual run's heartbeat, and the reconcile's new
findings read from its ledger. The stand-in against moto, evaluated at many times, is
test_sixty_nights.py's and test_night_alarms.py's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from jobs.contract.alarms import HEARTBEAT_HOURS, LATE_HOURS, AlarmInputs
from jobs.contract.metrics import CODE, SEVERITY, Datum, Job, Metric, RunMetrics
from jobs.erasure import job as erasure_job
from jobs.ingest import job as ingest_job
from jobs.local.standins.alarms import judge
from jobs.reconcile.chain import ledger as ledgers
from jobs.reconcile.rules.findings import FINDINGS_SCHEMA
from jobs.reconcile.run import metrics_of
from jobs.reconcile.summary import ReconcileSummary
from jobs.runtime.context import RunContext, as_manual_run
from jobs.settings import JobSettings
from tests.alarm_specs import stack_alarms

SPECS = {spec.name: spec for spec in stack_alarms(0.5)}


def test_a_heartbeat_alarms_only_when_every_hourly_period_of_its_window_is_empty() -> None:
    beat = SPECS["ingest-heartbeat"]
    assert (beat.period, beat.evaluation_periods, beat.datapoints) == (3600, HEARTBEAT_HOURS, HEARTBEAT_HOURS)
    # One run's heartbeat anywhere in the window: quiet, however late the run ended.
    for hour in range(HEARTBEAT_HOURS):
        values: list[float | None] = [None] * HEARTBEAT_HOURS
        values[hour] = 1
        assert not judge(beat, values)
    assert judge(beat, [None] * HEARTBEAT_HOURS)  # missing is breaching: a night that did not run
    assert judge(beat, [0.0] * HEARTBEAT_HOURS)
    # The most between two heartbeats of good nights: a day, an early then a late end, DST's hour.
    assert HEARTBEAT_HOURS > 24 + 2 * LATE_HOURS + 1


def test_m_of_n_counts_breaching_and_missing_periods() -> None:
    beat = SPECS["reconcile-heartbeat"].model_copy(update={"evaluation_periods": 4, "datapoints_to_alarm": 3})
    assert judge(beat, [None, None, None, 1])  # 3 of 4 breaching (missing counts)
    assert not judge(beat, [None, 1, None, 1])
    errors = SPECS["reconcile-error-findings"]
    assert judge(errors, [1.0]) and not judge(errors, [0.0])
    assert not judge(errors, [None])  # no data, not breaching: OK


def test_the_failed_ratio_is_the_nights_over_summed_counts() -> None:
    spec = SPECS["ingest-failed-ratio"]
    assert spec.ratio is not None
    # Four tasks: one with 15 of 25 FAILED (60 %), three clean: the night is 15 %.
    sums = {Metric.FAILED.value: 15.0, Metric.PROCESSED.value: 85.0, Metric.SENT_TO_REVIEW.value: 0.0}
    sums[Metric.HEARTBEAT.value] = 1.0  # the night's one task (the default) has finished
    assert spec.ratio.value(sums) == pytest.approx(0.15) and not judge(spec, [spec.ratio.value(sums)])
    bad = {Metric.FAILED.value: 60.0, Metric.PROCESSED.value: 40.0, Metric.HEARTBEAT.value: 1.0}
    assert judge(spec, [spec.ratio.value(bad)])
    assert (
        spec.ratio.value({Metric.FAILED.value: 3.0, Metric.HEARTBEAT.value: 1.0}) == 0
    )  # below 5 finished: not judged
    assert spec.ratio.value({}) is None  # a night without data
    assert spec.ratio.expression() == "IF(t0 >= 1 AND (d0 + d1 + d2) >= 5, (n0) / (d0 + d1 + d2), 0)"


def test_the_failed_ratio_waits_for_every_task_of_the_night() -> None:
    (spec,) = [s for s in stack_alarms(0.5, ingest_tasks=4) if s.name == "ingest-failed-ratio"]
    assert spec.ratio is not None and spec.ratio.ids()["t0"] is Metric.HEARTBEAT
    # The first of four tasks has published: 15 of its 25 FAILED (60 %). Not the night's verdict.
    first = {Metric.FAILED.value: 15.0, Metric.PROCESSED.value: 10.0, Metric.HEARTBEAT.value: 1.0}
    assert spec.ratio.value(first) == 0 and not judge(spec, [spec.ratio.value(first)])
    # All four in: 15 of 100, the night is fine; 60 of 100, it is not.
    night = {Metric.FAILED.value: 15.0, Metric.PROCESSED.value: 85.0, Metric.HEARTBEAT.value: 4.0}
    assert spec.ratio.value(night) == pytest.approx(0.15) and not judge(spec, [spec.ratio.value(night)])
    bad = {Metric.FAILED.value: 60.0, Metric.PROCESSED.value: 40.0, Metric.HEARTBEAT.value: 4.0}
    assert judge(spec, [spec.ratio.value(bad)])
    assert spec.ratio.expression().startswith("IF(t0 >= 4 AND ")


def _run() -> RunMetrics:
    return RunMetrics(
        job=Job.INGEST, data=(Datum(metric=Metric.FAILED, value=1), Datum(metric=Metric.HEARTBEAT, value=1))
    )


def test_a_manual_run_publishes_manual_runs_in_place_of_the_heartbeat() -> None:
    manual = as_manual_run(_run())
    assert [d.metric for d in manual.data] == [Metric.FAILED, Metric.MANUAL_RUNS]
    settings = JobSettings(stage="dev")
    context = RunContext("ingest", settings, scheduled_job=ingest_job.JOB.scheduled)
    context.publish(_run())
    assert [d.metric for d in context.published[0].data] == [Metric.FAILED, Metric.MANUAL_RUNS]
    scheduled = RunContext("ingest", settings.changed(scheduled_time=datetime.now(UTC)), scheduled_job=True)
    scheduled.publish(_run())
    assert scheduled.published[0] == _run()
    # A job only ever run by hand (no task of its declaration has a schedule) keeps its count.
    assert not erasure_job.JOB.scheduled
    erasure = RunMetrics(job=Job.ERASURE, data=(Datum(metric=Metric.HEARTBEAT, value=1),))
    by_hand = RunContext("erase", settings, scheduled_job=erasure_job.JOB.scheduled)
    by_hand.publish(erasure)
    assert by_hand.published[0] == erasure


def _findings(*documents: str) -> pl.DataFrame:
    rows = [{"code": "MISSING_RESULT", "severity": "error", "userId": "u", "documentId": d} for d in documents]
    return pl.DataFrame(rows, schema=FINDINGS_SCHEMA)


def _summary(errors: int) -> ReconcileSummary:
    at = datetime(2026, 3, 1, 5, tzinfo=UTC)
    return ReconcileSummary.model_construct(
        startedAt=at, finishedAt=at, itemCount=1, severities={"error": errors}, counts={"MISSING_RESULT": errors}
    )


def _new(run: RunMetrics) -> dict[tuple[str, str], float]:
    return {
        next(iter(d.breakdown.items())): d.value for d in run.data if d.metric is Metric.NEW_FINDINGS and d.breakdown
    }


def test_new_findings_are_the_ledgers_new_ones_not_every_open_one() -> None:
    night = datetime(2026, 3, 1, 5, tzinfo=UTC)
    first = ledgers.carry(ledgers.with_ids(_findings("old")), None, {}, night, [])
    assert _new(metrics_of(_summary(1), first))[(SEVERITY, "error")] == 1
    second = ledgers.carry(ledgers.with_ids(_findings("old")), first, {}, night + timedelta(days=1), [])
    run = metrics_of(_summary(1), second)
    assert _new(run)[(SEVERITY, "error")] == 0 and _new(run)[(CODE, "MISSING_RESULT")] == 0
    findings = {d.breakdown.get(SEVERITY): d.value for d in run.data if d.metric is Metric.FINDINGS}
    assert findings["error"] == 1  # still open, still drawn
    third = ledgers.carry(ledgers.with_ids(_findings("old", "new")), second, {}, night + timedelta(days=2), [])
    assert _new(metrics_of(_summary(2), third))[(SEVERITY, "error")] == 1  # the new one behind the old
    assert _new(metrics_of(_summary(2), None))[(SEVERITY, "error")] == 2  # no ledger: all new


def test_a_job_gets_its_heartbeat_alarm_from_a_nightly_schedule_only() -> None:
    quarterly = {s.name for s in stack_alarms(0.5, drill_schedule="cron(0 6 1 1,4,7,10 ? *)")}
    assert {"ingest-heartbeat", "reconcile-heartbeat", "drill-overdue"} <= quarterly
    assert "drill-heartbeat" not in quarterly  # no 30-hour window spans a quarter: drill-overdue does
    assert "drill-heartbeat" in {s.name for s in stack_alarms(0.5, drill_schedule="cron(0 6 * * ? *)")}
    # The jobs only run by hand have none; neither has a job the stack does not start.
    assert not {s.name for s in erasure_job.JOB.declared_alarms(AlarmInputs(failed_ratio_threshold=0.5))}
    alone = ingest_job.JOB.declared_alarms(AlarmInputs(failed_ratio_threshold=0.5, schedules={"reconcile": "x"}))
    assert "ingest-heartbeat" not in {s.name for s in alone} and "ingest-failed-ratio" in {s.name for s in alone}


def test_the_scheduled_jobs_are_those_a_task_of_which_has_a_schedule() -> None:
    from jobs.registry import JOBS

    assert {spec.publishes for spec in JOBS if spec.scheduled} == {Job.INGEST, Job.RECONCILE, Job.DRILL}
    assert all(Metric.MANUAL_RUNS in spec.published for spec in JOBS if spec.scheduled)
    assert not any(Metric.MANUAL_RUNS in spec.published for spec in JOBS if not spec.scheduled)
