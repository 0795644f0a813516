"""Whether tonight's S3 Inventory reports may be judged: a night never judges the table against
an inventory that is not there yet, or no longer current (issue 34).

Per data bucket, its newest report (`inputs.inventory.newest_manifest`) is one of:

- fresh: delivered within `inventory_max_age_hours` (48 by default: S3 Inventory delivers daily,
  so two missed days are a broken delivery, not a delay): judged;
- stale: older than that: `INVENTORY_STALE`, an error, and nothing is judged against it (a table of
  tonight against objects of days ago would report every newer document as an error);
- waiting: none delivered yet, and no nightly report has seen one, within `first_inventory_hours`
  (48: AWS delivers a first report up to 48 hours after the configuration is made) of the first
  nightly report that found none: nothing to judge yet, exit 0, no finding, the heartbeat published;
- missing: none, past that wait or after a night that had one: `INVENTORY_MISSING`, an error.

The wait's reference is the first nightly report that had no inventory, not the table's or the
configuration's creation: S3 returns no creation time for an inventory configuration, and a table
or a bucket may be years older than an inventory configuration added to it later, which would
alarm the first night. The first nightly report is at most a schedule period after the deploy
that made the configuration, so the wait covers AWS's 48 hours from it, and the reports are
write-once (their startedAt cannot be moved). Each night records its buckets' states in its
summary (`engineStats.inventories`), which is what the next night reads back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

import polars as pl

from jobs.reconcile.chain.coverage import Recorded
from jobs.reconcile.inputs.inventory import delivered_at, newest_manifest
from jobs.reconcile.rules.findings import Code, widen

if TYPE_CHECKING:
    from jobs.reconcile.summary import ReconcileSummary
    from jobs.settings import JobSettings
    from jobs.store.s3 import Buckets

STATS_KEY = "inventories"  # summary.engineStats[STATS_KEY]: {source bucket: state}


class State(StrEnum):
    FRESH = "fresh"
    STALE = "stale"
    WAITING = "waiting"
    MISSING = "missing"


@dataclass(frozen=True)
class Delivery:
    """One data bucket's newest inventory report tonight, and what it allows."""

    source_bucket: str
    state: State
    manifest: str | None  # s3:// of the newest manifest.json, None when none was delivered
    since: datetime  # when it was delivered, or when the wait for a first one began

    def row(self, now: datetime) -> dict[str, object] | None:
        """Its finding's wide row (INVENTORY_STALE, INVENTORY_MISSING), None when it has none."""
        code = {State.STALE: Code.INVENTORY_STALE, State.MISSING: Code.INVENTORY_MISSING}.get(self.state)
        if code is None:
            return None
        return {
            "code": code.value,
            "bucket": self.source_bucket,
            "key": self.manifest,
            "ev_last_modified": self.since,
            "ev_count": int((now - self.since).total_seconds() // 3600),
        }


@dataclass(frozen=True)
class Tonight:
    """What the inventories allow tonight."""

    deliveries: tuple[Delivery, Delivery]  # raw, processed

    @property
    def judged(self) -> bool:
        return all(d.state is State.FRESH for d in self.deliveries)

    @property
    def manifests(self) -> tuple[str, str]:
        raw, processed = (d.manifest for d in self.deliveries)
        assert raw is not None and processed is not None, "only a judged night has both"
        return raw, processed

    def stats(self) -> dict[str, str]:
        return {d.source_bucket: d.state.value for d in self.deliveries}

    def wide(self, now: datetime) -> pl.DataFrame:
        """The night's inventory findings as wide rows (none when judged or only waiting)."""
        rows = [row for d in self.deliveries if (row := d.row(now)) is not None]
        return widen(pl.DataFrame(rows)) if rows else widen(pl.DataFrame({"code": []}, schema={"code": pl.String}))

    def not_judged(self, settings: JobSettings) -> str | None:
        """Why nothing was judged tonight, in the report's words (None: judged)."""
        if self.judged:
            return None
        if all(d.state in (State.FRESH, State.WAITING) for d in self.deliveries):
            waiting = [d for d in self.deliveries if d.state is State.WAITING]
            until = min(d.since for d in waiting) + timedelta(hours=settings.reconcile.first_inventory_hours)
            names = ", ".join(d.source_bucket for d in waiting)
            return (
                f"nothing to judge yet: no S3 Inventory report of {names} has been delivered; AWS delivers "
                f"the first within {settings.reconcile.first_inventory_hours} hours of its configuration "
                f"(waiting until {until:%Y-%m-%d %H:%M} UTC, after which a missing one is an error)"
            )
        return (
            "not judged: an inventory is missing or older than "
            f"{settings.reconcile.inventory_max_age_hours} hours (see the INVENTORY_MISSING / INVENTORY_STALE findings)"
        )


def _seen(history: Sequence[ReconcileSummary], bucket: str) -> tuple[bool, datetime | None]:
    """(the wait for a first inventory of `bucket` is over: a nightly report judged one, saw one,
    or already reported it missing; the first nightly report that waited for one). Reports from
    before the states were recorded judged an inventory: a night without one then failed before
    it wrote a report. A night that reported it missing ends the wait for good, so a delivery
    that stays broken is an error every night, even once the nights that waited are older than
    the history read.
    """
    delivered, waited = False, None
    for summary in history:
        if not Recorded.of(summary.options).nightly:
            continue
        state = (summary.engineStats.get(STATS_KEY) or {}).get(bucket, State.FRESH.value)
        if state in (State.FRESH, State.STALE, State.MISSING):
            delivered = True
        elif state == State.WAITING and (waited is None or summary.startedAt < waited):
            waited = summary.startedAt
    return delivered, waited


def delivery(
    settings: JobSettings,
    buckets: Buckets,
    source_bucket: str,
    now: datetime,
    history: Callable[[], Sequence[ReconcileSummary]],
) -> Delivery:
    """`source_bucket`'s newest inventory report and its state tonight."""
    s = settings
    manifest = newest_manifest(
        buckets,
        s.reconcile.inventory_bucket,
        s.reconcile.inventory_prefix,
        s.reconcile.inventory_config_id,
        source_bucket,
    )
    if manifest is not None:
        at = delivered_at(manifest)
        fresh = now - at <= timedelta(hours=s.reconcile.inventory_max_age_hours)
        return Delivery(source_bucket, State.FRESH if fresh else State.STALE, manifest, at)
    delivered, waited = _seen(history(), source_bucket)
    since = waited or now
    if not delivered and now - since < timedelta(hours=s.reconcile.first_inventory_hours):
        return Delivery(source_bucket, State.WAITING, None, since)
    return Delivery(source_bucket, State.MISSING, None, since)


def tonight(
    settings: JobSettings, buckets: Buckets, now: datetime, history: Callable[[], Sequence[ReconcileSummary]]
) -> Tonight:
    """The raw and the processed bucket's inventories tonight. `history`: the earlier reports
    (`report.load_history`), read only when a bucket has none.
    """
    raw, processed = (
        delivery(settings, buckets, b, now, history)
        for b in (settings.store.raw_bucket, settings.store.processed_bucket)
    )
    return Tonight((raw, processed))
