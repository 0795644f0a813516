"""The nightly reconcile's contenders on the same inputs: the kept table state plus the night's
incremental export, and the newest inventories (bench/bench_reconcile.py generates them).

- the polars chain itself is `bench_reconcile.worker_nightly` (state + changes, the new state kept);
- `worker_duckdb_night`: the Athena engine's night on DuckDB, the statements Athena would run:
  the Iceberg table (a DuckDB table in a database file the previous night built from its full
  export, `worker_duckdb_keep`, untimed) brought forward by MERGE INTO from the night's changes,
  then the rules' query over it;
- `worker_baseline_night`: plain Python over the same files: the state's Parquet read into dicts,
  the changes applied, the rules as `bench_reconcile.baseline_counts` (dicts and sets);
- `synthetic_results`: result.json contents made from their keys without S3 (what the generated
  items say), so `--deep`'s memory can be measured at sizes no local S3 would serve;
- `athena_night_bytes`: what an Athena night reads, measured on the same data written as Athena
  would hold it; `random_id_bytes` the same with random ids and ETags, as real documents have
  them (`python -m bench.reconcile_nightly`; docs/capacity.md turns both into the night's bill).
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow.parquet as pq

from bench.common import write_result
from jobs.contract import Status, layout
from jobs.reconcile.engines.iceberg import StateTable
from jobs.reconcile.inputs.export import export_manifest
from jobs.reconcile.rules import sql_rules as sql
from jobs.reconcile.rules.findings import counts, render
from jobs.reconcile.rules.params import RuleParams

DATABASE = "audit"
TABLE = StateTable(DATABASE, "documents_state", "documents_export", "documents_changes")


def _struct(fields: dict[str, str]) -> str:
    return "STRUCT(" + ", ".join(f'"{name}" {kind}' for name, kind in fields.items()) + ")"


ITEM = _struct({attribute: _struct({tag: "VARCHAR"}) for attribute, tag in sql.export_columns(False).items()})
KEYS = _struct({"PK": _struct({"S": "VARCHAR"}), "SK": _struct({"S": "VARCHAR"})})


def _data_files(location: str) -> list[str]:
    """An export's data files with lines in them (DuckDB's JSON reader refuses an empty one)."""
    return [str(f.location.path) for f in export_manifest(location, None).files if f.item_count]


def _connect(path: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(path, config={"threads": 2})
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET preserve_insertion_order = false")
    return con


def worker_duckdb_keep(inputs: dict[str, Any]) -> dict[str, Any]:
    """The previous night on DuckDB: the Iceberg table (a DuckDB table) anchored from T0's export."""
    con = _connect(inputs["duckdbState"])
    con.execute(f'CREATE SCHEMA "{DATABASE}"')
    columns = f"pk VARCHAR, sk VARCHAR, item {ITEM}, as_of TIMESTAMP, anchored_at TIMESTAMP"
    con.execute(f"CREATE TABLE {TABLE.name} ({columns})")
    files = _data_files(inputs["previousExport"])
    con.execute(
        f'CREATE VIEW "{DATABASE}"."{TABLE.exports}" AS SELECT Item AS item, {sql.lit("t0")} AS export_id '
        f"FROM read_json({files}, format = 'newline_delimited', columns = {{'Item': '{ITEM}'}})"
    )
    t0 = export_manifest(inputs["previousExport"], None).export_time
    for statement in TABLE.reanchor("t0", t0, "arn:bench")[:2]:  # VACUUM has nothing to do here
        con.execute(sql.to_duckdb(statement))
    con.close()
    return {"seconds": 0.0, "cpuSeconds": 0.0, "counts": {}}


def worker_duckdb_night(inputs: dict[str, Any], params: RuleParams) -> dict[str, Any]:
    """The night: MERGE INTO the table from the incremental export, then the rules over it."""
    started, cpu = time.perf_counter(), time.process_time()
    con = _connect(inputs["duckdbState"])
    changes = export_manifest(inputs["changes"], None)
    con.execute(
        f'CREATE VIEW "{DATABASE}"."{TABLE.changes}" AS SELECT Keys AS keys, NewImage AS newimage, '
        f"{sql.lit('c1')} AS export_id FROM read_json({_data_files(inputs['changes'])}, "
        f"format = 'newline_delimited', columns = {{'Keys': '{KEYS}', 'NewImage': '{ITEM}'}})"
    )
    merging = time.perf_counter()
    con.execute(sql.to_duckdb(TABLE.merge("c1", changes.export_time, "arn:bench")))
    merged = time.perf_counter() - merging
    raw, processed = (f"read_parquet({_inventory_files(m)})" for m in inputs["manifests"])
    relations = sql.Relations(TABLE.items(), raw, processed)
    wide = con.sql(sql.to_duckdb(sql.query(relations, params))).pl()
    con.close()
    return {
        "seconds": time.perf_counter() - started,
        "cpuSeconds": time.process_time() - cpu,
        "counts": counts(render(wide)),
        "timings": {"merge": merged},
    }


