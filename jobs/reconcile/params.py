"""What the rules are told besides their inputs: the buckets, the snapshot time and the thresholds.

Every engine judges with the same `RuleParams`; the thresholds are given both as the stored text
(items keep ISO-8601 times) and as times (objects), so the polars rules and the SQL compare alike.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.contract import layout


@dataclass(frozen=True)
class RuleParams:
    raw_bucket: str
    processed_bucket: str
    as_of: datetime  # the snapshot time the ages are measured from
    grace: timedelta = timedelta(minutes=15)
    stuck_after: timedelta = timedelta(hours=6)
    retention: timedelta = timedelta(days=5 * 365)
    deep: bool = False

    @property
    def judged_before(self) -> datetime:
        """Objects modified after this are within the grace period: not judged yet."""
        return self.as_of - self.grace

    @property
    def settled_before(self) -> str:
        """Items changed after this are not held against listings taken a little earlier."""
        return layout.format_ts(self.as_of - self.grace)

    @property
    def expired_before(self) -> str:
        """Items created before this had their raw object expired by lifecycle retention."""
        return layout.format_ts(self.as_of - self.retention)

    @property
    def stuck_before(self) -> str:
        return layout.format_ts(self.as_of - self.stuck_after)
