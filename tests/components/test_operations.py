"""The stack declares the jobs' alarms and its dashboard from the one spec (jobs.contract.alarms)."""

from __future__ import annotations

import json

from jobs.contract.alarms import OLDEST_MESSAGE_AGE, Missing, declared_alarms
from jobs.contract.metrics import PUBLISHED, namespace
from tests.components.program import ProgramRun

TOPIC = "arn:aws:sns:eu-west-1:123456789012:docuflow-dev-topic-1a2b3c"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"


def test_every_deployed_spec_is_an_alarm_on_the_alert_topic(dev: ProgramRun) -> None:
    specs = {f"docuflow-dev-{s.name}": s for s in declared_alarms(0.5) if s.deployed}
    alarms = {a.inputs["name"]: a.inputs for a in dev.of_type(ALARM) if a.inputs.get("name") in specs}
    assert set(alarms) == set(specs)
    for name, alarm in alarms.items():
        spec = specs[name]
        assert (alarm["metricName"], alarm["threshold"]) == (spec.metric, spec.threshold)
        assert alarm["treatMissingData"] == spec.missing.value
        assert alarm["alarmActions"] == [TOPIC] and spec.runbook_url in alarm["alarmDescription"]
    heartbeats = [a for a in alarms.values() if a["treatMissingData"] == Missing.BREACHING.value]
    assert len(heartbeats) == 2  # the ingest's and the reconcile's: a night that did not run
    assert alarms["docuflow-dev-ingest-heartbeat"]["namespace"] == namespace("dev")
    stalled = alarms["docuflow-dev-arrivals-stalled"]
    assert (stalled["namespace"], stalled["metricName"]) == ("AWS/SQS", OLDEST_MESSAGE_AGE)
    queues = {q.inputs.get("name") for q in dev.of_type("aws:sqs/queue:Queue")}
    assert stalled["dimensions"]["QueueName"] in queues  # the arrival queue the stack creates


def test_the_dashboard_draws_every_published_metric(dev: ProgramRun) -> None:
    board = dev.one("aws:cloudwatch/dashboard:Dashboard").inputs
    assert board["dashboardName"] == "docuflow-dev-operations"
    body = json.loads(board["dashboardBody"])
    drawn = {line[1] for w in body["widgets"] if w["type"] == "metric" for line in w["properties"]["metrics"]}
    assert {m.value for metrics in PUBLISHED.values() for m in metrics} | {OLDEST_MESSAGE_AGE} == drawn
    (states,) = [w for w in body["widgets"] if w["type"] == "alarm"]
    assert len(states["properties"]["alarms"]) == sum(s.deployed for s in declared_alarms(0.5))
