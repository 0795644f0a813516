"""The period of an EventBridge Scheduler expression: the most days between two days it fires on.

An alarm on a job that runs less often than CloudWatch can watch (a window is at most 7 days: the
quarterly restore drill) judges a figure published nightly against the schedule's own period, so
the bound follows the schedule a stack declares instead of a second number beside it. Pure.

`cron(minutes hours day-of-month month day-of-week year)` as EventBridge reads it: `*`, `?`,
lists, ranges and steps, month and day names (`JAN`, `SUN`; day-of-week 1 is Sunday), `L` and `W`
in the day of the month, `L` and `#` in the day of the week. The firing days are counted over
eight whole years (two leap years, every weekday of every date), a day at a time: the gap between
days bounds the gap between firings whatever their hours (the last firing of one day is no later
than its day's end, the first of the next no earlier than its start). The year field is ignored:
a schedule whose years run out stops firing, which is what an alarm on its period is there to see.
"""

from __future__ import annotations

import calendar
import functools
import itertools
import math
import re
from collections.abc import Callable
from datetime import date, timedelta

_CRON = re.compile(r"^cron\((\S+) (\S+) (\S+) (\S+) (\S+)(?: (\S+))?\)$")
_RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_MONTHS = {name: i + 1 for i, name in enumerate(calendar.month_abbr[1:])}
_DAYS = {name: i + 1 for i, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))}
# 2024-2031: two leap years, and every date falls on every weekday at least once.
_FIRST, _YEARS = date(2024, 1, 1), 8
DayTest = Callable[[date], bool]


def _number(text: str, names: dict[str, int]) -> int:
    return names[text.upper()] if text.upper() in names else int(text)


def _values(field: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    """The values a numeric field names: `*`, `?`, `a`, `a-b`, `a/s`, `a-b/s`, `*/s`, comma-joined."""
    found: set[int] = set()
    for part in field.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span in ("*", "?"):
            first, last = low, high
        elif "-" in span:
            first, last = (_number(x, names) for x in span.split("-", 1))
        else:
            first = _number(span, names)
            last = high if step_text else first
        if not (low <= first <= high and low <= last <= high) or step < 1:
            raise ValueError(f"{part!r} is outside {low}-{high}")
        found.update(range(first, last + 1, step))
    return frozenset(found)


def _weekday(day: date) -> int:
    """EventBridge's day of the week: 1 is Sunday, 7 Saturday."""
    return (day.weekday() + 1) % 7 + 1


def _nearest_weekday(day: date) -> date:
    """`nW`: the weekday nearest `day` within its month (Saturday → Friday, Sunday → Monday)."""
    last = calendar.monthrange(day.year, day.month)[1]
    if day.weekday() == 5:
        return day - timedelta(days=1) if day.day > 1 else day + timedelta(days=2)
    if day.weekday() == 6:
        return day + timedelta(days=1) if day.day < last else day - timedelta(days=2)
    return day


def _last(day: date) -> int:
    return calendar.monthrange(day.year, day.month)[1]


def _day_of_month(field: str) -> DayTest:
    last = _last
    if field == "L":
        return lambda d: d.day == last(d)
    if field == "LW":
        return lambda d: d == _nearest_weekday(d.replace(day=last(d)))
    if field.endswith("W"):
        wanted = int(field[:-1])
        return lambda d: wanted <= last(d) and d == _nearest_weekday(d.replace(day=wanted))
    days = _values(field, 1, 31, {})
    return lambda d: d.day in days


def _day_of_week(field: str) -> DayTest:
    if "#" in field:
        weekday, nth = field.split("#", 1)
        wanted, n = _number(weekday, _DAYS), int(nth)
        return lambda d: _weekday(d) == wanted and (d.day - 1) // 7 + 1 == n
    if field.endswith("L") and field != "L":
        wanted = _number(field[:-1], _DAYS)
        return lambda d: _weekday(d) == wanted and d.day + 7 > calendar.monthrange(d.year, d.month)[1]
    days = _values(field, 1, 7, _DAYS)
    return lambda d: _weekday(d) in days


def _fires_on(expression: str) -> DayTest:
    match = _CRON.match(expression)
    if not match:
        raise ValueError(f"{expression!r} is not an EventBridge cron(m h dom mon dow y) or rate() expression")
    _, _, dom, month, dow, _ = match.groups()
    if (dom == "?") == (dow == "?"):
        raise ValueError(f"{expression!r}: exactly one of day-of-month and day-of-week must be '?'")
    months = _values(month, 1, 12, {k.upper(): v for k, v in _MONTHS.items()})
    day = _day_of_week(dow) if dom == "?" else _day_of_month(dom)
    return lambda d: d.month in months and day(d)


@functools.cache
def longest_gap_days(expression: str) -> int:
    """The most days between two consecutive days `expression` fires on (a rate: its interval,
    in whole days, at least one). ValueError: not an expression, or one that never fires.
    """
    rate = _RATE.match(expression)
    if rate:
        amount, unit = int(rate.group(1)), rate.group(2).rstrip("s")
        return max(1, math.ceil(amount * {"minute": 60, "hour": 3600, "day": 86_400}[unit] / 86_400))
    fires = _fires_on(expression)
    end = date(_FIRST.year + _YEARS, 1, 1)
    days = [_FIRST + timedelta(days=i) for i in range((end - _FIRST).days)]
    firing = [d for d in days if fires(d)]
    if not firing:
        raise ValueError(f"{expression!r} never fires")
    # The gap across the ends of the span: from the last day to the first a cycle later.
    wrap = (firing[0] + (end - _FIRST)) - firing[-1]
    gaps = [(b - a).days for a, b in itertools.pairwise(firing)]
    return max([*gaps, wrap.days])
