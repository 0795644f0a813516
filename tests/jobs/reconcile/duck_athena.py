"""Athena played by DuckDB for the nightly chain, against the local stack's S3.

Executes what the athena engine sends (the Trino SQL translated by sqlglot, `sql.to_duckdb`):
the Glue tables are DuckDB views over the files the local S3 holds, as the stack's tables
declare them (full exports and incremental exports by `export_id`, the inventories by `dt`:
each met in a query is downloaded once and the views rebuilt over every one met so far), and the
Iceberg table is a plain DuckDB table of the same columns (DuckDB's Iceberg support writes no
MERGE; the statements are the ones Athena gets). UNLOAD writes Parquet where it says; VACUUM
(Iceberg housekeeping) has nothing to do here.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from jobs.reconcile.rules import sql_rules as sql
from jobs.settings import JobSettings
from jobs.store.athena import QueryOutcome

_EXPORT_ID = re.compile(r"export_id = '([^']+)'")
_DT = re.compile(r"dt = '([^']+)'")


def _struct(fields: dict[str, str]) -> str:
    return "STRUCT(" + ", ".join(f'"{name}" {kind}' for name, kind in fields.items()) + ")"


ITEM = _struct({attribute: _struct({tag: "VARCHAR"}) for attribute, tag in sql.export_columns(False).items()})
KEYS = _struct({"PK": _struct({"S": "VARCHAR"}), "SK": _struct({"S": "VARCHAR"})})


class DuckAthenaChain:
    def __init__(self, stack: Any, settings: JobSettings) -> None:
        self.stack, self.s = stack, settings
        self.tmp = Path(tempfile.mkdtemp(prefix="duck-athena-"))
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone = 'UTC'")
        self.con.execute(f'CREATE SCHEMA "{settings.reconcile.glue_database}"')
        self.con.execute(
            f'CREATE TABLE "{settings.reconcile.glue_database}"."{settings.reconcile.glue_state_table}" '
            f"(pk VARCHAR, sk VARCHAR, item {ITEM}, as_of TIMESTAMP, anchored_at TIMESTAMP)"
        )
        self.full: dict[str, list[Path]] = {}
        self.changes: dict[str, list[Path]] = {}
        self.dts: dict[str, dict[str, list[Path]]] = {"raw": {}, "processed": {}}
        self.results: dict[str, list[list[str | None]]] = {}
        self.sent: list[str] = []

    # --- the Glue tables ----------------------------------------------------------------------
    def _download(self, bucket: str, key: str) -> Path:
        path = self.tmp / bucket / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.stack.s3().get_object(Bucket=bucket, Key=key)["Body"].read())
        return path

    def _export(self, export_id: str) -> None:
        s = self.s
        base = f"{s.reconcile.export_prefix}AWSDynamoDB/{export_id}/"
        summary = json.loads(self._download(s.reconcile.export_bucket, base + "manifest-summary.json").read_text())
        entries = self._download(s.reconcile.export_bucket, summary["manifestFilesS3Key"]).read_text().splitlines()
        files = [
            self._download(s.reconcile.export_bucket, json.loads(e)["dataFileS3Key"]) for e in entries if e.strip()
        ]
        files = [f for f in files if gzip.decompress(f.read_bytes()).strip()]  # read_json refuses empty files
        (self.changes if summary.get("exportType") == "INCREMENTAL_EXPORT" else self.full)[export_id] = files

    def _inventory(self, dt: str) -> None:
        s = self.s
        for kind, bucket in (("raw", s.store.raw_bucket), ("processed", s.store.processed_bucket)):
            link = f"{s.reconcile.inventory_prefix}{bucket}/{s.reconcile.inventory_config_id}/hive/dt={dt}/symlink.txt"
            uris = self._download(s.reconcile.inventory_bucket, link).read_text().split()
            self.dts[kind][dt] = [self._download(*uri[5:].split("/", 1)) for uri in uris]

    def _views(self) -> None:
        db = f'"{self.s.reconcile.glue_database}"'

        def union(parts: list[str], empty: str) -> str:
            return " UNION ALL ".join(parts) if parts else empty

        full = [
            f"SELECT Item AS item, '{i}' AS export_id FROM read_json({[str(f) for f in files]}, "
            f"format = 'newline_delimited', columns = {{'Item': '{ITEM}'}})"
            for i, files in self.full.items()
            if files
        ]
        changes = [
            f"SELECT Keys AS keys, NewImage AS newimage, '{i}' AS export_id FROM read_json({[str(f) for f in files]}, "
            f"format = 'newline_delimited', columns = {{'Keys': '{KEYS}', 'NewImage': '{ITEM}'}})"
            for i, files in self.changes.items()
            if files
        ]
        none_full = f"SELECT NULL::{ITEM} AS item, '' AS export_id WHERE false"
        none_changes = f"SELECT NULL::{KEYS} AS keys, NULL::{ITEM} AS newimage, '' AS export_id WHERE false"
        self.con.execute(
            f'CREATE OR REPLACE VIEW {db}."{self.s.reconcile.glue_export_table}" AS {union(full, none_full)}'
        )
        self.con.execute(
            f'CREATE OR REPLACE VIEW {db}."{self.s.reconcile.glue_incremental_table}" AS {union(changes, none_changes)}'
        )
        for kind, table in (
            ("raw", self.s.reconcile.glue_raw_inventory_table),
            ("processed", self.s.reconcile.glue_processed_inventory_table),
        ):
            parts = [
                f"SELECT *, '{dt}' AS dt FROM read_parquet({[str(f) for f in files]})"
                for dt, files in self.dts[kind].items()
            ]
            if parts:
                self.con.execute(f'CREATE OR REPLACE VIEW {db}."{table}" AS {" UNION ALL ".join(parts)}')

    def _prepare(self, text: str) -> None:
        new_exports = [i for i in _EXPORT_ID.findall(text) if i not in self.full and i not in self.changes]
        new_dts = [d for d in _DT.findall(text) if d not in self.dts["raw"]]
        for export_id in new_exports:
            self._export(export_id)
        for dt in new_dts:
            self._inventory(dt)
        if new_exports or new_dts:
            self._views()

    # --- AthenaQueries' interface -------------------------------------------------------------
    def run(self, text: str, token: str, what: str) -> QueryOutcome:
        self.sent.append(text)
        self._prepare(text)
        if text.startswith("VACUUM"):
            return QueryOutcome(token, 0, 0.0)
        unload = re.fullmatch(r"UNLOAD \((.*)\) TO '(s3://[^']+)' WITH \(.*\)", text, re.DOTALL)
        if unload:
            frame = pl.from_arrow(self.con.sql(sql.to_duckdb(unload.group(1))).to_arrow_table())
            bucket, _, prefix = unload.group(2)[5:].partition("/")
            buffer = io.BytesIO()
            frame.write_parquet(buffer)
            self.stack.s3().put_object(Bucket=bucket, Key=prefix + "part-0.parquet", Body=buffer.getvalue())
            return QueryOutcome(token, 0, 0.0)
        rows = self.con.execute(sql.to_duckdb(text)).fetchall()
        self.results[token] = [[None if v is None else str(v) for v in row] for row in rows]
        return QueryOutcome(token, 0, 0.0)

    def rows(self, query_id: str) -> list[list[str | None]]:
        return self.results[query_id]
