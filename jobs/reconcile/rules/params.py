"""What the rules are told besides their inputs: the buckets, the snapshot time and the thresholds.

Every engine judges with the same `RuleParams`; the thresholds are given both as the stored text
(items keep ISO-8601 times) and as times (objects), so the polars rules and the SQL compare alike.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.contract import layout
from jobs.contract.retention import RetentionPolicy

_POLICY = RetentionPolicy()
# AWS bounds neither delay: DynamoDB's TTL deletes "typically within a few days" (two, says the
# API reference) and S3 lifecycle acts once a day, rounds to the next midnight UTC and removes
# asynchronously. Beyond this, an item and its objects that should have gone together are judged.
EXPIRY_GAP = timedelta(days=7)
# A result.json is written when its document is processed, after its upload: at the latest
# before the arrival queue drops the upload's message (its retention), else it was never done.
RESULT_DELAY = timedelta(days=14)


@dataclass(frozen=True)
class RuleParams:
    raw_bucket: str
    processed_bucket: str
    as_of: datetime  # the snapshot time the ages are measured from
    grace: timedelta = timedelta(minutes=15)
    stuck_after: timedelta = timedelta(hours=6)
    retention: timedelta = timedelta(days=_POLICY.standard_days)
    deep: bool = False
    # Each retention class's days (the stack's policy): an object no item names is not judged
    # while its retention is just ending (the item's TTL may have come first).
    retention_days: tuple[int, ...] = (_POLICY.standard_days, _POLICY.compliance_days)
    expiry_gap: timedelta = EXPIRY_GAP
    result_delay: timedelta = RESULT_DELAY

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
        """Items created before this had their raw object expired by lifecycle retention (items
        written before retention was recorded on them: those without retainUntil).
        """
        return layout.format_ts(self.as_of - self.retention)

    @property
    def as_of_text(self) -> str:
        """The snapshot time as items store times: a retainUntil before it has passed."""
        return layout.format_ts(self.as_of)

    def expiring(self, kind: str) -> list[tuple[datetime, datetime]]:
        """(after, until]: the objects (raw or result) last modified then are at the end of a
        retention class's days within the expiry gap: their item may already be gone by TTL,
        and lifecycle has not hidden them yet. A result.json is written up to `result_delay`
        after its upload, so it may outlive its item by that much too.
        """
        late = self.result_delay if kind == "result" else timedelta(0)
        return [
            (self.as_of - timedelta(days=days) - self.expiry_gap, self.as_of - timedelta(days=days) + late)
            for days in self.retention_days
        ]

    @property
    def stuck_before(self) -> str:
        return layout.format_ts(self.as_of - self.stuck_after)
