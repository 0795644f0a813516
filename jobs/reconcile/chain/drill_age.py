"""The restore drill's age, as the nightly reconcile publishes it (DaysSinceLastDrill). Pure.

A drill runs quarterly, and no CloudWatch alarm window spans a quarter (7 days at most), so the
drill's own heartbeat cannot be alarmed on: the reconcile, which runs every night, measures how
long ago the newest drill reported and publishes that, and `drill-overdue` judges it against the
drill's schedule (jobs.contract.alarms). What it reads is what a drill leaves once it restored,
reconciled and reported: its write-once report under runs/drill/ in the reports bucket, listed
only (the report's LastModified is when the drill finished), so the reconcile's role needs one
more listing prefix and no CloudWatch read (GetMetricData has no resource to narrow it to). A
drill that failed before its report leaves none, so it is no drill here; its findings and targets
are `drill-targets-missed`'s. Before the first drill the age runs from the stack's first night (its
oldest reconcile report), so a stack whose drill never ran alarms too; on the very first night,
with no report listed yet, there is nothing to publish.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from jobs.contract.metrics import Datum, Metric, Unit
from jobs.contract.objects import ObjectInfo

DAY_SECONDS = 86_400


def newest(objects: Iterable[ObjectInfo]) -> datetime | None:
    """When the newest of `objects` was written (None: there is none)."""
    return max((o.last_modified for o in objects), default=None)


def days_since(then: datetime, now: datetime) -> float:
    """Whole and fractional days from `then` to `now`, never below 0 (a clock a little behind S3's)."""
    if then.tzinfo is None or now.tzinfo is None:
        raise ValueError("days_since takes tz-aware datetimes")
    return round(max((now - then).total_seconds(), 0.0) / DAY_SECONDS, 3)


def drill_age(last_drill: datetime | None, first_night: datetime | None, now: datetime) -> float | None:
    """Days since the last drill reported, else since the stack's first night, else None."""
    since = last_drill or first_night
    return None if since is None else days_since(since, now)


def drill_age_datum(days: float | None) -> list[Datum]:
    """The datum the reconcile adds to its night's metrics (none without an age)."""
    return [] if days is None else [Datum(metric=Metric.DAYS_SINCE_DRILL, value=days, unit=Unit.NONE)]
