"""Operations: the declared alarms (jobs.contract.alarms) as CloudWatch alarms on the alert
topic, and one dashboard of the jobs' metrics (jobs.contract.metrics), both from the same spec
the local stand-in evaluates.

Each alarm's description names its runbook entry in docs/operations.md; the dashboard draws every
metric each job publishes, the findings by severity, the arrival queue's oldest message and the
alarms' states.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components._pulumi import child
from jobs.contract import layout
from jobs.contract.alarms import OLDEST_MESSAGE_AGE, QUEUE_NAME, SQS_NAMESPACE, AlarmSpec, declared_alarms
from jobs.contract.metrics import JOB, PUBLISHED, SEVERITIES, SEVERITY, STAGE, Job, Metric, dimensions, namespace

NIGHTS = 30  # the dashboard's window: the last 30 nights


@dataclass
class OperationsArgs:
    stage: str
    region: str
    alarm_topic_arn: pulumi.Input[str]
    failed_ratio_threshold: float
    tags: dict[str, str] = field(default_factory=dict)


def alarm_dimensions(spec: AlarmSpec, stage: str) -> dict[str, str]:
    """The jobs' dimensions (Job, Stage, the breakdown) or the arrival queue's name."""
    if spec.namespace == SQS_NAMESPACE:
        return {QUEUE_NAME: layout.arrivals_queue_name(stage)}
    breakdown = {k: v for k, v in spec.dimensions.items() if k != JOB}
    return dimensions(Job(spec.dimensions[JOB]), stage, breakdown)


def _widget(title: str, metrics: list[list[Any]], region: str, stat: str = "Sum") -> dict[str, Any]:
    return {
        "type": "metric",
        "width": 12,
        "height": 6,
        "properties": {"title": title, "region": region, "stat": stat, "period": 86_400, "metrics": metrics},
    }


def dashboard_body(stage: str, region: str, alarm_arns: list[str]) -> dict[str, Any]:
    """The stack's dashboard: one widget per published metric of each job, the findings by
    severity, the arrival queue's oldest message, and the alarms' states.
    """
    ns = namespace(stage)
    widgets = [
        _widget(f"{job.value}: {metric.value}", [[ns, metric.value, JOB, job.value, STAGE, stage]], region)
        for job, published in PUBLISHED.items()
        for metric in published
        if metric is not Metric.FINDINGS
    ]
    severities = [[ns, Metric.FINDINGS.value, JOB, Job.RECONCILE.value, STAGE, stage, SEVERITY, s] for s in SEVERITIES]
    widgets.append(_widget("reconcile: findings by severity", severities, region))
    queue = [[SQS_NAMESPACE, OLDEST_MESSAGE_AGE, QUEUE_NAME, layout.arrivals_queue_name(stage)]]
    widgets.append(_widget("arrivals: oldest message (s)", queue, region, stat="Maximum"))
    widgets.append({"type": "alarm", "width": 24, "height": 4, "properties": {"title": "alarms", "alarms": alarm_arns}})
    return {"start": f"-P{NIGHTS}D", "widgets": widgets}


class Operations(pulumi.ComponentResource):
    alarm_arns: pulumi.Output[list[str]]
    dashboard_name: pulumi.Output[str]

    def __init__(self, name: str, args: OperationsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:operations:Operations", name, None, opts)
        alarms = [
            aws.cloudwatch.MetricAlarm(
                f"{name}-{spec.name}",
                name=f"{layout.stage_prefix(args.stage)}-{spec.name}",
                alarm_description=f"DocuFlow {args.stage}: {spec.description} Runbook: {spec.runbook_url}",
                namespace=spec.namespace or namespace(args.stage),
                metric_name=spec.metric,
                dimensions=alarm_dimensions(spec, args.stage),
                statistic=spec.statistic.value,
                period=spec.period,
                evaluation_periods=spec.evaluation_periods,
                threshold=spec.threshold,
                comparison_operator=spec.comparison.value,
                treat_missing_data=spec.missing.value,
                alarm_actions=[args.alarm_topic_arn],
                ok_actions=[args.alarm_topic_arn],
                tags=args.tags,
                opts=child(self),
            )
            for spec in declared_alarms(args.failed_ratio_threshold)
            if spec.deployed
        ]
        self.alarm_arns = pulumi.Output.all(*[a.arn for a in alarms])
        dashboard = aws.cloudwatch.Dashboard(
            f"{name}-dashboard",
            dashboard_name=f"{layout.stage_prefix(args.stage)}-operations",
            dashboard_body=self.alarm_arns.apply(
                lambda arns: json.dumps(dashboard_body(args.stage, args.region, list(arns)))
            ),
            opts=child(self),
        )
        self.dashboard_name = dashboard.dashboard_name
        self.register_outputs({"alarm_arns": self.alarm_arns, "dashboard_name": self.dashboard_name})