def _inventory_files(manifest: str) -> list[str]:
    root = Path(manifest).parents[3]
    return [str(root / f["key"]) for f in json.loads(Path(manifest).read_text())["files"]]


# --- plain Python over the same files ---------------------------------------------------------------
# The state's columns under the attribute names the full-export baseline reads.
_STATE_NAMES = {"pk": "PK", "sk": "SK", "gsi1pk": "GSI1PK", "gsi1sk": "GSI1SK"}


def baseline_night_items(state: str, changes: str) -> list[dict[str, Any]]:
    """The table the night reads, one dict per item: the state's rows by key, the changes applied."""
    manifest = json.loads((Path(state) / "table-state.json").read_text())
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in manifest["files"]:
        for row in pq.read_table(Path(state) / entry["key"]).to_pylist():
            row = {_STATE_NAMES.get(k, k): v for k, v in row.items() if v is not None}
            items[(row["PK"], row["SK"])] = row
    summary = json.loads((Path(changes) / "manifest-summary.json").read_text())
    root = Path(changes).parents[1]
    for line in (root / summary["manifestFilesS3Key"]).read_text().splitlines():
        with gzip.open(root / json.loads(line)["dataFileS3Key"], "rt") as handle:
            for text in handle:
                change = json.loads(text)
                key = (change["Keys"]["PK"]["S"], change["Keys"]["SK"]["S"])
                image = change.get("NewImage")
                if image is None:
                    items.pop(key, None)
                else:
                    items[key] = {k: next(iter(v.values())) for k, v in image.items()}
    return list(items.values())


def worker_baseline_night(
    inputs: dict[str, Any], counts_of: Callable[[list[dict[str, Any]], dict[str, Any]], dict[str, int]]
) -> dict[str, Any]:
    started, cpu = time.perf_counter(), time.process_time()
    found = counts_of(baseline_night_items(inputs["state0"], inputs["changes"]), inputs)
    return {"seconds": time.perf_counter() - started, "cpuSeconds": time.process_time() - cpu, "counts": found}


# --- --deep without S3 ------------------------------------------------------------------------------
def synthetic_results(keys: list[str], frame_of: Callable[[pl.DataFrame], pl.DataFrame]) -> pl.DataFrame:
    """result.json contents of `keys` as the generated documents say them (`frame_of` rebuilds a
    document's columns from its number), so only the planted discrepancies are found.
    """
    numbers = pl.DataFrame({"key": keys}).with_columns(pl.col("key").str.extract(r"/d(\d+)/").cast(pl.Int64).alias("i"))
    return frame_of(numbers)


def athena_night_bytes(inputs: dict[str, Any], root: Path) -> dict[str, int]:
    """What an Athena night reads besides the inventories: the Iceberg table written as Parquet
    (zstd, as the stack's table declares) split into the key columns a MERGE scans and the item
    column the rules scan, and the night's incremental export (gzip JSON, read whole).
    """
    con = _connect(inputs["duckdbState"])
    out = root / "state.parquet"
    con.execute(f"COPY (SELECT pk, sk, item FROM {TABLE.name}) TO '{out}' (FORMAT parquet, COMPRESSION zstd)")
    con.close()
    metadata = pq.ParquetFile(out).metadata
    sizes = {"keys": 0, "item": 0}
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for c in range(row_group.num_columns):
            column = row_group.column(c)
            sizes["keys" if column.path_in_schema in ("pk", "sk") else "item"] += column.total_compressed_size
    out.unlink()
    changes = sum(p.stat().st_size for p in (Path(inputs["changes"]) / "data").glob("*.json.gz"))
    return {"mergeKeys": sizes["keys"], "stateItems": sizes["item"], "changes": changes}


