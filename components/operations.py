"""Operations: the jobs' declared alarms (jobs.registry.declared_alarms, specs of
jobs.contract.alarms) as CloudWatch alarms on the alert topic, and one dashboard of the metrics
each job declares it publishes (jobs.registry.published), both from the same specs the local
stand-in evaluates.

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
    ARRIVALS_STALLED,
    DRILL_OVERDUE,
    OLDEST_MESSAGE_AGE,
    QUEUE_NAME,
    SQS_NAMESPACE,
    AlarmSpec,
)
from jobs.contract.metrics import (
    CODE,
    JOB,
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
    # The jobs' alarms on this stack (jobs.registry.declared_alarms); the dashboard draws a line at
    # the threshold of those it has a widget for (the failed ratio, the drill's age, the arrivals').
    alarms: tuple[AlarmSpec, ...]
    # What each Job dimension publishes (jobs.registry.published): a widget per metric.
    published: Mapping[str, tuple[Metric, ...]]
    # Each scheduled job's window in seconds (StackSettings.job_windows): its duration's line.
    windows: Mapping[str, int] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


def _widget(
    title: str, metrics: list[list[Any]], region: str, stat: str = "Sum", lines: Mapping[str, float] | None = None
) -> dict[str, Any]:
    properties: dict[str, Any] = {"title": title, "region": region, "stat": stat, "period": DAY, "metrics": metrics}
    if lines:
        properties["annotations"] = {"horizontal": [{"label": k, "value": v} for k, v in lines.items()]}
    return {"type": "metric", "width": 12, "height": 6, "properties": properties}


def _line(stage: str, job: str, metric: Metric, *breakdown: str, **options: Any) -> list[Any]:
    """A metric's line, with its statistic across tasks (Sum for a count, Maximum for a level)."""
    return [
        namespace(stage),
        metric.value,
        JOB,
        str(job),
        STAGE,
        stage,
        *breakdown,
        {"stat": statistic_of(metric), **options},
    ]


def _night(stage: str, region: str, published: Mapping[str, tuple[Metric, ...]]) -> list[dict[str, Any]]:
    """One widget per metric each job publishes, but those drawn by their own."""
    return [
        _widget(f"{job}: {metric.value}", [_line(stage, job, metric)], region, stat=statistic_of(metric))
        for job, metrics in published.items()
        for metric in metrics
        if metric not in _OWN_WIDGETS
    ]


def _failed_ratio(stage: str, region: str, spec: AlarmSpec) -> dict[str, Any]:
    """The night's failed ratio as its alarm judges it (metric math over the counts summed across
    the tasks), beside the worst task's own ratio (Maximum), with a line at the threshold.
    """
    assert spec.ratio is not None
    threshold = spec.threshold
    counts = [
        _line(stage, Job.INGEST, metric, stat="Sum", id=query_id, visible=False)
        for query_id, metric in spec.ratio.ids().items()
    ]
    night = [{"expression": spec.ratio.expression(), "id": "night", "label": "the night's failed ratio"}]
    worst = _line(stage, Job.INGEST, Metric.FAILED_RATIO, label="the worst task's")
    metrics = [*counts, night, worst]
    return _widget("ingest: failed ratio", metrics, region, stat="Maximum", lines={"alarm": threshold})


def _durations(
    stage: str, region: str, windows: Mapping[str, int], published: Mapping[str, tuple[Metric, ...]]
) -> list[dict[str, Any]]:
    """Each job's duration, Maximum a night, with a line at its schedule window where it has one."""
    return [
        _widget(
            f"{job}: duration (s) against its window",
            [_line(stage, job, Metric.DURATION)],
            region,
            stat="Maximum",
            lines={"schedule window": windows[job]} if job in windows else None,
        )
        for job, metrics in published.items()
        if Metric.DURATION in metrics
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


def _drill_age(stage: str, region: str, overdue: AlarmSpec | None) -> dict[str, Any]:
    """The days since the last drill, as the nightly reconcile measures them, with a line at the
    bound its alarm judges them by (none without a scheduled drill).
    """
    bound = {DRILL_OVERDUE: overdue.threshold} if overdue is not None else None
    line = [_line(stage, Job.RECONCILE, Metric.DAYS_SINCE_DRILL)]
    return _widget("drill: days since the last drill", line, region, stat="Maximum", lines=bound)


def dashboard_body(
    stage: str,
    region: str,
    alarm_arns: list[str],
    alarms: tuple[AlarmSpec, ...],
    published: Mapping[str, tuple[Metric, ...]],
    windows: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The stack's dashboard (see the module's docstring for its widgets)."""
    by_name = {spec.name: spec for spec in alarms}
    ratios = [spec for spec in alarms if spec.ratio is not None]
    stalled = {"alarm": by_name[ARRIVALS_STALLED].threshold} if ARRIVALS_STALLED in by_name else None
    drill = [_line(stage, Job.DRILL, m) for m in (Metric.RPO, Metric.RTO)]
    queue = [[SQS_NAMESPACE, OLDEST_MESSAGE_AGE, QUEUE_NAME, layout.arrivals_queue_name(stage), {"stat": "Maximum"}]]
    widgets = [
        *_night(stage, region, published),
        *[_failed_ratio(stage, region, spec) for spec in ratios],
        *_durations(stage, region, windows or {}, published),
        _widget(
            "ingest: the night's estimated cost (USD)", [_line(stage, Job.INGEST, Metric.ESTIMATED_COST)], region, "Sum"
        ),
        *_findings(stage, region),
        _widget("drill: RPO and RTO (s)", drill, region, stat="Maximum"),
        _drill_age(stage, region, by_name.get(DRILL_OVERDUE)),
        _widget("arrivals: oldest message (s)", queue, region, "Maximum", stalled),
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
            for spec in args.alarms
            if spec.deployed
        ]
        self.alarm_arns = pulumi.Output.all(*[a.arn for a in alarms])
        dashboard = aws.cloudwatch.Dashboard(
            f"{name}-dashboard",
            dashboard_name=f"{layout.stage_prefix(args.stage)}-operations",
            dashboard_body=self.alarm_arns.apply(
                lambda arns: json.dumps(
                    dashboard_body(args.stage, args.region, list(arns), args.alarms, args.published, args.windows)
                )
            ),
            opts=child(self),
        )
        self.dashboard_name = dashboard.dashboard_name
        self.register_outputs({"alarm_arns": self.alarm_arns, "dashboard_name": self.dashboard_name})
