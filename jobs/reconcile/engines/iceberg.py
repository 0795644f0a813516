"""The table state the Athena engine keeps: an Iceberg table in the audit database, its statements
in Trino SQL (what Athena runs; DuckDB runs them after sqlglot translates them, `sql.to_duckdb`).
Pure: no I/O.

The table holds one row per item (`pk`, `sk`, `item`: the item as the export's `item` column,
so the rules' SQL reads it unchanged) and one more row, `layout.STATE_ROW_PK`, recording when the
table stands (`as_of`: the end of the last export merged), of which table (`sk`: its ARN) and
when its chain was anchored (`anchored_at`). That row is written by the same statement as the
items (a MERGE, or the re-anchoring INSERT), and Iceberg commits a statement whole, so the time
the chain reads can never disagree with the rows: a run that dies after a merge leaves a table
that is exactly as of its recorded time, and the next night goes on from there.

- `reanchor`: every row deleted, then the full export inserted with a new state row (a run that
  dies between the two leaves no state row: the next night re-anchors again), then VACUUM, which
  expires old snapshots and removes the files only they held (monthly, with the re-anchor);
- `merge`: an incremental export merged: a key named without an image deleted, one with an
  image updated or inserted (an export holds one line per item: no row matches two);
- `items`: the relation the rules read, the state row left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from jobs.contract import layout
from jobs.sql import lit

COLUMNS = ("pk", "sk", "item", "as_of", "anchored_at")


def timestamp(moment: datetime) -> str:
    """A Trino TIMESTAMP literal of a UTC time (Iceberg's `timestamp`, without a zone)."""
    return f"TIMESTAMP {lit(layout.format_ts(moment).replace('T', ' ').rstrip('Z'))}"


@dataclass(frozen=True)
class StateTable:
    """The Iceberg table and the Glue tables over the exports it is built from."""

    database: str
    table: str  # the Iceberg table (layout.GLUE_STATE_TABLE)
    exports: str  # full exports, column `item` (layout.GLUE_EXPORT_TABLE)
    changes: str  # incremental exports, columns `keys` and `newimage` (layout.GLUE_INCREMENTAL_TABLE)

    def _name(self, table: str) -> str:
        return f'"{self.database}"."{table}"'

    @property
    def name(self) -> str:
        return self._name(self.table)

    def items(self) -> str:
        """The relation the rules read (`sql.Relations.export`): the items, not the state row."""
        return f"(SELECT item FROM {self.name} WHERE pk <> {lit(layout.STATE_ROW_PK)})"

    def state_row(self) -> str:
        """When the table stands, of which table, anchored when (no row: no state)."""
        return f"SELECT as_of, anchored_at, sk FROM {self.name} WHERE pk = {lit(layout.STATE_ROW_PK)}"

    def count(self) -> str:
        return f"SELECT count(*) FROM {self.name} WHERE pk <> {lit(layout.STATE_ROW_PK)}"

    def _state_row(self, table_arn: str, as_of: datetime, anchored_at: datetime) -> str:
        # NULL takes the item's type from the other side of the UNION (Trino and DuckDB alike).
        return (
            f"SELECT {lit(layout.STATE_ROW_PK)}, {lit(table_arn)}, NULL, {timestamp(as_of)}, {timestamp(anchored_at)}"
        )

    def reanchor(self, export_id: str, at: datetime, table_arn: str) -> list[str]:
        """Replace every row by the full export `export_id` taken at `at`, and a new state row."""
        items = (
            f"SELECT item.{layout.PK_ATTR}.S, item.{layout.SK_ATTR}.S, item, {timestamp(at)}, "
            f"CAST(NULL AS timestamp) FROM {self._name(self.exports)} WHERE export_id = {lit(export_id)}"
        )
        return [
            f"DELETE FROM {self.name}",
            f"INSERT INTO {self.name} ({', '.join(COLUMNS)})\n{items}\nUNION ALL\n{self._state_row(table_arn, at, at)}",
            # The month's snapshots and the files only they hold go (the table's own age limit).
            f"VACUUM {self.name}",
        ]

    def merge(self, export_id: str, end: datetime, table_arn: str) -> str:
        """Bring the table forward by the incremental export `export_id` ending at `end`: its items
        and the state row's time in one statement.
        """
        source = (
            f"SELECT keys.{layout.PK_ATTR}.S AS pk, keys.{layout.SK_ATTR}.S AS sk, newimage AS item, "
            f"newimage IS NOT NULL AS alive FROM {self._name(self.changes)} WHERE export_id = {lit(export_id)}\n"
            f"UNION ALL SELECT {lit(layout.STATE_ROW_PK)}, {lit(table_arn)}, NULL, true"
        )
        state_row = f"s.pk = {lit(layout.STATE_ROW_PK)}"
        return (
            f"MERGE INTO {self.name} AS t\nUSING ({source}) AS s\nON t.pk = s.pk AND t.sk = s.sk\n"
            f"WHEN MATCHED AND {state_row} THEN UPDATE SET as_of = {timestamp(end)}\n"
            "WHEN MATCHED AND NOT s.alive THEN DELETE\n"
            f"WHEN MATCHED THEN UPDATE SET item = s.item, as_of = {timestamp(end)}\n"
            f"WHEN NOT MATCHED AND s.alive AND NOT {state_row} THEN INSERT ({', '.join(COLUMNS)}) "
            f"VALUES (s.pk, s.sk, s.item, {timestamp(end)}, CAST(NULL AS timestamp))"
        )
