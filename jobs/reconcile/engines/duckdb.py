"""The duckdb engine: the Athena engine's exact Trino SQL (`sql.query`), translated by sqlglot and
run on an embedded DuckDB over the export and inventory files the polars engine reads.

The files are checked exactly as the file inputs check them (manifests, sizes, MD5s, duplicate
and empty files: `inputs.export`, `inputs.inventory`), then DuckDB reads them through views shaped like the Glue tables
Athena queries: `export` (column `item`, the export's `{"Item": …}` lines) and the two inventories
(AWS's Parquet column names; CSV inventories are decoded into the same shape here, since the
stack's Athena tables are Parquet only). Files given as s3:// URIs are checked and copied to a
temporary directory first (DuckDB reads S3 itself only with its httpfs extension, which would be
a download at run time). DuckDB spills its joins to that directory, so it is also the
single-machine engine for inputs larger than memory.

What this proves and what it does not: the SQL's meaning (every rule, finding for finding, against
the polars rules), on the same bytes AWS writes. It does not exercise Athena itself, the Glue
SerDes, partition projection or IAM: only a run in AWS does.
"""

from __future__ import annotations

import logging
import tempfile
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from jobs.errors import ReconcileInputError, ReconcileQueryError
from jobs.reconcile.engines import ParamsFor, ReadResults, StopCheck, no_stop
from jobs.reconcile.inputs.datafiles import DataFile
from jobs.reconcile.inputs.export import full_export_manifest
from jobs.reconcile.inputs.inventory import InventoryManifest, field_name
from jobs.reconcile.rules import sql_rules as sql
from jobs.reconcile.rules.findings import EngineFindings
from jobs.reconcile.rules.frames import RESULTS_SCHEMA
from jobs.reconcile.rules.keys import classify_keys
from jobs.reconcile.rules.params import RuleParams

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

INVENTORY_COLUMNS = ("bucket", "key", "size", "last_modified_date", "e_tag")
_CSV_NAMES = {
    "bucket": "bucket",
    "key": "key",
    "size": "size",
    "lastmodifieddate": "last_modified_date",
    "etag": "e_tag",
}


