"""The CLI style every job shares: modes and actions are argparse subcommands
(`ingest drain|backfill|redrive`), and values parse with these types (a bad one is argparse's
one-line refusal, exit 2).
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def duration(text: str) -> timedelta:
    """`90s`, `15m`, `6h`, `2d`."""
    match = _DURATION.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 30s, 15m, 6h or 2d")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


def point_in_time(text: str) -> datetime:
    """ISO-8601 with a time zone (`2026-11-30T02:00:00Z`, `…+01:00`), as UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO-8601 time like 2026-11-30T02:00:00Z") from exc
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone: add Z or an offset")
    return moment.astimezone(UTC)
