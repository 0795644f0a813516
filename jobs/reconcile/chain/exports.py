"""The nightly chain's decisions: from the newest kept table state and the latest time DynamoDB can
export, what tonight's run exports. Pure: no I/O (`nightly` does what this decides).

A night either brings the kept state forward by incremental exports that start exactly where it
ends and follow each other without gap or overlap (a missed night is one more export in the
same run), or re-anchors: a full export, and a new chain from it. It re-anchors when no state is
kept, when the state is of another table, when its chain was anchored `reanchor_after` ago or
more (the monthly re-anchor: the chain never drifts from a full read for longer), or when the
state is older than `catch_up_limit` (nights missed beyond that are cheaper read whole, and the
states and PITR's window would not hold them much longer). The same decisions drive the polars
engine's Parquet states and the Athena engine's Iceberg table.

AWS's limits (API reference, IncrementalExportSpecification; the developer guide's incremental
exports): the window is inclusive at ExportFromTime and exclusive at ExportToTime, at least 15
minutes and at most 24 hours long, and ends no later than LatestRestorableDateTime. Times are
whole seconds (the API counts seconds), so the state's time and the next window's start are
equal to the second.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

MAX_WINDOW = timedelta(hours=24)
MIN_WINDOW = timedelta(minutes=15)


@dataclass(frozen=True)
class ChainPolicy:
    reanchor_after: timedelta
    catch_up_limit: timedelta
    max_window: timedelta = MAX_WINDOW
    min_window: timedelta = MIN_WINDOW


@dataclass(frozen=True)
class KeptState:
    """What the chain knows of the newest kept state."""

    where: str
    as_of: datetime  # the table as of this time (the end of the last export it holds)
    anchored_at: datetime | None  # the full export its chain started from (None: unknown)
    table_arn: str | None


Window = tuple[datetime, datetime]


@dataclass(frozen=True)
class NightPlan:
    state: KeptState | None  # the state brought forward; None when re-anchoring
    anchor_at: datetime | None  # a full export at this time: a new chain
    windows: tuple[Window, ...]  # incremental exports, in order, from the state's time
    reason: str

    @property
    def end(self) -> datetime:
        """The time tonight's table stands at."""
        if self.anchor_at is not None:
            return self.anchor_at
        assert self.state is not None
        return self.windows[-1][1] if self.windows else self.state.as_of

    @property
    def moves(self) -> bool:
        """Whether tonight keeps a new state (a re-anchor, or at least one export)."""
        return self.anchor_at is not None or bool(self.windows)


def whole_second(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


def windows(start: datetime, end: datetime, max_window: timedelta) -> tuple[Window, ...]:
    """[start, end) cut into the fewest equal windows of at most `max_window`, whole seconds,
    each starting where the previous one ends.
    """
    seconds = int((end - start).total_seconds())
    count = max(1, math.ceil(seconds / max_window.total_seconds()))
    cuts = [start + timedelta(seconds=seconds * n // count) for n in range(count + 1)]
    return tuple(itertools.pairwise(cuts))


def plan_night(state: KeptState | None, latest: datetime, table_arn: str, policy: ChainPolicy) -> NightPlan:
    """Tonight's exports: bring `state` forward to `latest` (DynamoDB's latest restorable time),
    or re-anchor with a full export at `latest`.
    """
    latest = whole_second(latest)

    def anchor(reason: str) -> NightPlan:
        return NightPlan(None, latest, (), reason)

    if state is None:
        return anchor("no table state is kept")
    if state.table_arn and state.table_arn != table_arn:
        return anchor(f"the newest state is of {state.table_arn}, not {table_arn}")
    if state.anchored_at is None:
        return anchor("the newest state's chain was anchored at an unknown time")
    if latest - state.anchored_at >= policy.reanchor_after:
        return anchor(
            f"the chain was anchored {_days(latest - state.anchored_at)} ago: "
            f"re-anchored every {policy.reanchor_after.days} days"
        )
    if latest - state.as_of > policy.catch_up_limit:
        return anchor(
            f"the newest state is {_days(latest - state.as_of)} old, "
            f"beyond the {policy.catch_up_limit.days}-day catch-up limit"
        )
    if latest - state.as_of < policy.min_window:
        return NightPlan(state, None, (), f"the state is less than {policy.min_window} old: nothing to export yet")
    end = latest
    whole, rest = divmod(latest - state.as_of, policy.max_window)
    if whole and rest < policy.min_window:
        # A schedule a day apart ends a few seconds past whole windows: stop at them rather than
        # cut the nights in more exports (the seconds left over come with the next night).
        end = state.as_of + whole * policy.max_window
    cut = windows(state.as_of, end, policy.max_window)
    return NightPlan(state, None, cut, f"{len(cut)} incremental export(s) from the state's time")


def _days(span: timedelta) -> str:
    return f"{span.total_seconds() / 86400:.1f} days"