# --- what real keys cost: the same columns with random ids and ETags ---------------------------------
def random_id_bytes(n: int, root: Path) -> dict[str, float]:
    """Bytes per document of what an Athena night reads, for `n` documents whose ids and ETags are
    random (the benchmark's own are regular and compress far better than real ones): the Iceberg
    table's key columns and item column (zstd Parquet), a change's incremental-export line (gzip
    JSON), an object's inventory row (the five columns the query reads, Snappy Parquet, as S3
    Inventory writes them).
    """
    con = duckdb.connect(config={"threads": 2})
    rid = "md5(random()::VARCHAR)"
    # The contract's key shapes around random ids (one letter more than a bare prefix: same bytes).
    pk, sk = layout.user_pk("u"), layout.document_sk("d")
    con.execute(
        f"""CREATE TABLE docs AS SELECT '{pk}' || {rid} AS pk, '{sk}' || {rid} AS sk, {rid} AS etag,
            {rid} AS u, {rid} AS d, TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND AS created
            FROM range({n}) t(i)"""
    )
    item = (
        "{'PK': {'S': pk}, 'SK': {'S': sk}, 'GSI1PK': {'S': '" + layout.status_pk(Status.PROCESSED) + "'}, "
        "'GSI1SK': {'S': strftime(created, '%Y-%m-%dT%H:%M:%S.000Z')}, 'userId': {'S': u}, 'documentId': {'S': d}, "
        "'status': {'S': 'PROCESSED'}, 'createdAt': {'S': strftime(created, '%Y-%m-%dT%H:%M:%S.000Z')}, "
        "'updatedAt': {'S': strftime(created + INTERVAL 3 SECOND, '%Y-%m-%dT%H:%M:%S.000Z')}, "
        "'rawS3Uri': {'S': 's3://docuflow-prod-raw/raw/' || u || '/' || d || '/invoice.pdf'}, "
        "'rawEtag': {'S': '\"' || etag || '\"'}, "
        "'resultS3Uri': {'S': '"
        + layout.s3_uri(layout.bucket_name("prod", "processed"), layout.PROCESSED_PREFIX)
        + "' || u || '/' || d || '/result.json'}, "
        "'version': {'N': '2'}, 'attempts': {'N': '1'}}"
    )
    table, changes, inventory = root / "state.parquet", root / "changes.json.gz", root / "inventory.parquet"
    con.execute(f"COPY (SELECT pk, sk, {item} AS item FROM docs) TO '{table}' (FORMAT parquet, COMPRESSION zstd)")
    con.execute(
        f"COPY (SELECT {{'Keys': {{'PK': {{'S': pk}}, 'SK': {{'S': sk}}}}, 'NewImage': {item}}} AS line FROM docs) "
        f"TO '{changes}' (FORMAT json, COMPRESSION gzip)"
    )
    con.execute(
        f"""COPY (SELECT 'docuflow-prod-raw' AS bucket, 'raw/' || u || '/' || d || '/invoice.pdf' AS key,
            2048::BIGINT AS size, created AS last_modified_date, etag AS e_tag FROM docs)
            TO '{inventory}' (FORMAT parquet, COMPRESSION snappy)"""
    )
    con.close()
    metadata = pq.ParquetFile(table).metadata
    keys = item_bytes = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for c in range(row_group.num_columns):
            column = row_group.column(c)
            if column.path_in_schema in ("pk", "sk"):
                keys += column.total_compressed_size
            else:
                item_bytes += column.total_compressed_size
    return {
        "mergeKeysPerDocument": round(keys / n, 1),
        "stateItemPerDocument": round(item_bytes / n, 1),
        "changePerChangedDocument": round(changes.stat().st_size / n, 1),
        "inventoryPerObject": round(inventory.stat().st_size / n, 1),
    }


def main() -> None:
    """`python -m bench.reconcile_nightly [--documents N]`: the bytes an Athena night reads per
    document with random ids, written to bench/results/athena-night.json (docs/capacity.md).
    """
    parser = argparse.ArgumentParser(prog="python -m bench.reconcile_nightly", description=main.__doc__)
    parser.add_argument("--documents", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="docuflow-athena-night-") as tmp:
        measured = random_id_bytes(args.documents, Path(tmp))
    path = write_result("athena-night", {"documents": args.documents, "randomIds": measured})
    print(json.dumps(measured), f"\nwritten {path}")


if __name__ == "__main__":
    main()
