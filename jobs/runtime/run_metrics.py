"""A run's outcome as CloudWatch metrics: the one place every job publishes through.

Each job turns its summary into a `RunMetrics` (jobs.contract.metrics names them); `publish`
puts them once, when the run ends, in the stage's namespace with the dimensions Job and Stage,
with PutMetricData through jobs.store.metrics. Once per run rather than the embedded metric
format in the logs: the awslogs driver does not extract it, and one request a night is cheaper
than a FireLens sidecar or a metric filter per metric (docs/operations.md, Metrics).

A failed publish is logged, never the run's failure: the documents are done either way, and the
Heartbeat alarm hears of a night that stays silent.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from jobs.contract.metrics import RunMetrics, dimensions, namespace
from jobs.errors import DocuFlowError
from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.store.clients import cloudwatch_client
from jobs.store.metrics import MetricsStore

logger = logging.getLogger(__name__)


def metric_data(run: RunMetrics, stage: str) -> list[dict[str, Any]]:
    """The PutMetricData entries of `run` (without their Timestamp)."""
    return [
        {
            "MetricName": datum.metric.value,
            "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions(run.job, stage, datum.breakdown).items()],
            "Value": datum.value,
            "Unit": datum.unit.value,
        }
        for datum in run.data
    ]


def publish(settings: JobSettings, run: RunMetrics, at: datetime, calls: CallMetrics | None = None) -> bool:
    """Put `run`'s metrics, stamped `at` (the run's end); False (logged) when CloudWatch refused."""
    data = metric_data(run, settings.stage)
    try:
        store = MetricsStore(cloudwatch_client(settings), calls or CallMetrics())
        store.put(namespace(settings.stage), data, at)
    except DocuFlowError as exc:  # an outage, or a malformed endpoint setting
        logger.error("could not publish the run's metrics", extra={"job": str(run.job), "error": str(exc)})
        return False
    logger.info("run metrics published", extra={"job": str(run.job), "metrics": len(data)})
    return True
