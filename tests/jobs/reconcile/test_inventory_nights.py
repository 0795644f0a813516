"""Nights that cannot mislead (issue 34), on the local stack: before S3 Inventory's first delivery
the nightly run says so and exits 0 with its heartbeat; past the wait, or after a night that had
one, a missing inventory is INVENTORY_MISSING; an inventory older than
DOCUFLOW_INVENTORY_MAX_AGE_HOURS is INVENTORY_STALE, and nothing is judged against it.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from jobs.contract import layout
from jobs.errors import ExitCode
from jobs.local.standins import inventory as inventory_standin
from jobs.local.standins.alarms import in_alarm
from jobs.observability import CallMetrics
from jobs.reconcile import cli
from jobs.reconcile.chain import freshness
from jobs.reconcile.plans import AthenaPlan, NightlyPlan
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.run import ReconcileRun
from jobs.reconcile.summary import ReconcileSummary
from jobs.settings import JobSettings
from jobs.store.clients import cloudwatch_client
from jobs.store.metrics import MetricsStore
from tests.alarm_specs import stack_alarms


def _night(settings: JobSettings, started_after: timedelta = timedelta(0), plan: Any = None) -> Any:
    run = ReconcileRun(settings, plan or NightlyPlan(grace=timedelta(0)))
    run.started = layout.utc_now() + started_after  # the night as the schedule would run it later
    return run.execute()


def _findings(outcome: Any, code: Code) -> list[dict[str, Any]]:
    rows = outcome.findings.filter(outcome.findings["code"] == code.value).to_dicts()
    return [{**row, "evidence": json.loads(row["evidence"])} for row in rows]


def test_before_the_first_delivery_the_night_has_nothing_to_judge_and_stays_quiet(
    stack, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCUFLOW_SCHEDULED_TIME", layout.utc_now().isoformat())  # the schedule's night
    capsys.readouterr()
    assert cli.main(["nightly"]) == ExitCode.SUCCESS
    out = capsys.readouterr().out
    assert "0 findings" in out and "nothing to judge yet" in out, out
    (key,) = [
        k
        for k in stack.keys(stack.settings.store.reports_bucket, layout.RECONCILIATION_PREFIX)
        if k.endswith("summary.json")
    ]
    summary = json.loads(stack.s3().get_object(Bucket=stack.settings.store.reports_bucket, Key=key)["Body"].read())
    assert summary["notJudged"].startswith("nothing to judge yet") and summary["totalFindings"] == 0
    html = stack.s3().get_object(
        Bucket=stack.settings.store.reports_bucket, Key=key.replace("summary.json", "report.html")
    )
    assert "Nothing judged yet." in html["Body"].read().decode()
    assert summary["engineStats"]["inventories"] == {
        stack.settings.store.raw_bucket: "waiting",
        stack.settings.store.processed_bucket: "waiting",
    }
    assert not stack.keys(stack.settings.reconcile.state_bucket, layout.table_state_root("polars"))  # no state kept
    # The heartbeat was published: the reconcile's alarms are quiet (the ingest, which did not run, is not).
    store = MetricsStore(cloudwatch_client(stack.settings), CallMetrics())
    alarms = in_alarm(
        store,
        stack.settings.stage,
        stack_alarms(stack.settings.ingest.failed_ratio_threshold, oldest_message_seconds=3600),
        layout.utc_now() + timedelta(seconds=1),
    )
    assert [a for a in alarms if a.startswith("reconcile")] == [], alarms
    assert "ingest-heartbeat" in alarms  # the check can fail: a job that published nothing alarms


def test_the_wait_is_counted_from_the_first_night_that_found_none(stack) -> None:
    s = stack.settings
    first = _night(s)
    assert first.exit_code == ExitCode.SUCCESS and first.summary.notJudged
    # A day later: still within AWS's 48 hours of the first night.
    assert _night(s, timedelta(hours=24)).exit_code == ExitCode.SUCCESS
    # Past them: the missing inventories are errors, one per bucket, dated from the first night.
    late = _night(s, timedelta(hours=49))
    assert late.exit_code == ExitCode.FINDINGS
    missing = _findings(late, Code.INVENTORY_MISSING)
    assert sorted(r["bucket"] for r in missing) == sorted([s.store.raw_bucket, s.store.processed_bucket])
    assert all(r["evidence"]["hours"] == 49 and r["severity"] == "error" for r in missing), missing
    assert late.summary.notJudged and "INVENTORY_MISSING" in late.summary.notJudged


def test_a_stale_inventory_is_an_error_and_never_judged_against(stack) -> None:
    s = stack.settings
    stack.s3().put_object(Bucket=s.store.raw_bucket, Key=layout.raw_key("u1", "d1", "a.xml"), Body=b"<x/>")
    inventory_standin.deliver(s, layout.utc_now() - timedelta(hours=s.reconcile.inventory_max_age_hours + 2))
    outcome = _night(s)
    assert outcome.exit_code == ExitCode.FINDINGS
    stale = _findings(outcome, Code.INVENTORY_STALE)
    assert sorted(r["bucket"] for r in stale) == sorted([s.store.raw_bucket, s.store.processed_bucket])
    assert all(r["evidence"]["hours"] >= s.reconcile.inventory_max_age_hours + 1 for r in stale), stale
    # Nothing judged: the upload the old inventory lacks is no UNPROCESSED_RAW, no table was read.
    assert {code for code, n in outcome.summary.counts.items() if n} == {Code.INVENTORY_STALE}
    assert outcome.summary.itemCount == 0
    assert not stack.keys(s.reconcile.state_bucket, layout.table_state_root("polars"))


def test_a_missing_inventory_after_a_night_that_had_one_is_an_error_at_once(stack) -> None:
    s = JobSettings.from_env()  # the environment's: the table's ARN, which the night exports
    inventory_standin.deliver(s, layout.utc_now())
    judged = _night(s)
    assert judged.summary.notJudged is None and judged.summary.engineStats["inventories"][s.store.raw_bucket] == "fresh"
    for key in stack.keys(s.reconcile.inventory_bucket, f"{s.reconcile.inventory_prefix}{s.store.processed_bucket}/"):
        stack.s3().delete_object(Bucket=s.reconcile.inventory_bucket, Key=key)
    after = _night(s, timedelta(hours=1))
    assert after.exit_code == ExitCode.FINDINGS
    assert [r["bucket"] for r in _findings(after, Code.INVENTORY_MISSING)] == [s.store.processed_bucket]


def test_the_athena_night_waits_too_without_a_query(stack, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_athena(_: object) -> None:
        raise AssertionError("a night with nothing to judge runs no query")

    monkeypatch.setattr(ReconcileRun, "athena_queries", property(no_athena))
    outcome = _night(stack.settings, plan=AthenaPlan(nightly=True, grace=timedelta(0)))
    assert outcome.exit_code == ExitCode.SUCCESS and outcome.summary.notJudged
    assert outcome.summary.options["nightly"] is True and outcome.summary.engine == "athena"


def _nightly(state: str, at: datetime) -> ReconcileSummary:
    return ReconcileSummary.model_construct(
        options={"nightly": True}, engineStats={freshness.STATS_KEY: {"raw": state}}, startedAt=at
    )


def test_an_inventory_missing_for_longer_than_the_history_read_stays_missing() -> None:
    now = layout.utc_now()
    # Only nights that reported it missing are left in the history the run reads (the nights
    # that waited for a first delivery are older than its last reports).
    missing = [_nightly(freshness.State.MISSING.value, now - timedelta(days=n)) for n in range(1, 31)]
    assert freshness._seen(missing, "raw") == (True, None)
    waited = _nightly(freshness.State.WAITING.value, now - timedelta(days=40))
    assert freshness._seen([waited], "raw") == (False, waited.startedAt)
