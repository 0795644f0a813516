"""Operations: the declared alarms (jobs.contract.alarms) as CloudWatch alarms on the alert
topic, and one dashboard of the jobs' metrics (jobs.contract.metrics), both from the same spec
the local stand-in evaluates.

Each alarm's description names its runbook entry in docs/operations.md; a ratio alarm is metric
math over the Sums of its counts (jobs.contract.alarms.Ratio). The dashboard, over the last 30
nights at one point a night: the night's intake and outcomes (every metric each job publishes),
its estimated cost and Textract pages, each job's duration against its schedule window (a line at
the window), the reconcile's findings open by severity (the known ones too) and by code and the
new ones by severity, the drill's RPO and RTO and the days since the last drill (against its
`drill-overdue` bound where the stack schedules one), the arrival queue's oldest message against its
alarm, and the alarms' states. Several ingest tasks publish the same metrics each night: a count
is summed across them, a level (a ratio, a depth, an age, a duration: metrics.LEVELS) takes their
Maximum, and the night's failed ratio is drawn as the alarm judges it, metric math over the counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components._pulumi import child
from jobs.contract import layout
from jobs.contract.alarms import (
    OLDEST_MESSAGE_AGE,
    OLDEST_MESSAGE_SECONDS,
    QUEUE_NAME,
    SQS_NAMESPACE,
    AlarmSpec,
    declared_alarms,
    drill_overdue_days,
)
from jobs.contract.metrics import (
    CODE,
    JOB,
    PUBLISHED,
    SEVERITIES,
    SEVERITY,
    STAGE,
    Job,
    Metric,
    namespace,
    statistic_of,
)

NIGHTS = 30  # the dashboard's window: the last 30 nights
DAY = 86_400
# Drawn in widgets of their own rather than one per metric.
_OWN_WIDGETS = frozenset(
    {
        Metric.DURATION,
        Metric.FINDINGS,
        Metric.NEW_FINDINGS,
        Metric.RPO,
        Metric.RTO,
        Metric.ESTIMATED_COST,
        Metric.FAILED_RATIO,
        Metric.DAYS_SINCE_DRILL,
    }
)


@dataclass
class OperationsArgs:
    stage: str
    region: str
    alarm_topic_arn: pulumi.Input[str]
    failed_ratio_threshold: float
    oldest_message_seconds: int = OLDEST_MESSAGE_SECONDS
    # Each scheduled job's window in seconds (StackSettings.job_windows): its duration's line.
    windows: Mapping[str, int] = field(default_factory=dict)
    # The restore drill's schedule (StackSettings.drill_schedule): its `drill-overdue` alarm's bound.
    # None: the stack schedules no drill, and declares no such alarm.
    drill_schedule: str | None = None
    # The scheduled ingest's task count (StackSettings.ingest_tasks): the failed ratio judges a
    # night once that many have finished.
    ingest_tasks: int = 1
    tags: dict[str, str] = field(default_factory=dict)


def _widget(
    title: str, metrics: list[list[Any]], region: str, stat: str = "Sum", lines: Mapping[str, float] | None = None
) -> dict[str, Any]:
    properties: dict[str, Any] = {"title": title, "region": region, "stat": stat, "period": DAY, "metrics": metrics}
    if lines:
        properties["annotations"] = {"horizontal": [{"label": k, "value": v} for k, v in lines.items()]}
    return {"type": "metric", "width": 12, "height": 6, "properties": properties}


def _line(stage: str, job: Job, metric: Metric, *breakdown: str, **options: Any) -> list[Any]:
    """A metric's line, with its statistic across tasks (Sum for a count, Maximum for a level)."""
    return [
        namespace(stage),
        metric.value,
        JOB,
        job.value,
        STAGE,
        stage,
        *breakdown,
        {"stat": statistic_of(metric), **options},
    ]


