"""The CLI style every job shares: modes and actions are argparse subcommands
(`ingest drain|backfill|redrive`), values parse with these types, and an old flag spelling of a
mode keeps working for one release with a deprecation line on stderr.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
HELP = ("-h", "--help")


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


def with_mode(
    argv: Sequence[str], prog: str, modes: Sequence[str], default: str, old_flags: Mapping[str, str]
) -> list[str]:
    """`argv` with its mode first. The old spellings (`old_flags`: a flag → the mode it named, and
    no mode at all → `default`) are rewritten, each with one deprecation line on stderr.
    """
    args = list(argv)
    if args[:1] and (args[0] in modes or args[0] in HELP):
        return args
    for flag, mode in old_flags.items():
        if flag in args:
            args.remove(flag)
            deprecated(f"{prog} {flag}", f"{prog} {mode}")
            return [mode, *args]
    deprecated(f"{prog} without a mode", f"{prog} {default}")
    return [default, *args]


def deprecated(old: str, new: str) -> None:
    print(f"deprecated: {old} is `{new}` now; the old spelling goes in the next release", file=sys.stderr)
