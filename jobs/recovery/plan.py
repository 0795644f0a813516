"""What a restore restores from, decided before anything is created (pure: no AWS SDK).

A drill restores the table as of a time (`as_of`; None: the newest it can) into a new drill table:
- `pitr`: any second of the table's PITR window, to the second asked for;
- `backup`: the newest completed AWS Backup recovery point taken at or before that time;
- `export`: the newest full DYNAMODB_JSON export of this table taken at or before that time (the
  local stack's only way, and on AWS the Athena engine's nightly exports).
Every refusal is a RestoreRequestError with one line saying what to change; the caller has
created nothing yet.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol, TypeVar

from jobs.contract import layout
from jobs.errors import RestoreRequestError

# DynamoDB table names: 3-255 of letters, digits, underscore, dot and dash.
_TABLE_NAME = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")
T = TypeVar("T")


class Source(StrEnum):
    PITR = "pitr"
    BACKUP = "backup"
    EXPORT = "export"


class Export(Protocol):
    """What the choice needs of an export (jobs.reconcile.inputs.export.ExportManifest has it)."""

    @property
    def where(self) -> str: ...
    @property
    def export_time(self) -> datetime: ...
    @property
    def incremental(self) -> bool: ...
    @property
    def table_arn(self) -> str | None: ...


class Point(Protocol):
    """What the choice needs of a recovery point (jobs.store.restore.RecoveryPoint has it)."""

    @property
    def created(self) -> datetime: ...
    @property
    def completed(self) -> bool: ...


E = TypeVar("E", bound=Export)
P = TypeVar("P", bound=Point)


@dataclass(frozen=True)
class RestorePlan:
    source: Source
    target: str
    restore_point: datetime  # the moment the restored items are as of
    reference: str  # the source table, the recovery point's ARN, or the export's location


def check_target(target: str, stage: str, live_table: str) -> None:
    """A drill writes a new drill table and nothing else: never the live table, never another."""
    if target == live_table:
        raise RestoreRequestError(f"--target-table {target} is the live table: a drill restores into a new table")
    prefix = layout.drill_table_prefix(stage)
    if not target.startswith(prefix) or not _TABLE_NAME.match(target):
        raise RestoreRequestError(
            f"--target-table {target!r} is not a drill table name: give {prefix}<name> (letters, digits, _ . -)"
        )


def check_as_of(as_of: datetime | None, now: datetime) -> None:
    if as_of is not None and as_of > now:
        raise RestoreRequestError(f"--as-of {layout.format_ts(as_of)} is in the future (now {layout.format_ts(now)})")


def pitr_time(as_of: datetime | None, earliest: datetime, latest: datetime) -> datetime:
    """The second PITR restores to: `as_of`, or the latest restorable when none is asked."""
    if as_of is None:
        return latest
    if not earliest <= as_of <= latest:
        raise RestoreRequestError(
            f"--as-of {layout.format_ts(as_of)} is outside the PITR window "
            f"{layout.format_ts(earliest)} .. {layout.format_ts(latest)}: give a time inside it, or --source backup"
        )
    return as_of


def newest_at_or_before(candidates: Iterable[T], when: Callable[[T], datetime], as_of: datetime | None) -> T | None:
    eligible = [c for c in candidates if as_of is None or when(c) <= as_of]
    return max(eligible, key=when, default=None)


def choose_export(exports: Iterable[E], as_of: datetime | None, table_name: str, where: str) -> E:
    """The newest full export of `table_name` at or before `as_of`."""
    ours = [e for e in exports if not e.incremental and (e.table_arn or "").endswith(f"/{table_name}")]
    chosen = newest_at_or_before(ours, lambda e: e.export_time, as_of)
    if chosen is not None:
        return chosen
    if not ours:
        raise RestoreRequestError(f"no full export of {table_name} under {where}: nothing to restore from")
    oldest = min(e.export_time for e in ours)
    raise RestoreRequestError(
        f"no export of {table_name} at or before --as-of {layout.format_ts(as_of or oldest)} "
        f"under {where} (the oldest is {layout.format_ts(oldest)})"
    )


def choose_point(points: Iterable[P], as_of: datetime | None, table_name: str) -> P:
    """The newest completed recovery point at or before `as_of`."""
    done = [p for p in points if p.completed]
    chosen = newest_at_or_before(done, lambda p: p.created, as_of)
    if chosen is not None:
        return chosen
    if not done:
        raise RestoreRequestError(f"no completed AWS Backup recovery point of {table_name}: nothing to restore from")
    oldest = min(p.created for p in done)
    raise RestoreRequestError(
        f"no recovery point of {table_name} at or before --as-of {layout.format_ts(as_of or oldest)} "
        f"(the oldest is {layout.format_ts(oldest)})"
    )


def in_window(moments: Iterable[T], when: Callable[[T], datetime], since: datetime, until: datetime | None) -> list[T]:
    """What happened from `since` to `until` (now when None): the delete markers an undelete removes."""
    if until is not None and until < since:
        raise RestoreRequestError(f"--until {layout.format_ts(until)} is before --since {layout.format_ts(since)}")
    return [m for m in moments if when(m) >= since and (until is None or when(m) <= until)]
