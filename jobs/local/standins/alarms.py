"""Stand-in for CloudWatch's alarm evaluation: the declared alarms (jobs.contract.alarms) judged
against the metrics the jobs put into moto's CloudWatch, which stores metrics but evaluates no
alarm.

At a given time each alarm reads its statistic over its evaluation window (evaluation_periods ×
period, ending then) with GetMetricData; it is in ALARM when every period of the window breaches,
a period without data counting as its `missing` says — as CloudWatch decides for an alarm whose
datapoints-to-alarm equals its evaluation periods. The jobs put their own metrics; the arrival
queue's ApproximateAgeOfOldestMessage, which no local server emits, comes from its stand-in
(jobs.local.standins.queue_metrics), under the same namespace and dimension as on AWS.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from jobs.contract.alarms import AlarmSpec, Missing
from jobs.store.metrics import MetricsStore


def in_alarm(store: MetricsStore, stage: str, specs: Iterable[AlarmSpec], at: datetime) -> list[str]:
    """The names of the alarms of `specs` in ALARM at `at`, in the specs' order."""
    return [spec.name for spec in specs if _breaching(store, stage, spec, at)]


def _breaching(store: MetricsStore, stage: str, spec: AlarmSpec, at: datetime) -> bool:
    start = at - timedelta(seconds=spec.period * spec.evaluation_periods)
    values = store.values(
        spec.metric_namespace(stage), spec.metric, spec.metric_dimensions(stage), spec.statistic, spec.period, start, at
    )
    missing = spec.evaluation_periods - len(values)
    if missing > 0 and spec.missing is not Missing.BREACHING:
        return False
    return all(spec.breaches(value) for value in values)
