"""The Athena engine's nightly table: the Iceberg table in the audit database (`iceberg`), brought
forward by tonight's incremental exports with MERGE INTO, or re-anchored from a full export.

The chain's decisions are the polars engine's (`nightly.plan_tonight`, `nightly.night_exports`);
only the state differs: its time is the table's own state row, read with the table and written
by the same statement as its rows. Each incremental export's manifest is checked to start
exactly where the table stands before it is merged (a gap or an overlap is refused, exit 2), and
the exports are merged in order. What the rules then read is the table (`TableRead.relation`).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from jobs.reconcile.chain.exports import KeptState
from jobs.reconcile.engines.iceberg import StateTable
from jobs.reconcile.inputs.export import export_manifest
from jobs.reconcile.inputs.table_state import check_follows
from jobs.reconcile.nightly import night_exports, plan_tonight

if TYPE_CHECKING:
    from jobs.settings import JobSettings
    from jobs.store.athena import AthenaQueries, QueryOutcome
    from jobs.store.s3 import Buckets
    from jobs.store.table_export import TableExports

logger = logging.getLogger(__name__)


def token(run_id: str, what: str) -> str:
    """An Athena ClientRequestToken for one of the run's queries (a retried task repeats it)."""
    return hashlib.sha256(f"{run_id}/{what}".encode()).hexdigest()[:64]


def export_id(location: str) -> str:
    """`s3://…/AWSDynamoDB/<export id>/` → the export id (the Glue tables' `export_id`)."""
    return location.rstrip("/").rsplit("/", 1)[-1]


@dataclass
class TableRead:
    """The table the rules' query reads, as of when, with the queries it took to get there."""

    relation: str
    taken_at: datetime
    where: str
    item_count: int | None
    queries: list[QueryOutcome] = field(default_factory=list)
    night: dict[str, object] | None = None


def _athena_time(text: str | None) -> datetime | None:
    """A timestamp as Athena returns it (`2026-11-30 04:55:07.000`), read as UTC."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC) if text else None


class IcebergNight:
    def __init__(
        self,
        settings: JobSettings,
        buckets: Buckets,
        queries: AthenaQueries,
        exports: TableExports,
        run_id: str,
    ) -> None:
        self.settings, self.buckets, self.queries, self.exports, self.run_id = (
            settings,
            buckets,
            queries,
            exports,
            run_id,
        )
        s = settings
        self.table = StateTable(
            s.reconcile.glue_database,
            s.reconcile.glue_state_table,
            s.reconcile.glue_export_table,
            s.reconcile.glue_incremental_table,
        )
        self.ran: list[QueryOutcome] = []

    def _run(self, statement: str, what: str) -> QueryOutcome:
        outcome = self.queries.run(statement, token(self.run_id, what), what)
        self.ran.append(outcome)
        return outcome

    def kept(self) -> KeptState | None:
        """The table's state row: when it stands, of which table, anchored when (None: no state)."""
        rows = self.queries.rows(self._run(self.table.state_row(), "table state").query_id)
        if not rows or rows[0][0] is None:
            return None
        as_of, anchored_at, table_arn = rows[0]
        kept_at = _athena_time(as_of)
        assert kept_at is not None
        return KeptState(self.table.name, kept_at, _athena_time(anchored_at), table_arn)

    def bring_forward(self) -> TableRead:
        """Tonight's table: re-anchored from a full export, or merged with tonight's exports."""
        s = self.settings
        state = self.kept()
        plan = plan_tonight(self.exports, s, state)
        got = night_exports(self.exports, s, plan)
        if got.anchor is not None:
            assert plan.anchor_at is not None
            for number, statement in enumerate(
                self.table.reanchor(export_id(got.anchor), plan.anchor_at, s.store.table_arn)
            ):
                self._run(statement, f"re-anchor {export_id(got.anchor)} {number}")
        table_at = plan.state.as_of if plan.state else plan.end
        for location in got.changes:
            changes = export_manifest(location, self.buckets)
            check_follows(changes, table_at, s.store.table_arn, self.table.name)
            self._run(
                self.table.merge(export_id(location), changes.export_time, s.store.table_arn),
                f"merge {export_id(location)}",
            )
            table_at = changes.export_time
        counted = self.queries.rows(self._run(self.table.count(), "table count").query_id)
        night: dict[str, object] = {
            "reason": plan.reason,
            "anchor": got.anchor,
            "changes": list(got.changes),
            "tableAsOf": table_at.isoformat(),
            "tableState": self.table.name,
        }
        logger.info("iceberg table brought forward", extra=night)
        return TableRead(self.table.items(), table_at, self.table.name, int(counted[0][0] or 0), self.ran, night)
