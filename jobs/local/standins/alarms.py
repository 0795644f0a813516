"""Stand-in for CloudWatch's alarm evaluation: the declared alarms (jobs.contract.alarms) judged
against the metrics the jobs put into moto's CloudWatch, which stores metrics but evaluates no
alarm.

At a given time each alarm on the jobs' namespace reads its statistic over its evaluation window
(evaluation_periods × period, ending then) with GetMetricData; it is in ALARM when every period
of the window breaches, a period without data counting as its `missing` says — as CloudWatch
decides for an alarm whose datapoints-to-alarm equals its evaluation periods. Alarms on AWS's own
namespaces (the queue's ApproximateAgeOfOldestMessage) have no data locally: no server emits
them, so they are not judged here.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from jobs.contract.alarms import AlarmSpec, Missing
from jobs.contract.metrics import JOB, Job, dimensions, namespace
from jobs.store.metrics import MetricsStore


def judged(spec: AlarmSpec) -> bool:
    """Whether the stand-in can judge `spec` (its metric comes from the jobs)."""
    return spec.namespace is None


def in_alarm(store: MetricsStore, stage: str, specs: Iterable[AlarmSpec], at: datetime) -> list[str]:
    """The names of the alarms of `specs` in ALARM at `at`, in the specs' order."""
    return [spec.name for spec in specs if judged(spec) and _breaching(store, stage, spec, at)]


def _breaching(store: MetricsStore, stage: str, spec: AlarmSpec, at: datetime) -> bool:
    start = at - timedelta(seconds=spec.period * spec.evaluation_periods)
    # In the order the emitter writes them (jobs.contract.metrics.dimensions): moto matches a
    # query's dimensions as an ordered list, where CloudWatch takes them as a set.
    breakdown = {k: v for k, v in spec.dimensions.items() if k != JOB}
    wanted = dimensions(Job(spec.dimensions[JOB]), stage, breakdown)
    values = store.values(namespace(stage), spec.metric, wanted, spec.statistic, spec.period, start, at)
    missing = spec.evaluation_periods - len(values)
    if missing > 0 and spec.missing is not Missing.BREACHING:
        return False
    return all(spec.breaches(value) for value in values)
