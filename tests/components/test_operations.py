"""The stack declares the jobs' alarms and its dashboard from the one spec (jobs.contract.alarms),
routes AWS Backup's failures to the alert topic, reshapes every event it puts there, and alarms
on replication latency where a second region is declared: on every stack file.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.alerts import EXIT_MEANINGS, QUIET_EXITS, AlertMessage, delivered, render_template
from components.backups import BACKUP_ALERTS
from components.operations import dashboard_body
from components.settings import StackSettings
from jobs.contract import layout
from jobs.contract.alarms import (
    HEARTBEAT_HOURS,
    OLDEST_MESSAGE_AGE,
    RUNBOOK,
    Missing,
    drill_overdue_days,
)
from jobs.contract.metrics import LEVELS, Metric, namespace
from jobs.errors import ExitCode
from jobs.registry import published as registry_published
from tests.alarm_specs import stack_alarms
from tests.components.program import ACCOUNT, REPO_ROOT, ProgramRun, stack_config

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"


def _settings(run: ProgramRun) -> StackSettings:
    return StackSettings.from_mapping(stack_config(run.stack))


def _topic(run: ProgramRun) -> str:
    """The stack's alert topic: the configured one, or the topic it creates."""
    settings = _settings(run)
    return (
        settings.operations.alarm_topic_arn
        or f"arn:aws:sns:{settings.region}:{ACCOUNT}:docuflow-{run.stack}-topic-1a2b3c"
    )


