"""Where the audit SQL runs: DuckDB over local copies of the log, or Athena over the Glue table.

Both take the same Trino text (`jobs.audit.sql`, DuckDB after sqlglot's translation) against a
relation named for them (`relation`), and hand back rows of text, which is what Athena's
GetQueryResults returns and what the queries select.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import duckdb
import polars as pl
import pyarrow as pa

from jobs.audit.log import ChangeLog
from jobs.audit.schema import changes_schema
from jobs.contract import layout
from jobs.errors import AuditQueryError, ReconcileQueryError
from jobs.sql import lit, to_duckdb

if TYPE_CHECKING:
    from jobs.settings import JobSettings
    from jobs.store.athena import AthenaQueries
    from jobs.store.s3 import Buckets

ENGINES = ("duckdb", "athena")
Row = list[str | None]


class AuditEngine(Protocol):
    name: str
    relation: str

    def rows(self, trino_sql: str) -> list[Row]: ...


class DuckAudit:
    """The SQL on an embedded DuckDB; `changes` is a view over the files, partition column included."""

    name = "duckdb"
    relation = layout.GLUE_CHANGES_TABLE

    def __init__(self, files: list[Path]) -> None:
        self.con = duckdb.connect(config={"threads": 2})
        self.con.execute("SET TimeZone = 'UTC'").fetchall()
        partition = layout.AUDIT_PARTITION
        if files:
            listed = ", ".join(lit(str(p)) for p in files)
            source = f"read_parquet([{listed}], hive_partitioning = true, hive_types = {{'{partition}': VARCHAR}})"
        else:
            empty = changes_schema().append(pa.field(partition, pa.string())).empty_table()
            self.con.register("no_changes", empty)
            source = "no_changes"
        self.con.execute(f"CREATE VIEW {self.relation} AS SELECT * FROM {source}").fetchall()

    def register(self, name: str, table: pa.Table) -> None:
        """Another relation the SQL reads (the reconcile's items)."""
        self.con.register(name, table)

    def frame(self, trino_sql: str) -> pl.DataFrame:
        """The answer with its types (the reconcile's rule renders typed evidence)."""
        try:
            answer = pl.from_arrow(self.con.sql(to_duckdb(trino_sql)).to_arrow_table())
        except duckdb.Error as exc:
            raise AuditQueryError(f"the audit query failed on DuckDB: {exc}") from exc
        # from_arrow gives a Series only for a bare array; an Arrow table is always a DataFrame.
        if not isinstance(answer, pl.DataFrame):
            raise TypeError(f"DuckDB answered a {type(answer).__name__}, not a table")
        return answer

    def rows(self, trino_sql: str) -> list[Row]:
        try:
            result = self.con.execute(to_duckdb(trino_sql)).fetchall()
        except duckdb.Error as exc:
            raise AuditQueryError(f"the audit query failed on DuckDB: {exc}") from exc
        return [[None if v is None else str(v) for v in row] for row in result]


class AthenaAudit:
    """The SQL in the audit workgroup, over the trail database's Glue table."""

    name = "athena"

    def __init__(self, queries: AthenaQueries, database: str) -> None:
        self._queries = queries
        self.relation = f'"{database}"."{layout.GLUE_CHANGES_TABLE}"'

    def rows(self, trino_sql: str) -> list[Row]:
        # A fresh token per question: the same text asked again later must see the log as it is then.
        try:
            outcome = self._queries.run(trino_sql, uuid.uuid4().hex * 2, "audit query")
        except ReconcileQueryError as exc:  # the adapter's one error for a query that did not succeed
            raise AuditQueryError(str(exc)) from exc
        return self._queries.rows(outcome.query_id)


@contextmanager
def local_engine(buckets: Buckets, settings: JobSettings, days: tuple[date, date] | None) -> Iterator[DuckAudit]:
    """DuckDB over copies of the stage's log (the delivery days first..last, or all of it)."""
    with tempfile.TemporaryDirectory(prefix="docuflow-audit-") as tmp:
        engine = DuckAudit(ChangeLog(buckets, settings.audit.audit_bucket).stage(Path(tmp), days))
        try:
            yield engine
        finally:
            engine.con.close()