def _night(stage: str, region: str) -> list[dict[str, Any]]:
    """One widget per metric each job publishes, but those drawn by their own."""
    return [
        _widget(f"{job.value}: {metric.value}", [_line(stage, job, metric)], region, stat=statistic_of(metric))
        for job, published in PUBLISHED.items()
        for metric in published
        if metric not in _OWN_WIDGETS
    ]


def _failed_ratio(stage: str, region: str, threshold: float, tasks: int) -> dict[str, Any]:
    """The night's failed ratio as its alarm judges it (metric math over the counts summed across
    the tasks), beside the worst task's own ratio (Maximum), with a line at the threshold.
    """
    (spec,) = [s for s in declared_alarms(threshold, ingest_tasks=tasks) if s.ratio is not None]
    assert spec.ratio is not None
    counts = [
        _line(stage, Job.INGEST, metric, stat="Sum", id=query_id, visible=False)
        for query_id, metric in spec.ratio.ids().items()
    ]
    night = [{"expression": spec.ratio.expression(), "id": "night", "label": "the night's failed ratio"}]
    worst = _line(stage, Job.INGEST, Metric.FAILED_RATIO, label="the worst task's")
    metrics = [*counts, night, worst]
    return _widget("ingest: failed ratio", metrics, region, stat="Maximum", lines={"alarm": threshold})


def _durations(stage: str, region: str, windows: Mapping[str, int]) -> list[dict[str, Any]]:
    """Each job's duration, Maximum a night, with a line at its schedule window where it has one."""
    return [
        _widget(
            f"{job.value}: duration (s) against its window",
            [_line(stage, job, Metric.DURATION)],
            region,
            stat="Maximum",
            lines={"schedule window": windows[job.value]} if job.value in windows else None,
        )
        for job, published in PUBLISHED.items()
        if Metric.DURATION in published
    ]


def _findings(stage: str, region: str) -> list[dict[str, Any]]:
    """The reconcile's findings a night: by severity, and by every code it publishes (a search,
    so a new code is drawn without a deploy).
    """
    severities = [_line(stage, Job.RECONCILE, Metric.FINDINGS, SEVERITY, s) for s in SEVERITIES]
    new = [_line(stage, Job.RECONCILE, Metric.NEW_FINDINGS, SEVERITY, s) for s in SEVERITIES]
    search = (
        f'SEARCH(\'{{{namespace(stage)},{CODE},{JOB},{STAGE}}} MetricName="{Metric.FINDINGS.value}" '
        f'{JOB}="{Job.RECONCILE.value}" {STAGE}="{stage}"\', \'Maximum\', {DAY})'
    )
    return [
        # Open tonight, the known ones too (acknowledged or open for weeks): what the alarm,
        # which judges the new ones, no longer shows.
        _widget(f"reconcile: open findings by severity, last {NIGHTS} nights", severities, region, stat="Maximum"),
        _widget(f"reconcile: new findings by severity, last {NIGHTS} nights", new, region, stat="Maximum"),
        _widget(
            f"reconcile: findings by code, last {NIGHTS} nights",
            [[{"expression": search, "id": "codes", "label": ""}]],
            region,
            stat="Maximum",
        ),
    ]


def _drill_age(stage: str, region: str, drill_schedule: str | None) -> dict[str, Any]:
    """The days since the last drill, as the nightly reconcile measures them, with a line at the
    bound its alarm judges them by (none without a scheduled drill).
    """
    bound = {"drill-overdue": drill_overdue_days(drill_schedule)} if drill_schedule else None
    line = [_line(stage, Job.RECONCILE, Metric.DAYS_SINCE_DRILL)]
    return _widget("drill: days since the last drill", line, region, stat="Maximum", lines=bound)


