"""The nightly chain's decisions (pure): bring the state forward, catch up, or re-anchor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs.reconcile.chain.exports import ChainPolicy, KeptState, plan_night, windows

TABLE = "arn:aws:dynamodb:eu-central-1:1:table/t"
NIGHT = datetime(2026, 11, 30, 4, 55, 7, 123456, tzinfo=UTC)
POLICY = ChainPolicy(reanchor_after=timedelta(days=30), catch_up_limit=timedelta(days=7))
DAY, MINUTE = timedelta(days=1), timedelta(minutes=1)


def _state(as_of: datetime, anchored: datetime | None = NIGHT - 10 * DAY, table: str | None = TABLE) -> KeptState:
    return KeptState("s3://b/table-state/polars/x", as_of, anchored, table)


def test_a_night_brings_the_state_forward_from_exactly_its_time() -> None:
    state = _state(NIGHT.replace(microsecond=0) - DAY + 3 * MINUTE)
    plan = plan_night(state, NIGHT - 2 * MINUTE, TABLE, POLICY)
    assert plan.anchor_at is None and plan.state == state
    assert plan.windows == ((state.as_of, NIGHT.replace(microsecond=0) - 2 * MINUTE),)
    assert plan.end == plan.windows[-1][1] and plan.end.microsecond == 0  # whole seconds, as the API counts


def test_missed_nights_are_chained_in_windows_of_at_most_a_day() -> None:
    state = _state(NIGHT.replace(microsecond=0) - 3 * DAY - 6 * timedelta(hours=1))
    plan = plan_night(state, NIGHT, TABLE, POLICY)
    assert len(plan.windows) == 4
    assert plan.windows[0][0] == state.as_of and plan.windows[-1][1] == NIGHT.replace(microsecond=0)
    for (_, end), (start, _) in zip(plan.windows, plan.windows[1:], strict=False):
        assert end == start  # no gap, no overlap
    assert all(POLICY.min_window <= b - a <= POLICY.max_window for a, b in plan.windows)


@pytest.mark.parametrize("late", [timedelta(seconds=4), 14 * MINUTE])
def test_a_schedule_a_day_apart_does_not_cut_the_night_in_two(late: timedelta) -> None:
    """A night ends a little past whole days: the state stops at whole windows, the rest waits."""
    state = _state(NIGHT.replace(microsecond=0) - 2 * DAY)
    plan = plan_night(state, NIGHT + late, TABLE, POLICY)
    assert plan.windows == ((state.as_of, state.as_of + DAY), (state.as_of + DAY, state.as_of + 2 * DAY))


def test_windows_are_equal_whole_seconds() -> None:
    start = NIGHT.replace(microsecond=0)
    cut = windows(start, start + timedelta(hours=30, seconds=1), DAY)
    assert [b - a for a, b in cut] == [timedelta(hours=15), timedelta(hours=15, seconds=1)]


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        (None, "no table state is kept"),
        (_state(NIGHT - DAY, table=TABLE + "2"), "of " + TABLE + "2"),
        (_state(NIGHT - DAY, anchored=NIGHT.replace(microsecond=0) - 30 * DAY), "re-anchored every 30 days"),
        (_state(NIGHT - DAY, anchored=None), "anchored at an unknown time"),
        (_state(NIGHT - 8 * DAY), "beyond the 7-day catch-up limit"),
    ],
)
def test_a_night_re_anchors_with_a_full_export(state: KeptState | None, reason: str) -> None:
    plan = plan_night(state, NIGHT, TABLE, POLICY)
    assert plan.anchor_at == NIGHT.replace(microsecond=0) and plan.windows == () and plan.state is None
    assert reason in plan.reason and plan.moves


def test_a_state_younger_than_the_shortest_window_is_judged_as_it_is() -> None:
    state = _state(NIGHT - 10 * MINUTE)
    plan = plan_night(state, NIGHT, TABLE, POLICY)
    assert (plan.anchor_at, plan.windows, plan.moves, plan.end) == (None, (), False, state.as_of)
