"""The nightly schedules read as times: how long the drain may run before the reconcile starts.

EventBridge Scheduler runs the ingest and the reconcile on `cron(m h dom mon dow year)` in the
stack's time zone. The drain must have stopped taking work when the reconcile judges the night
(issue 34), so its time bound is derived from the two expressions: over a year of nights, the
shortest time from an ingest start to the next reconcile start, less a margin for the drain to
hand back its claims, publish its metrics and exit. A year, because the shortest night is the
one a daylight-saving change takes an hour from (01:00 → 05:00 Europe/Berlin is 3 hours on the
last Sunday of March). A start at a wall-clock time the change skips (02:30 that night in Berlin
or New York) is refused: EventBridge Scheduler skips such an invocation, so that night would have
no drain (or no reconcile) at all. Pure: no clock is read here, the caller names the first day.

Understood: numbers, `*`, `?`, lists, ranges, steps and month and weekday names (weekdays 1-7,
SUN = 1, as EventBridge counts them). `L`, `W` and `#` are refused: a nightly job has no use
for them, and a bound computed from a guess would be worse than none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

# Time the drain keeps after its bound: a task's start (Fargate provisioning), the hand-back of
# its claims and messages, the metrics and the exit.
DRAIN_MARGIN_MINUTES = 15
# A drain shorter than this is no night's work: the stack refuses such schedules.
MIN_DRAIN_MINUTES = 30
# A year of nights holds every daylight-saving change and every monthly or weekday pattern.
HORIZON_DAYS = 400

_MONTH_NAMES = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES, start=1)}
_WEEKDAYS = {d: i for i, d in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"], start=1)}
_CRON = re.compile(r"^cron\((\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\)$")
# Each field's range and its names: minutes, hours, day of month, month, day of week, year.
_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, _MONTHS),
    (1, 7, _WEEKDAYS),
    (1970, 2199, {}),
)


class ScheduleError(ValueError):
    """A cron expression this module cannot read, or schedules that leave no drain."""


@dataclass(frozen=True)
class Cron:
    """A parsed `cron(...)`: the values each field allows (None: `?`, any day)."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int] | None
    months: frozenset[int] | None
    weekdays: frozenset[int] | None  # 1 = Sunday
    years: frozenset[int] | None

    @classmethod
    def parse(cls, expression: str) -> Cron:
        match = _CRON.match(expression)
        if not match:
            raise ScheduleError(f"{expression!r} is not cron(m h dom mon dow year)")
        fields = [_field(text, *spec, expression) for text, spec in zip(match.groups(), _FIELDS, strict=True)]
        minutes, hours = fields[0], fields[1]
        if minutes is None or hours is None:
            raise ScheduleError(f"{expression!r}: minutes and hours cannot be '?'")
        if (fields[2] is None) == (fields[4] is None):
            raise ScheduleError(f"{expression!r}: one of day-of-month and day-of-week must be '?', not both or neither")
        return cls(minutes, hours, fields[2], fields[3], fields[4], fields[5])

    def runs_on(self, day: date) -> bool:
        weekday = day.isoweekday() % 7 + 1  # ISO Monday = 1 … Sunday = 7 → Sunday = 1
        return all(
            allowed is None or value in allowed
            for allowed, value in (
                (self.days, day.day),
                (self.months, day.month),
                (self.weekdays, weekday),
                (self.years, day.year),
            )
        )

    def starts(self, first: date, days: int, zone: ZoneInfo) -> Iterator[datetime]:
        """Every start from `first` on for `days` days, as aware times in `zone`, in order."""
        for offset in range(days):
            day = first + timedelta(days=offset)
            if self.runs_on(day):
                for hour in sorted(self.hours):
                    for minute in sorted(self.minutes):
                        yield datetime.combine(day, time(hour, minute), tzinfo=zone)


def _field(text: str, low: int, high: int, names: dict[str, int], expression: str) -> frozenset[int] | None:
    if text == "?":
        return None
    values: set[int] = set()
    for part in text.split(","):
        values |= _part(part.upper(), low, high, names, expression)
    return frozenset(values)


def _part(part: str, low: int, high: int, names: dict[str, int], expression: str) -> set[int]:
    span, _, step_text = part.partition("/")
    try:
        step = int(step_text) if step_text else 1
        if span == "*":
            first, last = low, high
        elif "-" in span:
            a, b = span.split("-", 1)
            first, last = _value(a, names), _value(b, names)
        else:
            first = _value(span, names)
            last = high if step_text else first
    except ValueError as exc:
        raise ScheduleError(f"{expression!r}: cannot read {part!r} (L, W and # are not read here)") from exc
    if not low <= first <= last <= high or step < 1:
        raise ScheduleError(f"{expression!r}: {part!r} is outside {low}-{high}")
    return set(range(first, last + 1, step))


def _value(text: str, names: dict[str, int]) -> int:
    return names[text] if text in names else int(text)


def window_minutes(first: str, then: str, timezone: str, day: date) -> int:
    """The shortest time, in whole minutes, from a start of `first` to the next start of `then`
    (one at the same minute collides: 0), over the year of nights from `day`.
    """
    zone = ZoneInfo(timezone)
    starts = _existing(first, Cron.parse(first).starts(day, HORIZON_DAYS, zone))
    # A start a week past the horizon still follows the horizon's last one.
    nexts = _existing(then, Cron.parse(then).starts(day, HORIZON_DAYS + 8, zone))
    if not starts:
        raise ScheduleError(f"{first!r} never runs in the {HORIZON_DAYS} days from {day}")
    gaps: list[timedelta] = []
    following = iter(nexts)
    upcoming = next(following, None)
    for start in starts:
        # Elapsed time, not wall-clock time: compared in UTC across a daylight-saving change.
        while upcoming is not None and _utc(upcoming) < _utc(start):
            upcoming = next(following, None)
        if upcoming is None:
            raise ScheduleError(f"{then!r} does not run after the start at {start.isoformat()} of {first!r}")
        gaps.append(_utc(upcoming) - _utc(start))
    return int(min(gaps).total_seconds() // 60)


def drain_minutes(ingest: str, reconcile: str, timezone: str, first: date) -> int:
    """The minutes a drain started by `ingest` may take so that it has stopped, with the margin,
    before `reconcile` next starts, on every night of the year from `first` (negative: never).
    """
    return window_minutes(ingest, reconcile, timezone, first) - DRAIN_MARGIN_MINUTES


def _existing(expression: str, starts: Iterator[datetime]) -> list[datetime]:
    """The starts, refusing one at a wall-clock time its zone skips that night (spring forward)."""
    kept = []
    for start in starts:
        if _utc(start).astimezone(start.tzinfo).replace(tzinfo=None) != start.replace(tzinfo=None):
            raise ScheduleError(
                f"{expression!r} starts at {start:%H:%M} on {start:%Y-%m-%d}, a time {start.tzinfo} skips "
                "(the clocks go forward): EventBridge Scheduler skips that run, so choose a time outside "
                "the change (e.g. 01:00 or 03:00)"
            )
        kept.append(start)
    return kept


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(ZoneInfo("UTC"))