def dashboard_body(
    stage: str,
    region: str,
    alarm_arns: list[str],
    windows: Mapping[str, int] | None = None,
    oldest_message_seconds: int = OLDEST_MESSAGE_SECONDS,
    failed_ratio_threshold: float = 0.5,
    drill_schedule: str | None = None,
    ingest_tasks: int = 1,
) -> dict[str, Any]:
    """The stack's dashboard (see the module's docstring for its widgets)."""
    drill = [_line(stage, Job.DRILL, m) for m in (Metric.RPO, Metric.RTO)]
    queue = [[SQS_NAMESPACE, OLDEST_MESSAGE_AGE, QUEUE_NAME, layout.arrivals_queue_name(stage), {"stat": "Maximum"}]]
    widgets = [
        *_night(stage, region),
        _failed_ratio(stage, region, failed_ratio_threshold, ingest_tasks),
        *_durations(stage, region, windows or {}),
        _widget(
            "ingest: the night's estimated cost (USD)", [_line(stage, Job.INGEST, Metric.ESTIMATED_COST)], region, "Sum"
        ),
        *_findings(stage, region),
        _widget("drill: RPO and RTO (s)", drill, region, stat="Maximum"),
        _drill_age(stage, region, drill_schedule),
        _widget("arrivals: oldest message (s)", queue, region, "Maximum", {"alarm": oldest_message_seconds}),
        {"type": "alarm", "width": 24, "height": 4, "properties": {"title": "alarms", "alarms": alarm_arns}},
    ]
    return {"start": f"-P{NIGHTS}D", "widgets": widgets}


def alarm_metric(spec: AlarmSpec, stage: str) -> dict[str, Any]:
    """What `spec`'s alarm reads: its metric and statistic per period, or for a ratio the metric
    math over its counts' Sums (each count a query that returns no data of its own).
    """
    if spec.ratio is None:
        return {
            "namespace": spec.metric_namespace(stage),
            "metric_name": spec.metric,
            "dimensions": spec.metric_dimensions(stage),
            "statistic": spec.statistic.value,
            "period": spec.period,
        }
    counts = [
        aws.cloudwatch.MetricAlarmMetricQueryArgs(
            id=query_id,
            metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(
                namespace=spec.metric_namespace(stage),
                metric_name=metric.value,
                dimensions=spec.metric_dimensions(stage),
                stat=spec.statistic.value,
                period=spec.period,
            ),
            return_data=False,
        )
        for query_id, metric in spec.ratio.ids().items()
    ]
    ratio = aws.cloudwatch.MetricAlarmMetricQueryArgs(
        id="ratio", expression=spec.ratio.expression(), label=spec.metric, return_data=True
    )
    return {"metric_queries": [*counts, ratio]}


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
                evaluation_periods=spec.evaluation_periods,
                datapoints_to_alarm=spec.datapoints,
                threshold=spec.threshold,
                comparison_operator=spec.comparison.value,
                treat_missing_data=spec.missing.value,
                alarm_actions=[args.alarm_topic_arn],
                ok_actions=[args.alarm_topic_arn],
                tags=args.tags,
                opts=child(self),
                **alarm_metric(spec, args.stage),
            )
            for spec in declared_alarms(
                args.failed_ratio_threshold, args.oldest_message_seconds, args.drill_schedule, args.ingest_tasks
            )
            if spec.deployed
        ]
        self.alarm_arns = pulumi.Output.all(*[a.arn for a in alarms])
        dashboard = aws.cloudwatch.Dashboard(
            f"{name}-dashboard",
            dashboard_name=f"{layout.stage_prefix(args.stage)}-operations",
            dashboard_body=self.alarm_arns.apply(
                lambda arns: json.dumps(
                    dashboard_body(
                        args.stage,
                        args.region,
                        list(arns),
                        args.windows,
                        args.oldest_message_seconds,
                        args.failed_ratio_threshold,
                        args.drill_schedule,
                        args.ingest_tasks,
                    )
                )
            ),
            opts=child(self),
        )
        self.dashboard_name = dashboard.dashboard_name
        self.register_outputs({"alarm_arns": self.alarm_arns, "dashboard_name": self.dashboard_name})