def _alarms(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {a.inputs["name"]: a.inputs for a in run.of_type(ALARM) if "name" in a.inputs}


def test_every_deployed_spec_is_an_alarm_on_the_alert_topic(every_stack: ProgramRun) -> None:
    settings, stage = _settings(every_stack), every_stack.stack
    declared = stack_alarms(0.5, drill_schedule=settings.scheduling.expression("drill"))
    specs = {f"docuflow-{stage}-{s.name}": s for s in declared if s.deployed}
    alarms = {name: a for name, a in _alarms(every_stack).items() if name in specs}
    assert set(alarms) == set(specs)
    for name, alarm in alarms.items():
        spec = specs[name]
        read = (
            {q["metric"]["metricName"] for q in alarm["metricQueries"] if "metric" in q}
            if spec.ratio
            else {alarm["metricName"]}
        )
        assert read == ({m.value for m in spec.ratio.ids().values()} if spec.ratio else {spec.metric})
        assert alarm["treatMissingData"] == spec.missing.value and alarm["datapointsToAlarm"] == spec.datapoints
        assert alarm["alarmActions"] == [_topic(every_stack)] and spec.runbook_url in alarm["alarmDescription"]
    stalled = alarms[f"docuflow-{stage}-arrivals-stalled"]
    assert (stalled["namespace"], stalled["metricName"]) == ("AWS/SQS", OLDEST_MESSAGE_AGE)
    assert stalled["threshold"] == settings.operations.arrivals_max_age_seconds
    queues = {q.inputs.get("name") for q in every_stack.of_type("aws:sqs/queue:Queue")}
    assert stalled["dimensions"]["QueueName"] in queues  # the arrival queue the stack creates


def _namespaces(alarm: dict[str, Any]) -> set[str]:
    return {q["metric"]["namespace"] for q in alarm.get("metricQueries", []) if "metric" in q} | (
        {alarm["namespace"]} if "namespace" in alarm else set()
    )


def _periods(alarm: dict[str, Any]) -> set[int]:
    return {q["metric"]["period"] for q in alarm.get("metricQueries", []) if "metric" in q} | (
        {alarm["period"]} if "period" in alarm else set()
    )


def test_the_jobs_own_metrics_carry_at_least_three_alarms_one_breaching_when_missing(every_stack: ProgramRun) -> None:
    own = [a for a in _alarms(every_stack).values() if namespace(every_stack.stack) in _namespaces(a)]
    assert len(own) >= 3
    breaching = {a["name"] for a in own if a["treatMissingData"] == Missing.BREACHING.value}
    stage = every_stack.stack
    assert breaching == {f"docuflow-{stage}-ingest-heartbeat", f"docuflow-{stage}-reconcile-heartbeat"}
    for name in breaching:  # hourly periods spanning more than a day, every one breaching
        beat = _alarms(every_stack)[name]
        assert (beat["period"], beat["evaluationPeriods"], beat["datapointsToAlarm"]) == (
            3600,
            HEARTBEAT_HOURS,
            HEARTBEAT_HOURS,
        )
        assert beat["metricName"] == Metric.HEARTBEAT.value and HEARTBEAT_HOURS > 24
    errors = _alarms(every_stack)[f"docuflow-{stage}-reconcile-error-findings"]
    assert (errors["metricName"], errors["dimensions"]["Severity"]) == (Metric.NEW_FINDINGS.value, "error")
    ratio = _alarms(every_stack)[f"docuflow-{stage}-ingest-failed-ratio"]
    (expression,) = [q for q in ratio["metricQueries"] if "expression" in q]
    assert expression["returnData"] and expression["expression"].startswith("IF(")
    assert {q["metric"]["stat"] for q in ratio["metricQueries"] if "metric" in q} == {"Sum"}
    gap = _alarms(every_stack)[f"docuflow-{stage}-reconcile-audit-gap"]
    assert gap["dimensions"] == {"Job": "reconcile", "Stage": stage, "Code": "AUDIT_GAP"}
    assert gap["metricName"] == Metric.NEW_FINDINGS.value
    drill = _alarms(every_stack)[f"docuflow-{stage}-drill-targets-missed"]
    assert (drill["metricName"], drill["dimensions"]["Job"]) == (Metric.TARGETS_MISSED.value, "drill")


def _body(run: ProgramRun) -> dict[str, Any]:
    board = run.one("aws:cloudwatch/dashboard:Dashboard").inputs
    assert board["dashboardName"] == f"docuflow-{run.stack}-operations"
    return json.loads(board["dashboardBody"])


def _metric_widgets(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["properties"]["title"]: w["properties"] for w in body["widgets"] if w["type"] == "metric"}


def test_the_dashboard_draws_every_published_metric_and_the_issues_widgets(every_stack: ProgramRun) -> None:
    body = _body(every_stack)
    widgets = _metric_widgets(body)
    drawn = {line[1] for w in widgets.values() for line in w["metrics"] if isinstance(line[0], str)}
    published = {m.value for metrics in registry_published().values() for m in metrics}
    assert published | {OLDEST_MESSAGE_AGE, Metric.ESTIMATED_COST.value, Metric.RPO.value, Metric.RTO.value} <= drawn
    assert widgets["ingest: TextractPages"]["metrics"][0][1] == Metric.TEXTRACT_PAGES.value
    assert widgets["ingest: the night's estimated cost (USD)"]["metrics"][0][1] == Metric.ESTIMATED_COST.value
    drill = widgets["drill: RPO and RTO (s)"]["metrics"]
    assert [line[1] for line in drill] == [Metric.RPO.value, Metric.RTO.value]
    assert widgets["reconcile: open findings by severity, last 30 nights"]["metrics"][0][1] == Metric.FINDINGS.value
    assert widgets["reconcile: new findings by severity, last 30 nights"]["metrics"][0][1] == Metric.NEW_FINDINGS.value
    (codes,) = widgets["reconcile: findings by code, last 30 nights"]["metrics"]
    assert "SEARCH(" in codes[0]["expression"] and "Code" in codes[0]["expression"]
    assert body["start"] == "-P30D"
    (states,) = [w for w in body["widgets"] if w["type"] == "alarm"]
    declared = stack_alarms(0.5, drill_schedule=_settings(every_stack).scheduling.expression("drill"))
    assert len(states["properties"]["alarms"]) == sum(s.deployed for s in declared)


def test_each_nightly_jobs_duration_is_drawn_against_its_schedule_window(every_stack: ProgramRun) -> None:
    widgets = _metric_widgets(_body(every_stack))
    windows = _settings(every_stack).scheduling.job_windows()
    for job in ("ingest", "reconcile"):
        (line,) = widgets[f"{job}: duration (s) against its window"]["annotations"]["horizontal"]
        assert line["value"] == windows[job]
    # 02:00 → 05:00 in each stack's zone: 2 h on the spring-forward night, less the 15-minute margin.
    assert windows["ingest"] == 165 * 60 and windows["reconcile"] == 20 * 3600
    age = widgets["arrivals: oldest message (s)"]["annotations"]["horizontal"]
    assert age == [{"label": "alarm", "value": _settings(every_stack).operations.arrivals_max_age_seconds}]


def _runbook_anchors() -> set[str]:
    text = (REPO_ROOT / RUNBOOK).read_text()
    return {line.removeprefix("### ").strip() for line in text.splitlines() if line.startswith("### ")}


def test_every_stack_with_a_scheduled_drill_alarms_when_the_drill_is_overdue(every_stack: ProgramRun) -> None:
    """The drill's heartbeat (issue 44): the nightly reconcile's DaysSinceLastDrill against the
    bound the drill's own schedule gives, on the alert topic, with its runbook; drawn with that
    bound on the dashboard.
    """
    stage = every_stack.stack
    schedules = [
        s for s in every_stack.of_type("aws:scheduler/schedule:Schedule") if s.inputs["name"].endswith("-drill")
    ]
    alarm = _alarms(every_stack).get(f"docuflow-{stage}-drill-overdue")
    if not schedules:
        assert alarm is None
        return
    (schedule,) = schedules
    assert alarm is not None
    bound = drill_overdue_days(schedule.inputs["scheduleExpression"])
    assert alarm["threshold"] == bound == 99  # every stack file drills quarterly: 92 days + 7
    assert (alarm["namespace"], alarm["metricName"]) == (namespace(stage), Metric.DAYS_SINCE_DRILL.value)
    assert alarm["dimensions"] == {"Job": "reconcile", "Stage": stage} and alarm["statistic"] == "Maximum"
    assert (alarm["period"], alarm["evaluationPeriods"], alarm["datapointsToAlarm"]) == (3600, HEARTBEAT_HOURS, 1)
    assert alarm["comparisonOperator"] == "GreaterThanThreshold"
    assert alarm["treatMissingData"] == Missing.NOT_BREACHING.value  # a silent reconcile is its heartbeat's
    assert alarm["alarmActions"] == alarm["okActions"] == [_topic(every_stack)]
    assert "Runbook: docs/operations.md#drill-overdue" in alarm["alarmDescription"]
    assert "drill-overdue" in _runbook_anchors()
    widget = _metric_widgets(_body(every_stack))["drill: days since the last drill"]
    assert [line[1] for line in widget["metrics"]] == [Metric.DAYS_SINCE_DRILL.value]
    assert widget["annotations"]["horizontal"] == [{"label": "drill-overdue", "value": bound}]


def test_every_declared_alarm_has_its_runbook_entry() -> None:
    specs = stack_alarms(0.5, drill_schedule="cron(0 6 1 1,4,7,10 ? *)")
    assert {s.runbook for s in specs} <= _runbook_anchors()


def test_a_dashboard_without_a_drill_schedule_draws_the_age_without_a_bound() -> None:
    widgets = _metric_widgets(dashboard_body("dev", "eu-west-1", [], stack_alarms(0.5), registry_published()))
    assert "annotations" not in widgets["drill: days since the last drill"]


def _backup_rules(run: ProgramRun) -> dict[str, dict[str, Any]]:
    rules = {r.outputs["name"]: json.loads(r.inputs["eventPattern"]) for r in run.of_type(RULE)}
    return {name: pattern for name, pattern in rules.items() if pattern["source"] == ["aws.backup"]}


def test_aws_backup_failures_reach_the_alert_topic(every_stack: ProgramRun) -> None:
    rules = _backup_rules(every_stack)
    kinds = {p["detail-type"][0]: p["detail"] for p in rules.values()}
    vault = layout.backup_vault_name(every_stack.stack, _settings(every_stack).region)
    assert kinds["Backup Job State Change"] == {"state": ["FAILED", "ABORTED", "EXPIRED"], "backupVaultName": [vault]}
    assert kinds["Copy Job State Change"]["state"] == ["FAILED"]
    assert kinds["Copy Job State Change"]["sourceBackupVaultArn"][0].endswith(f"backup-vault:{vault}")
    assert kinds["Restore Job State Change"]["status"] == ["FAILED"]
    assert kinds["Restore Job State Change"]["iamRoleArn"][0].endswith("-backups-role-1a2b3c")
    assert kinds["Recovery Point State Change"] == {
        "status": ["EXPIRED", "PARTIAL", "STOPPED"],
        "backupVaultName": [vault],
    }
    targets = {t.inputs["rule"]: t.inputs for t in every_stack.of_type(TARGET)}
    for name in rules:
        assert targets[name]["arn"] == _topic(every_stack)


def test_every_event_on_the_alert_topic_is_reshaped_for_a_person(every_stack: ProgramRun) -> None:
    """The raw event JSON never reaches the topic: every target on it has an input transformer
    whose template is plain text naming the runbook entry (the failed-task rule's waits for the
    one-line change in components/batch_jobs.py: alerts.alert_target with alerts.failed_task_alert).
    """
    on_topic = [t for t in every_stack.of_type(TARGET) if t.inputs["arn"] == _topic(every_stack)]
    assert len(on_topic) >= 5  # four AWS Backup rules and the failed-task rule
    unshaped = [t.name for t in on_topic if "inputTransformer" not in t.inputs]
    assert unshaped == []
    for target in on_topic:
        text = target.inputs["inputTransformer"]["inputTemplate"]
        assert text.startswith(f"DocuFlow {every_stack.stack}:") and "Runbook: docs/operations.md#" in text
        assert "\\n" not in text and len(text.splitlines()) >= 3  # plain lines, not a JSON string


@pytest.mark.parametrize("kind", list(BACKUP_ALERTS))
def test_backup_messages_name_what_happened_and_the_command(kind: str) -> None:
    from components.backups import backup_alert

    message = backup_alert("dev", kind)
    text = render_template(message.paths, [str(line) for line in message.lines])
    assert "<state>" in text and "aws backup describe-" in text and "#backup-failed" in text


def test_a_template_naming_an_unknown_field_or_a_bad_path_name_is_refused() -> None:
    with pytest.raises(ValueError, match="without an input path"):
        render_template({"state": "$.detail.state"}, ["<state> <status>"])
    with pytest.raises(ValueError, match="letters and digits"):
        render_template({"exit_code": "$.detail.containers[0].exitCode"}, ["<exit_code>"])
    assert render_template({}, ["rule <aws.events.rule-name>", "two"]) == "rule <aws.events.rule-name>\ntwo"
    with pytest.raises(ValueError, match="start like JSON"):
        render_template({}, ['"quoted"'])


def test_the_failed_task_message_lists_what_every_exit_code_means() -> None:
    assert set(EXIT_MEANINGS) == set(ExitCode) - {ExitCode.SUCCESS}
    from components.alerts import failed_task_alert

    message: AlertMessage = failed_task_alert("dev", "arn:aws:s3:::docuflow-dev-reports")
    assert message.paths["exit"] == "$.detail.containers[0].exitCode" and message.paths["job"] == "$.detail.group"


def test_replication_latency_alarms_where_a_second_region_is_declared(every_stack: ProgramRun) -> None:
    settings = _settings(every_stack)
    latency = {n: a for n, a in _alarms(every_stack).items() if a.get("metricName") == "ReplicationLatency"}
    if settings.recovery.replica_region is None:
        assert latency == {}
        return
    assert {a["dimensions"]["SourceBucket"] for a in latency.values()} == {b.name for b in settings.buckets()}
    configs = {
        c.inputs["bucket"]: c.inputs["rules"][0]
        for c in every_stack.of_type("aws:s3/bucketReplicationConfig:BucketReplicationConfig")
    }
    for alarm in latency.values():
        assert (
            alarm["namespace"] == "AWS/S3"
            and alarm["threshold"] == settings.operations.replication_latency_alarm_seconds
        )
        assert alarm["alarmActions"] == [_topic(every_stack)] and alarm["treatMissingData"] == "notBreaching"
        rule = configs[alarm["dimensions"]["SourceBucket"]]
        # The metric exists only with the rule's replication metrics on, under the rule's id.
        assert rule["destination"]["metrics"]["status"] == "Enabled" and rule["id"] == alarm["dimensions"]["RuleId"]
        assert alarm["dimensions"]["DestinationBucket"] in rule["destination"]["bucket"]


# --- bars: how AWS evaluates what the stack declares -------------------------------------------


def test_no_breaching_on_missing_alarm_uses_a_single_period_over_an_hour(every_stack: ProgramRun) -> None:
    """A heartbeat stamped at a run's end in one long period leaves that window briefly empty
    whenever a night ends later than the one before: every breaching-on-missing alarm has
    periods of an hour at most (and CloudWatch's limits on the window it spans).
    """
    breaching = [a for a in _alarms(every_stack).values() if a.get("treatMissingData") == Missing.BREACHING.value]
    assert breaching
    for alarm in breaching:
        (period,) = _periods(alarm)
        window = period * alarm["evaluationPeriods"]
        assert period <= 3600, alarm["name"]
        assert window <= (7 * 86_400 if period >= 3600 else 86_400), alarm["name"]
    for alarm in _alarms(every_stack).values():  # every alarm within CloudWatch's window limits
        for period in _periods(alarm):
            assert period * alarm["evaluationPeriods"] <= (7 * 86_400 if period >= 3600 else 86_400), alarm["name"]


def _line_stats(widget: dict[str, Any]) -> list[tuple[str, str]]:
    """Each metric line of a widget: (metric name, the statistic it is drawn with)."""
    lines = []
    for line in widget["metrics"]:
        if not isinstance(line[0], str):
            continue  # an expression
        options = line[-1] if isinstance(line[-1], dict) else {}
        lines.append((line[1], options.get("stat", widget["stat"])))
    return lines


def test_no_dashboard_widget_sums_a_ratio_a_depth_or_an_age(every_stack: ProgramRun) -> None:
    """With several ingest tasks a summed depth shows it N times and a summed ratio N times too:
    a level takes Maximum; a count is summed (metric math divides the sums for the night's ratio).
    """
    levels = {m.value for m in LEVELS} | {OLDEST_MESSAGE_AGE}
    widgets = _metric_widgets(_body(every_stack))
    drawn = [(title, metric, stat) for title, w in widgets.items() for metric, stat in _line_stats(w)]
    summed_levels = [(t, m) for t, m, stat in drawn if m in levels and stat == "Sum"]
    assert summed_levels == []
    assert {m for _, m, stat in drawn if stat == "Maximum"} >= {Metric.QUEUE_DEPTH.value, Metric.FAILED_RATIO.value}
    counts = {Metric.RECEIVED.value, Metric.FAILED.value, Metric.PROCESSED.value, Metric.TEXTRACT_PAGES.value}
    assert {m for _, m, stat in drawn if stat == "Sum"} >= counts
    ratio = widgets["ingest: failed ratio"]
    (night,) = [line[0] for line in ratio["metrics"] if not isinstance(line[0], str)]
    assert night["expression"].startswith("IF(")
    hidden = [line for line in ratio["metrics"] if isinstance(line[0], str) and line[-1].get("visible") is False]
    summed = {Metric.FAILED.value, Metric.PROCESSED.value, Metric.SENT_TO_REVIEW.value, Metric.HEARTBEAT.value}
    assert {line[1] for line in hidden} == summed  # the heartbeats: how many tasks have finished
    assert {line[-1]["stat"] for line in hidden} == {"Sum"}
    # The night is judged once every scheduled ingest task has finished, never its first alone.
    assert night["expression"].startswith(f"IF(t0 >= {_settings(every_stack).ingest.ingest_tasks} AND ")


def test_the_failed_task_rule_alerts_only_on_what_needs_a_person(dev: ProgramRun) -> None:
    rule = json.loads(dev.named("docuflow-dev-failed-tasks").inputs["eventPattern"])
    (by_exit,) = [c for c in rule["detail"]["$or"] if "containers" in c]
    quiet = by_exit["containers"]["exitCode"][0]["anything-but"]
    assert (
        sorted(quiet) == sorted(QUIET_EXITS) == [int(ExitCode.SUCCESS), int(ExitCode.FINDINGS), int(ExitCode.SIGTERM)]
    )
    for loud in (ExitCode.BAD_INPUT, ExitCode.UNAVAILABLE, ExitCode.NOT_SETTLED, ExitCode.INTERNAL):
        assert int(loud) not in quiet
    assert {"stopCode": ["TaskFailedToStart"]} in rule["detail"]["$or"]


def test_a_failed_task_alert_reaches_an_email_subscriber_as_plain_lines(dev: ProgramRun) -> None:
    """The template as deployed, filled from an ECS task state change as EventBridge fills a text
    template: readable lines, no quotes around the message, no literal backslash-n.
    """
    target = dev.named("docuflow-dev-failed-tasks-alert").inputs["inputTransformer"]
    event = {
        "time": "2026-03-29T01:42:00Z",
        "detail": {
            "group": "family:docuflow-dev-ingest",
            "containers": [{"exitCode": 3}],
            "stopCode": "EssentialContainerExited",
            "stoppedReason": "Essential container in task exited",
            "taskArn": "arn:aws:ecs:eu-west-1:123456789012:task/docuflow-dev/0abc",
        },
    }
    text = delivered(target["inputPaths"], target["inputTemplate"], event)
    lines = text.splitlines()
    assert lines[0] == "DocuFlow dev: a job task stopped badly at 2026-03-29T01:42:00Z."
    assert lines[1] == "Job: family:docuflow-dev-ingest. Exit code: 3 (none: it never started)."
    assert lines[2] == "ECS: EssentialContainerExited, Essential container in task exited"
    assert lines[-1] == "Runbook: docs/operations.md#job-task-failed"
    assert not text.startswith('"') and "\\n" not in text and "<" not in text.replace("<none>", "")
    never_started = {"time": "t", "detail": {"group": "family:docuflow-dev-drill", "stopCode": "TaskFailedToStart"}}
    assert "Exit code:  (none: it never started)" in delivered(
        target["inputPaths"], target["inputTemplate"], never_started
    )
