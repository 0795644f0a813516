"""CloudWatch adapter: a run's metrics put in one request per 1000 data (PutMetricData), and the
values of one metric, or of several queries at once, read back over a window (GetMetricData:
the alarms' local stand-in).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from jobs.observability import CallMetrics
from jobs.store._aws import translated

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch.type_defs import MetricDataQueryTypeDef, MetricDatumTypeDef

    from jobs.store.clients import CloudWatchClient

PUT_MAX = 1000  # MetricData entries PutMetricData takes in one request


class MetricsStore:
    def __init__(self, client: CloudWatchClient, metrics: CallMetrics) -> None:
        self._client = client
        self._metrics = metrics

    def put(self, namespace: str, data: Sequence[dict[str, Any]], timestamp: datetime) -> int:
        """`data`: MetricData entries without their Timestamp (the run's end, for all); the
        requests made.
        """
        # The entries are built by jobs.runtime.run_metrics in PutMetricData's own shape.
        stamped = cast("list[MetricDatumTypeDef]", [{**datum, "Timestamp": timestamp} for datum in data])
        requests = 0
        for start in range(0, len(stamped), PUT_MAX):
            with self._metrics.call("cloudwatch.PutMetricData"), translated("cloudwatch.PutMetricData"):
                self._client.put_metric_data(Namespace=namespace, MetricData=stamped[start : start + PUT_MAX])
            requests += 1
        return requests

    def values(
        self,
        namespace: str,
        metric: str,
        dimensions: dict[str, str],
        statistic: str,
        period: int,
        start: datetime,
        end: datetime,
    ) -> list[float]:
        """The metric's `statistic` per `period` seconds between `start` and `end` (periods
        without data are absent, as CloudWatch answers them).
        """
        stat = {
            "Metric": {
                "Namespace": namespace,
                "MetricName": metric,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
            },
            "Period": period,
            "Stat": statistic,
        }
        return [value for _, value in self.query({"m": stat}, start, end)["m"]]

    def query(
        self, queries: dict[str, dict[str, Any]], start: datetime, end: datetime
    ) -> dict[str, list[tuple[datetime, float]]]:
        """Several MetricStat queries (by id) in one GetMetricData: each one's (period start, value)
        pairs, periods counted from `start` (periods without data are absent).
        """
        found: dict[str, list[tuple[datetime, float]]] = {k: [] for k in queries}
        stats = cast("list[MetricDataQueryTypeDef]", [{"Id": k, "MetricStat": stat} for k, stat in queries.items()])
        token: str | None = None
        while True:
            page: dict[str, Any] = {"NextToken": token} if token else {}
            with self._metrics.call("cloudwatch.GetMetricData"), translated("cloudwatch.GetMetricData"):
                response = self._client.get_metric_data(MetricDataQueries=stats, StartTime=start, EndTime=end, **page)
            for result in response.get("MetricDataResults", []):
                pairs = zip(result.get("Timestamps", []), result.get("Values", []), strict=True)
                found[result["Id"]] += [(moment, float(value)) for moment, value in pairs]
            token = response.get("NextToken")
            if not token:
                return found