def _frame(relation: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    frame = pl.from_arrow(relation.to_arrow_table())
    assert isinstance(frame, pl.DataFrame)  # an Arrow table converts to a frame, never a Series
    return frame


def _q(path: Path) -> str:
    return sql.lit(str(path))


class _Session:
    """One run's DuckDB: check and stage the files, create the Glue-shaped views, run the query."""

    def __init__(self, buckets: Buckets | None, workdir: Path, threads: int = 2, stop: StopCheck = no_stop) -> None:
        self._buckets = buckets
        self.stop = stop
        self._workdir = workdir
        self._batches = 0
        self.con = duckdb.connect(config={"threads": threads, "temp_directory": str(workdir / "spill")})
        self._sql("SET TimeZone = 'UTC'")
        self._sql("SET preserve_insertion_order = false")  # rows are sorted by render

    def _staged(self, files: list[DataFile]) -> list[Path]:
        """Checked local paths of `files` (s3:// ones copied down after their checks)."""
        paths = []
        self._batches += 1  # each manifest's files in their own directory: names repeat across them
        for number, entry in enumerate(files):
            self.stop("between the staged files")
            data = entry.read()
            if entry.location.path is not None:
                paths.append(entry.location.path)
                continue
            local = self._workdir / "staged" / str(self._batches) / f"{number:06d}-{Path(entry.location.key).name}"
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(data)
            paths.append(local)
        return paths

    def export_view(self, location: str, deep: bool) -> tuple[datetime, int]:
        manifest = full_export_manifest(location, self._buckets)
        files = [f for f in manifest.files if f.item_count != 0]  # an empty segment's file holds no lines
        paths = self._staged(files)
        struct = ", ".join(f'"{attr}" STRUCT("{tag}" VARCHAR)' for attr, tag in sql.export_columns(deep).items())
        if paths:
            listed = ", ".join(_q(p) for p in paths)
            source = (
                f"read_json([{listed}], format = 'newline_delimited', filename = true, "
                f"columns = {{'Item': 'STRUCT({struct})'}})"
            )
            # Parsed once into a table: the per-file counts and the query then read it, not the JSON.
            self._execute(f"CREATE TABLE export_lines AS SELECT Item AS item, filename FROM {source}", manifest.where)
            self._sql("CREATE VIEW export AS SELECT item FROM export_lines")
            per_file = dict(
                self.con.execute("SELECT filename, count(*) FROM export_lines GROUP BY filename").fetchall()
            )
            for entry, path in zip(files, paths, strict=True):
                rows = per_file.get(str(path), 0)
                if entry.item_count is not None and rows != entry.item_count:
                    raise ReconcileInputError(
                        f"{entry.location.text} holds {rows} items, the manifest says {entry.item_count}"
                    )
        else:
            self._sql(f"CREATE VIEW export AS SELECT CAST(NULL AS STRUCT({struct})) AS item WHERE false")
        count = self._count("export", manifest.where)
        if manifest.item_count is not None and manifest.item_count != count:
            raise ReconcileInputError(
                f"{manifest.where} declares {manifest.item_count} items, the data files hold {count}"
            )
        return manifest.export_time, count

    def inventory_view(self, name: str, manifest: InventoryManifest) -> tuple[datetime, str, int]:
        paths = self._staged(manifest.files)
        typed = (
            "SELECT CAST(NULL AS VARCHAR) AS bucket, CAST(NULL AS VARCHAR) AS key, CAST(NULL AS BIGINT) AS size, "
            "CAST(NULL AS TIMESTAMPTZ) AS last_modified_date, CAST(NULL AS VARCHAR) AS e_tag WHERE false"
        )
        if not paths:
            self._sql(f"CREATE VIEW {name} AS {typed}")
            return manifest.created, manifest.where, 0
        listed = ", ".join(_q(p) for p in paths)
        if manifest.fmt == "Parquet":
            source = f"read_parquet([{listed}], union_by_name = true)"
            present = {field_name(c): c for c in self._columns(source, manifest.where)}
            columns = {target: present.get(field_name(target)) for target in INVENTORY_COLUMNS}
            key = str(columns["key"])
        else:
            names = [field_name(f) for f in manifest.fields]
            spec = ", ".join(f"'{n}': 'VARCHAR'" for n in names)
            source = f"read_csv([{listed}], header = false, quote = '\"', escape = '\"', columns = {{{spec}}})"
            present = {n: n for n in names}
            columns = {_CSV_NAMES[n]: n for n in names if n in _CSV_NAMES}
            # CSV inventories URL-encode keys (form encoding: '+' is a space), Parquet ones do not.
            key = f"url_decode(replace({columns.get('key')}, '+', ' '))"
        missing = [c for c in INVENTORY_COLUMNS if not columns.get(c)]
        if missing:
            raise ReconcileInputError(f"{manifest.where} lacks inventory fields {missing}")
        # A versioned inventory lists every version; the current ones are what a listing shows.
        versions = [
            f"lower(CAST({present[flag]} AS VARCHAR)) {test}"
            for flag, test in (("islatest", "= 'true'"), ("isdeletemarker", "IS DISTINCT FROM 'true'"))
            if flag in present
        ]
        where = f"WHERE {' AND '.join(versions)}" if versions else ""
        c = columns
        self._sql(
            f"""CREATE VIEW {name} AS SELECT CAST({c["bucket"]} AS VARCHAR) AS bucket, {key} AS key,
                CAST({c["size"]} AS BIGINT) AS size,
                CAST({c["last_modified_date"]} AS TIMESTAMPTZ) AS last_modified_date,
                CAST({c["e_tag"]} AS VARCHAR) AS e_tag FROM {source} {where}"""
        )
        others = self._scalar(
            f"SELECT count(*) FROM {name} WHERE bucket IS DISTINCT FROM {sql.lit(manifest.source_bucket)}",
            manifest.where,
        )
        if others:
            raise ReconcileInputError(
                f"{manifest.where}: {others} rows name a bucket other than sourceBucket {manifest.source_bucket!r}"
            )
        return manifest.created, manifest.where, self._count(name, manifest.where)

    def results_table(self, processed_view: str, read: ReadResults) -> None:
        """--deep: GET the result.json files the inventory lists (the one Python reader)."""
        keys = _frame(self.con.sql(f"SELECT key FROM {processed_view}")).lazy()
        valid = classify_keys(keys, "result")
        listed = valid.filter(~pl.col("badKey")).select("key").collect().get_column("key").sort().to_list()
        results = read(listed) if listed else pl.DataFrame(schema=RESULTS_SCHEMA)
        self.con.register("results_frame", results.to_arrow())
        self._sql("CREATE VIEW results AS SELECT * FROM results_frame")

    def run(self, params: RuleParams, deep: bool) -> pl.DataFrame:
        relations = sql.Relations("export", "raw_inventory", "processed_inventory", "results" if deep else None)
        text = sql.to_duckdb(sql.query(relations, params))
        try:
            return _frame(self.con.sql(text))
        except duckdb.Error as exc:
            raise ReconcileQueryError(f"the reconcile query failed on DuckDB: {exc}") from exc

    def _columns(self, source: str, where: str) -> list[str]:
        try:
            return [row[0] for row in self.con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
        except duckdb.Error as exc:
            raise ReconcileInputError(f"{where}: the data files cannot be read: {exc}") from exc

    def _sql(self, statement: str) -> None:
        """A statement whose result is consumed (DuckDB keeps a connection busy until it is)."""
        self.con.execute(statement).fetchall()

    def _execute(self, statement: str, where: str) -> None:
        try:
            self._sql(statement)
        except duckdb.Error as exc:
            raise ReconcileInputError(f"{where}: the data files cannot be read: {exc}") from exc

    def _scalar(self, query: str, where: str) -> int:
        try:
            rows = self.con.execute(query).fetchall()
        except duckdb.Error as exc:
            raise ReconcileInputError(f"{where}: the data files cannot be read: {exc}") from exc
        return int(rows[0][0]) if rows else 0

    def _count(self, view: str, where: str) -> int:
        return self._scalar(f"SELECT count(*) FROM {view}", where)

    def close(self) -> None:
        self.con.close()


class DuckdbEngine:
    """The whole duckdb run over the files (read_results: --deep's GETs, None without --deep)."""

    def __init__(
        self,
        export: str,
        raw_inventory: InventoryManifest,
        processed_inventory: InventoryManifest,
        buckets: Buckets | None,
        read_results: ReadResults | None = None,
        threads: int = 2,
    ) -> None:
        self.export = export
        self.inventories = {"raw": raw_inventory, "processed": processed_inventory}
        self.buckets = buckets
        self.read_results = read_results
        self.threads = threads

    def find(self, params_for: ParamsFor, stop: StopCheck = no_stop) -> EngineFindings:
        deep = self.read_results is not None
        with tempfile.TemporaryDirectory(prefix="docuflow-duckdb-") as tmp:
            session = _Session(self.buckets, Path(tmp), self.threads, stop)
            try:
                export_time, items = session.export_view(self.export, deep)
                result = EngineFindings(
                    pl.DataFrame(),
                    taken_at={"table": export_time},
                    inputs={"table": self.export},
                    sizes={"table": items},
                )
                for name, manifest in self.inventories.items():
                    created, where, rows = session.inventory_view(f"{name}_inventory", manifest)
                    result.taken_at[name], result.inputs[name], result.sizes[name] = created, where, rows
                if self.read_results is not None:
                    stop("before --deep's reads")
                    session.results_table("processed_inventory", self.read_results)
                stop("before the query")
                result.wide = session.run(params_for(min(result.taken_at.values())), deep)
            finally:
                session.close()
        return result
