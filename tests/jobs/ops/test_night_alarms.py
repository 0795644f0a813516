"""One night per scenario on the local stack, then the operator's question: which alarms fire.

Each scenario drives one night (an ingest, a reconcile, or one of them missing), the jobs put
their metrics into moto's CloudWatch, the arrival queue's age stand-in puts the queue's, and the
alarms' stand-in judges the declared alarms against them. Each stack is a stage of its own, so
its metrics are a namespace of their own. The nights are the schedule's (DOCUFLOW_SCHEDULED_TIME
set, as EventBridge Scheduler sets it), but where a test says a person ran the job. Every night
judges `drill-overdue` too, as a stack with the default quarterly drill declares it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from jobs.contract import layout
from jobs.contract.alarms import AUDIT_GAP, OLDEST_MESSAGE_AGE, QUEUE_NAME, SQS_NAMESPACE
from jobs.contract.metrics import JOB, STAGE, Job, Metric, namespace
from jobs.errors import ExitCode
from jobs.ingest import cli as ingest_cli
from jobs.local.standins.alarms import in_alarm
from jobs.local.standins.queue_metrics import minutes, oldest_sent, publish_oldest_age
from jobs.observability import CallMetrics
from jobs.reconcile.plans import AuditCheck, LivePlan
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.run import ReconcileRun
from jobs.recovery import cli as drill_cli
from jobs.registry import job as registered
from jobs.store.clients import cloudwatch_client, sqs_client
from jobs.store.metrics import MetricsStore
from tests.alarm_specs import stack_alarms
from tests.jobs.recovery.recovery_helpers import export

# The smallest age bound a stack accepts (docuflow:arrivalsMaxAgeSeconds): the stand-in's
# clock then moves an hour and a quarter, not a day, so the night's heartbeats stay in window.
STALLED_AFTER = 3600

DOCUMENTS = 6
DRILL_SCHEDULE = registered("drill").tasks[0].schedule.default  # type: ignore[union-attr]


@pytest.fixture(autouse=True)
def _scheduled(stack, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCUFLOW_SCHEDULED_TIME", layout.utc_now().isoformat())


def _scheduled_settings(stack):
    return stack.settings.changed(scheduled_time=layout.utc_now())


def _upload_invoices(stack, corpus: Path) -> None:
    for i, path in enumerate(sorted((corpus / "einvoice" / "ubl").glob("*.xml"))[:DOCUMENTS]):
        stack.s3().put_object(
            Bucket=stack.settings.store.raw_bucket, Key=layout.raw_key("u0", f"d{i}", path.name), Body=path.read_bytes()
        )


def _upload_broken(stack) -> None:
    for i in range(DOCUMENTS):
        stack.s3().put_object(
            Bucket=stack.settings.store.raw_bucket,
            Key=layout.raw_key("u0", f"b{i}", "scan.pdf"),
            Body=b"%PDF-1.4 broken",
        )


def _ingest(expected: ExitCode) -> None:
    assert ingest_cli.main(["backfill"]) == expected


def _reconcile(stack, audit: bool = False, *, manual: bool = False, clock=layout.utc_now) -> int:
    plan = LivePlan(grace=timedelta(0), audit=AuditCheck() if audit else None)
    settings = stack.settings if manual else _scheduled_settings(stack)
    return ReconcileRun(settings, plan, clock=clock).execute().exit_code


def _store(stack) -> MetricsStore:
    return MetricsStore(cloudwatch_client(stack.settings), CallMetrics())


def _alarms_at(stack, at: datetime, oldest_message_seconds: int = STALLED_AFTER) -> list[str]:
    specs = stack_alarms(
        stack.settings.ingest.failed_ratio_threshold,
        oldest_message_seconds=oldest_message_seconds,
        drill_schedule=DRILL_SCHEDULE,
    )
    return in_alarm(_store(stack), stack.settings.stage, specs, at)


def _alarms_now(stack) -> list[str]:
    return _alarms_at(stack, layout.utc_now() + timedelta(seconds=1))


def test_a_clean_night_exits_0_and_alarms_nothing(stack, corpus) -> None:
    _upload_invoices(stack, corpus)
    _ingest(ExitCode.SUCCESS)
    assert _reconcile(stack) == ExitCode.SUCCESS
    assert _alarms_now(stack) == []


def test_a_night_of_failed_documents_exits_1_and_alarms_the_failed_ratio_only(stack, capsys) -> None:
    _upload_broken(stack)
    _ingest(ExitCode.FINDINGS)
    assert f"{DOCUMENTS} of {DOCUMENTS} documents FAILED" in capsys.readouterr().err
    assert _reconcile(stack) == ExitCode.SUCCESS
    assert _alarms_now(stack) == ["ingest-failed-ratio"]


def test_a_skipped_ingest_alarms_its_heartbeat(stack, corpus) -> None:
    _upload_invoices(stack, corpus)  # arrived, never ingested
    _reconcile(stack)
    assert _alarms_now(stack) == ["ingest-heartbeat"]


def test_a_night_with_nothing_run_alarms_both_heartbeats(stack) -> None:
    assert _alarms_now(stack) == ["ingest-heartbeat", "reconcile-heartbeat"]


def test_manual_runs_are_no_heartbeat(stack, corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """A person's backfill and reconcile live: the night the schedule missed still alarms, and
    the runs are drawn as ManualRuns.
    """
    monkeypatch.delenv("DOCUFLOW_SCHEDULED_TIME")
    _upload_invoices(stack, corpus)
    _ingest(ExitCode.SUCCESS)
    assert _reconcile(stack, manual=True) == ExitCode.SUCCESS
    assert _alarms_now(stack) == ["ingest-heartbeat", "reconcile-heartbeat"]
    for job in (Job.INGEST, Job.RECONCILE):
        manual = _store(stack).values(
            namespace(stack.settings.stage),
            Metric.MANUAL_RUNS,
            {JOB: job.value, STAGE: stack.settings.stage},
            "Sum",
            3600,
            layout.utc_now() - timedelta(hours=1),
            layout.utc_now() + timedelta(seconds=1),
        )
        assert manual == [1]


def test_reconcile_error_findings_alarm_on_what_is_new(stack, corpus) -> None:
    _upload_invoices(stack, corpus)
    _ingest(ExitCode.SUCCESS)
    stack.s3().delete_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key("u0", "d0"))
    assert _reconcile(stack) == ExitCode.FINDINGS
    assert _alarms_now(stack) == ["reconcile-error-findings"]
    # The next night finds the same error, open: still exit 1 and drawn as Findings, but not new.
    assert _reconcile(stack) == ExitCode.FINDINGS
    new = _store(stack).values(
        namespace(stack.settings.stage),
        Metric.NEW_FINDINGS,
        {JOB: Job.RECONCILE.value, STAGE: stack.settings.stage, "Severity": "error"},
        "Sum",
        60,
        layout.utc_now() - timedelta(hours=1),
        layout.utc_now() + timedelta(seconds=1),
    )
    assert sum(new) == 1  # the first night's, not the second's


def test_poison_messages_in_the_dead_letter_queue_alarm(stack) -> None:
    sqs = sqs_client(stack.settings)
    dead_letters = sqs.get_queue_url(QueueName=layout.arrivals_dead_letter_queue_name(stack.settings.stage))
    sqs.send_message(QueueUrl=dead_letters["QueueUrl"], MessageBody="not an S3 event")
    # The drain reads the DLQ's depth as it stops.
    assert ingest_cli.main(["drain", "--idle-seconds", "0"]) == ExitCode.SUCCESS
    _reconcile(stack)
    assert _alarms_now(stack) == ["ingest-dead-letters"]


def test_the_nights_metrics_read_back_from_cloudwatch(stack, corpus) -> None:
    _upload_invoices(stack, corpus)
    _ingest(ExitCode.SUCCESS)
    _reconcile(stack)
    listed = cloudwatch_client(stack.settings).list_metrics(Namespace=namespace(stack.settings.stage))["Metrics"]
    names = {(m["MetricName"], {d["Name"]: d["Value"] for d in m["Dimensions"]}[JOB]) for m in listed}
    assert {(Metric.HEARTBEAT.value, "ingest"), (Metric.HEARTBEAT.value, "reconcile")} <= names
    assert {(Metric.FINDINGS.value, "reconcile"), (Metric.ITEMS_JUDGED.value, "reconcile")} <= names
    received = _store(stack).values(
        namespace(stack.settings.stage),
        Metric.RECEIVED,
        {JOB: Job.INGEST.value, STAGE: stack.settings.stage},
        "Sum",
        3600,
        layout.utc_now() - timedelta(hours=1),
        layout.utc_now() + timedelta(seconds=1),
    )
    assert received == [DOCUMENTS]


def test_a_stalled_drain_alarms_the_arrivals_age_only(stack, corpus) -> None:
    _upload_invoices(stack, corpus)
    # The drain stops after two documents; the other arrivals wait in the queue.
    assert ingest_cli.main(["drain", "--max-docs", "2", "--idle-seconds", "0"]) == ExitCode.SUCCESS
    _reconcile(stack)
    sent = oldest_sent(stack.settings)
    assert sent is not None
    # As AWS would publish it each minute while nothing drains the queue: the stand-in's clock
    # moves past the bound, the queue stays as it is.
    now = layout.utc_now()
    publish_oldest_age(stack.settings, minutes(now, now + timedelta(minutes=10)))
    assert _alarms_at(stack, now + timedelta(minutes=10, seconds=1)) == []  # young arrivals: no alarm
    late = sent + timedelta(seconds=STALLED_AFTER, minutes=1)
    publish_oldest_age(stack.settings, minutes(late, late + timedelta(minutes=15)))
    assert _alarms_at(stack, late + timedelta(minutes=15, seconds=1)) == ["arrivals-stalled"]
    ages = _store(stack).values(
        SQS_NAMESPACE,
        OLDEST_MESSAGE_AGE,
        {QUEUE_NAME: layout.arrivals_queue_name(stack.settings.stage)},
        "Maximum",
        60,
        late,
        late + timedelta(minutes=1),
    )
    assert ages == [pytest.approx(STALLED_AFTER + 60, abs=1)]


def test_an_audit_gap_alarms_the_gap_and_the_error_findings(stack, corpus) -> None:
    _upload_invoices(stack, corpus)
    with stack.audit_records_lost():  # the night's changes never reach the change log
        _ingest(ExitCode.SUCCESS)
    stack.audit_flush()
    assert _reconcile(stack, audit=True) == ExitCode.FINDINGS
    # AUDIT_GAP is an error finding: both alarms, each with its runbook (the change log's
    # delivery, and the table against the buckets).
    assert _alarms_now(stack) == ["reconcile-error-findings", "reconcile-audit-gap"]


def test_a_clean_audited_night_alarms_nothing(stack, corpus) -> None:
    _upload_invoices(stack, corpus)
    _ingest(ExitCode.SUCCESS)
    stack.audit_flush()
    assert _reconcile(stack, audit=True) == ExitCode.SUCCESS
    assert _alarms_now(stack) == []


def test_a_failed_drill_alarms_its_targets(stack, corpus) -> None:
    _upload_invoices(stack, corpus)
    _ingest(ExitCode.SUCCESS)
    _reconcile(stack)
    location = export(stack)
    bucket, prefix = location.removeprefix("s3://").split("/", 1)
    listed = stack.s3().list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]
    (data_key,) = [o["Key"] for o in listed if "/data/" in o["Key"]]
    stack.s3().put_object(Bucket=bucket, Key=data_key, Body=b"not the bytes the manifest vouches for")
    assert drill_cli.main([]) == ExitCode.BAD_INPUT
    assert _alarms_now(stack) == ["drill-targets-missed"]


def _drill_ages(stack) -> list[float]:
    return _store(stack).values(
        namespace(stack.settings.stage),
        Metric.DAYS_SINCE_DRILL,
        {JOB: Job.RECONCILE.value, STAGE: stack.settings.stage},
        "Maximum",
        60,
        layout.utc_now() - timedelta(hours=1),
        layout.utc_now() + timedelta(seconds=1),
    )


def test_a_drill_is_ok_right_after_and_overdue_past_its_schedules_bound(stack, corpus) -> None:
    """A real drill, then the nightly reconcile: the days since it are ~0 and nothing alarms. The
    reconcile's clock then moves on (the report stays as the drill wrote it): 98.5 days after the
    drill is within the quarterly bound (92 + 7 = 99 days), 99.5 days past it.
    """
    _upload_invoices(stack, corpus)
    _ingest(ExitCode.SUCCESS)
    export(stack)
    assert drill_cli.main([]) == ExitCode.SUCCESS
    (report,) = stack.s3().list_objects_v2(Bucket=stack.settings.store.reports_bucket, Prefix=layout.DRILL_RUNS_PREFIX)[
        "Contents"
    ]
    drilled = report["LastModified"]
    assert _reconcile(stack) == ExitCode.SUCCESS
    assert _drill_ages(stack) == [pytest.approx(0.0, abs=0.01)]
    assert _alarms_now(stack) == []
    _reconcile(stack, clock=lambda: drilled + timedelta(days=98.5))
    assert _alarms_now(stack) == []
    _reconcile(stack, clock=lambda: drilled + timedelta(days=99.5))
    assert _alarms_now(stack) == ["drill-overdue"]
    assert max(_drill_ages(stack)) == pytest.approx(99.5, abs=0.01)


def test_a_stack_whose_drill_never_ran_is_overdue_from_its_first_night(stack, corpus) -> None:
    """No drill report at all: the age runs from the stack's first reconcile report."""
    _upload_invoices(stack, corpus)
    _ingest(ExitCode.SUCCESS)
    assert _reconcile(stack) == ExitCode.SUCCESS
    assert _alarms_now(stack) == []  # the first night: 0 days
    _reconcile(stack, clock=lambda: layout.utc_now() + timedelta(days=100))
    assert _alarms_now(stack) == ["drill-overdue"]


def test_the_audit_gap_alarm_names_the_reconciles_code() -> None:
    assert Code.AUDIT_GAP.value == AUDIT_GAP
