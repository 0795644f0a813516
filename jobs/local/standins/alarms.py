"""Stand-in for CloudWatch's alarm evaluation: the declared alarms (jobs.contract.alarms) judged
against the metrics the jobs put into moto's CloudWatch, which stores metrics but evaluates no
alarm.

As CloudWatch documents it: at an evaluation time each alarm reads its statistic per period over
its `evaluation_periods` periods ending then (GetMetricData from the window's start, so the
periods end at the evaluation time, not on the clock's hours); a period without data counts as
its `missing` treatment says (breaching, or not breaching); the alarm is in ALARM when at least
`datapoints_to_alarm` of its periods breach (M of N), else OK. A ratio alarm's periods are metric
math over the Sums of its counts (`Ratio.value`, the expression the stack deploys). CloudWatch
evaluates every minute and notifies on a change of state only: `walk` evaluates at many times
and returns the changes into ALARM, the notifications a person would get. One GetMetricData per
evaluation reads every alarm, from the start of the longest window (each alarm's periods still
end at the evaluation time: its period divides that window). The jobs put their own metrics;
the arrival queue's ApproximateAgeOfOldestMessage, which no local server emits, comes from its
stand-in (jobs.local.standins.queue_metrics), under the same namespace and dimension as on AWS.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.contract.alarms import AlarmSpec, Missing
from jobs.store.metrics import MetricsStore


@dataclass(frozen=True)
class Notification:
    """An alarm that went from OK into ALARM at an evaluation: what CloudWatch sends."""

    at: datetime
    alarm: str


def _queries(stage: str, index: int, spec: AlarmSpec) -> dict[str, dict[str, object]]:
    """The GetMetricData queries of one alarm, by id: its metric, or each count of its ratio."""
    metrics = (
        {f"a{index}": spec.metric} if spec.ratio is None else {f"a{index}_{k}": m for k, m in spec.ratio.ids().items()}
    )
    dimensions = [{"Name": k, "Value": v} for k, v in spec.metric_dimensions(stage).items()]
    return {
        query_id: {
            "Metric": {"Namespace": spec.metric_namespace(stage), "MetricName": str(metric), "Dimensions": dimensions},
            "Period": spec.period,
            "Stat": spec.statistic.value,
        }
        for query_id, metric in metrics.items()
    }


def _periods(spec: AlarmSpec, start: datetime, series: Sequence[tuple[datetime, float]]) -> dict[int, float]:
    """The values of `series` by the index of their period counted from `start`."""
    return {round((moment - start).total_seconds() / spec.period): value for moment, value in series}


def _period_values(
    spec: AlarmSpec, index: int, start: datetime, at: datetime, found: dict[str, list[tuple[datetime, float]]]
) -> list[float | None]:
    """The values of the alarm's periods ending at `at`, oldest first (None: no data in one)."""
    first = round((at - start).total_seconds() / spec.period) - spec.evaluation_periods
    wanted = range(first, first + spec.evaluation_periods)
    if spec.ratio is None:
        values = _periods(spec, start, found.get(f"a{index}", []))
        return [values.get(i) for i in wanted]
    sums = {m.value: _periods(spec, start, found.get(f"a{index}_{k}", [])) for k, m in spec.ratio.ids().items()}
    ratio = spec.ratio
    return [ratio.value({name: by_period[i] for name, by_period in sums.items() if i in by_period}) for i in wanted]


def judge(spec: AlarmSpec, values: Sequence[float | None]) -> bool:
    """Whether `spec` is in ALARM over its periods' values (None: a period without data)."""
    if all(v is None for v in values) and spec.missing is not Missing.BREACHING:
        return False  # no data at all: OK when missing data is not breaching
    breaching = sum(spec.missing is Missing.BREACHING if v is None else spec.breaches(v) for v in values)
    return breaching >= spec.datapoints


def _windows(specs: Sequence[AlarmSpec]) -> list[tuple[int, list[int]]]:
    """The alarms (by index) grouped by the window one GetMetricData reads for them: the longest
    window, for every alarm whose period divides it (its periods then end at the evaluation time
    too), else a window of their own.
    """
    longest = max(spec.window for spec in specs)
    shared = [i for i, spec in enumerate(specs) if longest % spec.period == 0]
    groups = [(longest, shared)] if shared else []
    return groups + [(spec.window, [i]) for i, spec in enumerate(specs) if i not in shared]


def states(store: MetricsStore, stage: str, specs: Iterable[AlarmSpec], at: datetime) -> dict[str, bool]:
    """Each alarm of `specs` by name: in ALARM (True) or OK at `at`, in the specs' order."""
    at = at.replace(microsecond=0)  # GetMetricData's times are whole seconds
    listed = list(specs)
    verdict: dict[str, bool] = {}
    for window, members in _windows(listed) if listed else []:
        start = at - timedelta(seconds=window)
        queries = {k: q for i in members for k, q in _queries(stage, i, listed[i]).items()}
        found = store.query(queries, start, at)
        for i in members:
            verdict[listed[i].name] = judge(listed[i], _period_values(listed[i], i, start, at, found))
    return {spec.name: verdict[spec.name] for spec in listed}


def in_alarm(store: MetricsStore, stage: str, specs: Iterable[AlarmSpec], at: datetime) -> list[str]:
    """The names of the alarms of `specs` in ALARM at `at`, in the specs' order."""
    return [name for name, alarmed in states(store, stage, specs, at).items() if alarmed]


def walk(store: MetricsStore, stage: str, specs: Sequence[AlarmSpec], times: Iterable[datetime]) -> list[Notification]:
    """Evaluate at each of `times` (in order) from every alarm OK: each change into ALARM."""
    alarmed = {spec.name: False for spec in specs}
    sent: list[Notification] = []
    for at in times:
        now = states(store, stage, specs, at)
        sent += [Notification(at, name) for name, state in now.items() if state and not alarmed[name]]
        alarmed = now
    return sent
