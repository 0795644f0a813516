"""Reconcile cost: N items against N raw + N result objects from export/inventory files, and live.

For each size the DynamoDB export (DYNAMODB_JSON, gzip) and the two S3 Inventory reports (CSV,
gzip) are generated in a temp dir first (not timed), with a known sprinkle of discrepancies of
every kind. Then subprocesses read the same files: the reconcile job's polars engine (key-hash
partitions), its duckdb engine (the Athena engine's SQL, translated by sqlglot, on embedded
DuckDB) and, up to --baseline-max, a plain-Python baseline (json/csv modules, dicts and sets, the
layout parsers), each timed inside and its peak RSS sampled from outside. Their counts per finding
must agree. The bytes Athena would scan are measured on the same data: the export's gzip files
(JSON is read whole) plus, of the inventories rewritten as AWS's Parquet (Snappy), the column
chunks of the five columns the query reads. The live figure seeds the same kind of data into a
fresh local stack and times `ReconcileRun` with the live source (`--live 0` keeps the last one).

The nightly figure is the run the mission asks to follow the night's work: the table as the
previous night's run kept it (a Parquet table state, `jobs.reconcile.inputs.table_state`) brought forward
by an incremental export of the night's changes (`NIGHTLY_CHANGES`: new, changed and deleted
items), the new state kept for the next night. The previous night (the full export at T0, kept) is
generated and run untimed as "keep"; the night's findings must equal the full T1 export's.

    python -m bench.bench_reconcile [--sizes 1000000,4000000] [--live 100000] [--baseline-max 1000000] \
        [--inventory-format Parquet]
"""

from __future__ import annotations

import argparse
import csv
import functools
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and `jobs` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl
import pyarrow.parquet as pq

from bench.common import RESULTS, fresh_stack, read_ceiling, run_measured, stage, table, write_result
from jobs.contract import Status, layout
from jobs.contract.item import MARKER_FIELDS
from jobs.local.servers import ServerSpec
from jobs.local.writers import write_export, write_incremental_export, write_inventory
from jobs.reconcile.cli import ALLOCATOR_ENV
from jobs.reconcile.inputs.inventory import read_inventory
from jobs.reconcile.plans import FilesPlan, LivePlan
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.rules.keys import templates
from jobs.reconcile.rules.params import RuleParams
from jobs.reconcile.rules.polars_rules import RESULT_PROMISED
from jobs.reconcile.run import ReconcileRun
from jobs.settings import JobSettings, ReconcileSection
from jobs.store.clients import dynamodb_client

STAGE = "bench"
LIVE_STAGE = "benchlive"
LIVE_OPTIONS = LivePlan(grace=timedelta(0), write_report=False)
AS_OF = datetime(2026, 6, 1, tzinfo=UTC)
STUCK_BEFORE = layout.format_ts(AS_OF - timedelta(hours=6))  # the baseline's lease cut-off
BASE = datetime(2026, 1, 1, tzinfo=UTC)
EXPORT_ROWS_PER_FILE = 250_000
INVENTORY_ROWS_PER_FILE = 500_000
TS_FORMAT = "%Y-%m-%dT%H:%M:%S%.3fZ"
EVERY = 1000  # one discrepancy of each kind per thousand documents
# The night's changes per million stored: 5,000 new items, 4,000 changed, 1,000 deleted (1 %:
# 5 M new documents a night against billions stored is well under that).
NIGHTLY_CHANGES = {"new": 5_000, "changed": 4_000, "deleted": 1_000}
NIGHT = timedelta(days=1)
ATHENA_INVENTORY_COLUMNS = ("bucket", "key", "size", "last_modified_date", "e_tag")  # what sql.query reads


# --- generation (not timed) ------------------------------------------------------------------
def _frame(n: int) -> pl.DataFrame:
    return _documents(pl.DataFrame({"i": pl.arange(0, n, eager=True)}), max(1, n // 50))


def _documents(numbers: pl.DataFrame, users: int) -> pl.DataFrame:
    """The generated documents numbered `i` (a column of `numbers`) over `users` users: ids,
    status, ETag, keys.
    """
    t = templates()
    i = pl.col("i")
    created = (pl.lit(BASE) + pl.duration(milliseconds=i * 7)).dt.strftime(TS_FORMAT)
    status = (
        pl.when(i % EVERY == 11)
        .then(pl.lit(Status.PROCESSING.value))
        .when(i % 10 == 1)
        .then(pl.lit(Status.REVIEW_REQUIRED.value))
        .when(i % 10 == 2)
        .then(pl.lit(Status.FAILED.value))
        .otherwise(pl.lit(Status.PROCESSED.value))
    )
    frame = numbers.with_columns(
        ("u" + (i % users).cast(pl.String).str.zfill(6)).alias("userId"),
        ("d" + i.cast(pl.String).str.zfill(9)).alias("documentId"),
        created.alias("createdAt"),
        status.alias("status"),
        ("e" + i.hash(7).cast(pl.String)).alias("etag"),
        i.mod(EVERY).alias("kind"),
    )
    return frame.with_columns(
        t["raw"].build(pl.col("userId"), pl.col("documentId"), pl.lit("invoice.xml")).alias("rawKey"),
        t["result"].build(pl.col("userId"), pl.col("documentId")).alias("resultKey"),
    )


def _s(expr: pl.Expr) -> pl.Expr:
    return pl.concat_str([pl.lit('{"S":"'), expr, pl.lit('"}')])


def _export_lines(frame: pl.DataFrame, raw_bucket: str, processed_bucket: str) -> pl.Series:
    t = templates()
    kind = pl.col("kind")
    status = pl.col("status")
    gsi1pk = (
        pl.when(kind == 13).then(t["status"].build(pl.lit(Status.FAILED.value))).otherwise(t["status"].build(status))
    )
    result_uri = pl.lit(layout.s3_uri(processed_bucket, "")) + pl.when(kind == 17).then(
        t["result"].build(pl.col("userId"), pl.lit("elsewhere"))
    ).otherwise(pl.col("resultKey"))
    etag = pl.when(kind == 9).then(pl.lit("stale")).otherwise(pl.col("etag"))
    lease = (
        pl.when(status == Status.PROCESSING.value)
        .then(
            pl.concat_str(
                [pl.lit(',"leaseOwner":{"S":"gone"},"leaseExpiresAt":'), _s(pl.lit("2026-01-01T00:00:00.000Z"))]
            )
        )
        .otherwise(pl.lit(""))
    )
    # MISSING_MARKER: a document that says it holds a duplicate marker no row is there for.
    claim = pl.when(kind == 19).then(pl.lit(f',"contentMarker":{{"S":"{"a" * 64}"}}')).otherwise(pl.lit(""))
    fields = [
        ("PK", _s(t["pk"].build(pl.col("userId")))),
        ("SK", _s(t["sk"].build(pl.col("documentId")))),
        ("GSI1PK", _s(gsi1pk)),
        ("GSI1SK", _s(pl.col("createdAt"))),
        ("userId", _s(pl.col("userId"))),
        ("documentId", _s(pl.col("documentId"))),
        ("status", _s(status)),
        ("createdAt", _s(pl.col("createdAt"))),
        ("updatedAt", _s(pl.col("createdAt"))),
        ("rawS3Uri", _s(pl.lit(layout.s3_uri(raw_bucket, "")) + pl.col("rawKey"))),
        ("rawEtag", _s(pl.lit('\\"') + etag + pl.lit('\\"'))),
        ("resultS3Uri", _s(result_uri)),
        ("version", pl.lit('{"N":"2"}')),
        ("attempts", pl.lit('{"N":"1"}')),
        ("entityType", _s(pl.lit("DOCUMENT"))),
        ("sourceFormat", _s(pl.lit("UBL"))),
        ("vendorName", _s(pl.lit("Lieferant GmbH"))),
        ("invoiceNumber", _s(pl.lit("INV-") + pl.col("i").cast(pl.String))),
        ("totalAmount", pl.lit('{"N":"529.87"}')),
        ("currency", _s(pl.lit("EUR"))),
    ]
    parts: list[pl.Expr] = [pl.lit('{"Item":{')]
    for n, (name, value) in enumerate(fields):
        parts += [pl.lit(("," if n else "") + f'"{name}":'), value]
    parts += [lease, claim, pl.lit("}}\n")]
    return frame.filter(pl.col("kind") != 3).select(pl.concat_str(parts).alias("line")).get_column("line")


def _markers(frame: pl.DataFrame) -> pl.DataFrame:
    """ORPHAN_MARKER: a duplicate marker row naming a document that does not exist (its keys, and
    its image in DynamoDB JSON).
    """
    t = templates()
    rows = frame.filter(pl.col("kind") == 21)
    pk = _s(t["pk"].build(pl.col("userId")))
    sk = _s(t["marker"].build(pl.lit("CONTENT"), pl.col("i").cast(pl.String).str.zfill(64)))
    image = pl.concat_str(
        [
            pl.lit('{"PK":'),
            pk,
            pl.lit(',"SK":'),
            sk,
            pl.lit(f',"entityType":{{"S":"{layout.ENTITY_DUPLICATE_MARKER}"}},"userId":'),
            _s(pl.col("userId")),
            pl.lit(',"documentId":'),
            _s("gone-" + pl.col("documentId")),
            pl.lit(',"createdAt":'),
            _s(pl.col("createdAt")),
            pl.lit("}"),
        ]
    )
    keys = pl.concat_str([pl.lit('{"Keys":{"PK":'), pk, pl.lit(',"SK":'), sk, pl.lit("}")])
    return rows.select(keys.alias("keys"), image.alias("image"))


def _table_lines(frame: pl.DataFrame, raw_bucket: str, processed_bucket: str) -> pl.Series:
    """A full export's lines: the documents and the duplicate markers."""
    markers = _markers(frame).select(('{"Item":' + pl.col("image") + "}\n").alias("line")).get_column("line")
    return pl.concat([_export_lines(frame, raw_bucket, processed_bucket), markers])


def _objects(frame: pl.DataFrame, settings: JobSettings) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The raw and processed buckets' objects (bucket, key, size, lastModified, etag) for `frame`."""
    modified = pl.col("createdAt").str.to_datetime(TS_FORMAT, time_unit="ms", time_zone="UTC")
    raw = frame.filter(pl.col("kind") != 7).select(
        pl.lit(settings.store.raw_bucket).alias("bucket"),
        pl.col("rawKey").alias("key"),
        pl.lit(2048, pl.Int64).alias("size"),
        modified.alias("lastModified"),
        pl.col("etag"),
    )
    # Objects outside the layout, one per thousand.
    bad = raw.head(max(1, frame.height // EVERY)).with_columns(("stray/" + pl.col("key").str.slice(4)).alias("key"))
    processed = frame.filter(pl.col("kind") != 5).select(
        pl.lit(settings.store.processed_bucket).alias("bucket"),
        pl.col("resultKey").alias("key"),
        pl.lit(4096, pl.Int64).alias("size"),
        (modified + pl.duration(seconds=1)).alias("lastModified"),
        ("r" + pl.col("etag")).alias("etag"),
    )
    return pl.concat([raw, bad]), processed


def _chunks(lines: pl.Series) -> Iterator[bytes]:
    return (
        "".join(lines.slice(o, EXPORT_ROWS_PER_FILE).to_list()).encode()
        for o in range(0, lines.len(), EXPORT_ROWS_PER_FILE)
    )


def generate(
    n: int, root: Path, settings: JobSettings, inventory_format: str, file_rows: int = INVENTORY_ROWS_PER_FILE
) -> dict[str, Any]:
    frame = _frame(n)
    table_arn = f"arn:aws:dynamodb:bench:0:table/{settings.store.table_name}"
    export = write_export(
        root / "exports",
        table_arn,
        AS_OF,
        _chunks(_table_lines(frame, settings.store.raw_bucket, settings.store.processed_bucket)),
    )
    raw, processed = _objects(frame, settings)
    manifests = [
        write_inventory(
            root / "inventory",
            f.item(0, "bucket"),
            AS_OF,
            (f.slice(o, file_rows or f.height) for o in range(0, f.height, file_rows or max(f.height, 1))),
            inventory_format,
        )
        for f in (raw, processed)
    ]
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    return {
        "export": str(export),
        "manifests": [str(m) for m in manifests],
        "bytes": size,
        **_night(frame, n, root, settings, table_arn),
    }


def _night(frame: pl.DataFrame, n: int, root: Path, settings: JobSettings, table_arn: str) -> dict[str, Any]:
    """The previous night's full export (T0) and the night's incremental export [T0, T1): at T0
    the newest items did not exist yet, some had another status and a few more existed.
    """
    scale = n / 1_000_000
    new, changed, deleted = (max(1, int(NIGHTLY_CHANGES[k] * scale)) for k in ("new", "changed", "deleted"))
    i = pl.col("i")
    is_new = i >= n - new
    is_changed = (i % (n // changed) == 5) & ~is_new
    doomed = _frame(n + deleted).filter(pl.col("i") >= n)
    earlier = frame.filter(~is_new).with_columns(
        pl.when(is_changed).then(pl.lit(Status.FAILED.value)).otherwise(pl.col("status")).alias("status")
    )
    buckets = (settings.store.raw_bucket, settings.store.processed_bucket)
    # The doomed documents without the markers their numbers would plant: the night deletes the
    # documents only, and an orphan marker left behind would be a finding a full export at T1 has not.
    t0_lines = pl.concat([_table_lines(earlier, *buckets), _export_lines(doomed, *buckets)])
    t0 = write_export(root / "exports", table_arn, AS_OF - NIGHT, _chunks(t0_lines))
    t = templates()
    keys = pl.concat_str(
        [
            pl.lit('{"Keys":{"PK":'),
            _s(t["pk"].build(pl.col("userId"))),
            pl.lit(',"SK":'),
            _s(t["sk"].build(pl.col("documentId"))),
            pl.lit("}"),
        ]
    )
    touched = frame.filter(is_new | is_changed)
    images = _export_lines(touched, *buckets).str.strip_prefix('{"Item":').str.strip_suffix("}\n")
    upserts = touched.filter(pl.col("kind") != 3).select(keys).to_series() + ',"NewImage":' + images + "}\n"
    marked = _markers(frame.filter(is_new))
    upserts = pl.concat([upserts, marked.get_column("keys") + ',"NewImage":' + marked.get_column("image") + "}\n"])
    deletes = doomed.select(keys).to_series() + "}\n"
    changes = write_incremental_export(
        root / "exports", table_arn, AS_OF - NIGHT, AS_OF, _chunks(pl.concat([upserts, deletes]))
    )
    return {
        "previousExport": str(t0),
        "changes": str(changes),
        "nightlyChanges": {"new": new, "changed": changed, "deleted": deleted},
    }


# --- the contenders (each in its own subprocess) -------------------------------------------------
def _options(inputs: dict[str, Any], **fields: Any) -> FilesPlan:
    """The files run over `inputs` (`fields`: what a contender changes of it)."""
    plan: dict[str, Any] = {
        "dynamodb_export": inputs["export"],
        "s3_inventories": tuple(inputs["manifests"]),
        "grace": timedelta(0),
        "write_report": False,
    }
    return FilesPlan(**(plan | fields))


def athena_scan_bytes(inputs: dict[str, Any], root: Path) -> dict[str, int]:
    """What Athena would scan: the export's compressed JSON whole, and of each inventory in
    Parquet (as the stack's S3 Inventory writes it) only the column chunks the SQL reads.
    """
    export = Path(inputs["export"])
    export_bytes = sum(p.stat().st_size for p in (export / "data").glob("*.json.gz"))
    inventory_bytes = 0
    for manifest in inputs["manifests"]:
        objects = read_inventory(manifest, None).objects
        out = root / f"{Path(manifest).parents[2].name}.parquet"
        objects.select(
            "bucket", "key", "size", pl.col("lastModified").alias("last_modified_date"), pl.col("etag").alias("e_tag")
        ).write_parquet(out, compression="snappy", row_group_size=1_000_000)
        metadata = pq.ParquetFile(out).metadata
        read = set(ATHENA_INVENTORY_COLUMNS)
        for group in range(metadata.num_row_groups):
            row_group = metadata.row_group(group)
            inventory_bytes += sum(
                row_group.column(c).total_compressed_size
                for c in range(row_group.num_columns)
                if row_group.column(c).path_in_schema in read
            )
        out.unlink()
    return {"export": export_bytes, "inventories": inventory_bytes, "total": export_bytes + inventory_bytes}


def _timed(run: ReconcileRun) -> dict[str, Any]:
    started, cpu = time.perf_counter(), time.process_time()
    outcome = run.execute()
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "cpuSeconds": time.process_time() - cpu,
        "counts": outcome.summary.counts,
        "timings": outcome.timings,
    }


def worker_polars(inputs: dict[str, Any]) -> dict[str, Any]:
    return _timed(ReconcileRun(JobSettings(stage=STAGE), _options(inputs)))


def worker_keep(inputs: dict[str, Any]) -> dict[str, Any]:
    """The previous night: its full export judged and kept as a table state."""
    options = _options(inputs, dynamodb_export=inputs["previousExport"], write_table_state=inputs["state0"])
    return _timed(ReconcileRun(JobSettings(stage=STAGE), options))


def worker_nightly(inputs: dict[str, Any], settings: JobSettings | None = None) -> dict[str, Any]:
    """The night: the kept state plus the incremental export, the new state kept (the previous
    night's data files kept where they lie, as the nights after an anchor do).
    """
    options = _options(
        inputs,
        table_state=inputs["state0"],
        dynamodb_export=inputs["changes"],
        write_table_state=inputs["state1"],
    )
    return _timed(ReconcileRun(settings or JobSettings(stage=STAGE), options))


def worker_nightly_rewrite(inputs: dict[str, Any]) -> dict[str, Any]:
    """The same night with every row written again, as when every data file it could keep is
    past its age (no night is worse; a night rewrites on average the files that turned their
    age, jobs/reconcile/inputs/table_state.py).
    """
    return worker_nightly(
        inputs, JobSettings(stage=STAGE, reconcile=ReconcileSection(table_state_days=2, reconcile_catch_up_days=1))
    )


def worker_nightly_deep(inputs: dict[str, Any]) -> dict[str, Any]:
    """The night with --deep, result.json contents made from their keys (no S3 at these sizes:
    what is measured is the engine's memory and time, not the GETs).
    """
    options = _options(
        inputs,
        table_state=inputs["state0"],
        dynamodb_export=inputs["changes"],
        write_table_state=inputs["state1"] + "-deep",
        deep=True,
    )
    run = ReconcileRun(JobSettings(stage=STAGE), options)
    run.read_results = _synthetic_results  # type: ignore[method-assign]
    return _timed(run)


def _synthetic_results(keys: list[str]) -> pl.DataFrame:
    settings = JobSettings(stage=STAGE)

    processed = re.escape(layout.PROCESSED_PREFIX)

    def documents(numbers: pl.DataFrame) -> pl.DataFrame:
        docs = _documents(numbers.select("i"), 1)
        return numbers.select("key").with_columns(
            pl.col("key").str.extract(rf"^{processed}([^/]+)/").alias("userId"),
            pl.col("key").str.extract(rf"^{processed}[^/]+/([^/]+)/").alias("documentId"),
            docs.get_column("status"),
            pl.lit("Lieferant GmbH").alias("vendorName"),
            pl.lit(None, pl.String).alias("invoiceDate"),
            pl.lit("529.87").alias("totalAmount"),
            (
                pl.lit(layout.s3_uri(settings.store.raw_bucket, ""))
                + pl.lit("raw/")
                + pl.col("key").str.extract(rf"^{processed}([^/]+/[^/]+)/")
                + pl.lit("/invoice.xml")
            ).alias("sourceUri"),
            docs.get_column("etag").alias("sourceEtag"),
            pl.lit(None, pl.String).alias("readError"),
        )

    from bench.reconcile_nightly import synthetic_results  # see WORKERS

    return synthetic_results(keys, documents)


def worker_duckdb_night(inputs: dict[str, Any]) -> dict[str, Any]:
    """The Athena engine's night on DuckDB: MERGE INTO the table, then the rules over it."""
    params = RuleParams(
        raw_bucket=JobSettings(stage=STAGE).store.raw_bucket,
        processed_bucket=JobSettings(stage=STAGE).store.processed_bucket,
        as_of=AS_OF,
        grace=timedelta(0),
    )
    from bench.reconcile_nightly import worker_duckdb_night as duckdb_night  # see WORKERS

    return duckdb_night(inputs, params)


def worker_baseline_night(inputs: dict[str, Any]) -> dict[str, Any]:
    """Plain Python over the nightly run's own inputs: the kept state and the night's changes."""
    from bench.reconcile_nightly import worker_baseline_night as baseline_night  # see WORKERS

    return baseline_night(inputs, baseline_counts)


def worker_duckdb(inputs: dict[str, Any]) -> dict[str, Any]:
    """The Athena engine's SQL on embedded DuckDB over the same files."""
    return _timed(ReconcileRun(JobSettings(stage=STAGE), _options(inputs, engine="duckdb")))


def worker_live(inputs: dict[str, Any]) -> dict[str, Any]:
    """The live source against the servers in AWS_ENDPOINT_URL_* (set by the parent's stack)."""
    return _timed(ReconcileRun(JobSettings(stage=inputs["stage"]), LIVE_OPTIONS))


def _baseline_items(path: str) -> list[dict[str, Any]]:
    summary = json.loads((Path(path) / "manifest-summary.json").read_text())
    root = Path(path).parents[1]
    items = []
    for line in (root / summary["manifestFilesS3Key"]).read_text().splitlines():
        with gzip.open(root / json.loads(line)["dataFileS3Key"], "rt") as handle:
            for row in handle:
                wire = json.loads(row)["Item"]
                items.append({k: next(iter(v.values())) for k, v in wire.items()})
    return items


def _baseline_objects(manifest_path: str) -> list[tuple[str, str, datetime]]:
    manifest = json.loads(Path(manifest_path).read_text())
    root = Path(manifest_path).parents[3]
    out = []
    for entry in manifest["files"]:
        if manifest["fileFormat"] == "Parquet":
            rows = pq.read_table(root / entry["key"], columns=["key", "e_tag", "last_modified_date"]).to_pylist()
            out += [(row["key"], row["e_tag"], row["last_modified_date"]) for row in rows]
            continue
        with gzip.open(root / entry["key"], "rt", newline="") as handle:
            for _bucket, key, _size, modified, etag in csv.reader(handle):
                out.append(
                    (urllib.parse.unquote_plus(key), etag, datetime.fromisoformat(modified.replace("Z", "+00:00")))
                )
    return out


def worker_baseline(inputs: dict[str, Any]) -> dict[str, Any]:
    """The same rules with dicts and sets, one Python object per row: the obvious way to write it."""
    started, cpu = time.perf_counter(), time.process_time()
    found = baseline_counts(_baseline_items(inputs["export"]), inputs)
    return {"seconds": time.perf_counter() - started, "cpuSeconds": time.process_time() - cpu, "counts": found}


def baseline_counts(items: list[dict[str, Any]], inputs: dict[str, Any]) -> dict[str, int]:
    """The rules over `items` (one dict per item, DynamoDB's attribute names) and the inventories."""
    settings = JobSettings(stage=STAGE)
    raw_objects, processed_objects = (_baseline_objects(m) for m in inputs["manifests"])
    counts: Counter[str] = Counter()
    raw_by_key: dict[str, str] = {}
    for key, etag, _modified in raw_objects:
        try:
            layout.parse_raw_key(key)
            raw_by_key[key] = etag.strip('"')
        except ValueError:
            counts[Code.BAD_KEY] += 1
    results: set[tuple[str, str]] = set()
    for key, _etag, _modified in processed_objects:
        try:
            results.add(layout.parse_result_key(key))
        except ValueError:
            counts[Code.BAD_KEY] += 1
    raw_prefix = layout.s3_uri(settings.store.raw_bucket, "")
    tracked_raw: set[str] = set()
    ids: set[tuple[str, str]] = set()
    for item in items:
        if item["SK"].startswith(layout.marker_sk_prefix()):
            continue  # judged by _marker_counts
        ids.add((item["userId"], item["documentId"]))
        raw_key = item["rawS3Uri"][len(raw_prefix) :] if item["rawS3Uri"].startswith(raw_prefix) else None
        if raw_key is not None:
            tracked_raw.add(raw_key)
        counts.update(_baseline_item(item, raw_key, raw_by_key, results, settings))
    counts[Code.UNPROCESSED_RAW] = sum(1 for key in raw_by_key if key not in tracked_raw)
    counts[Code.ORPHAN_RESULT] = sum(1 for pair in results if pair not in ids)
    counts |= _marker_counts(items)
    return {c.value: counts.get(c, 0) for c in Code}


def _baseline_item(
    item: dict[str, Any],
    raw_key: str | None,
    raw_by_key: dict[str, str],
    results: set[tuple[str, str]],
    settings: JobSettings,
) -> list[Code]:
    """The codes one document item earns (its raw object at `raw_key`, if under the raw bucket)."""
    user, doc = item["userId"], item["documentId"]
    codes = []
    if raw_key is not None and raw_key not in raw_by_key:
        codes.append(Code.MISSING_RAW)
    elif raw_key is not None and raw_by_key[raw_key] != item["rawEtag"].strip('"'):
        codes.append(Code.STALE_RESULT)
    if item["status"] in RESULT_PROMISED and (user, doc) not in results:
        codes.append(Code.MISSING_RESULT)
    if item["status"] == Status.PROCESSING and item.get("leaseExpiresAt", "") < STUCK_BEFORE:
        codes.append(Code.STUCK_PROCESSING)
    if item.get("GSI1PK") != layout.status_pk(item["status"]) or item.get("GSI1SK") != item["createdAt"]:
        codes.append(Code.INDEX_DRIFT)
    expected_result = layout.s3_uri(settings.store.processed_bucket, layout.result_key(user, doc))
    if (
        item["PK"] != layout.user_pk(user)
        or item["SK"] != layout.document_sk(doc)
        or raw_key is None
        or layout.parse_raw_key(raw_key).document_id != doc
        or item.get("resultS3Uri", expected_result) != expected_result
    ):
        codes.append(Code.KEY_MISMATCH)
    return codes


def _marker_counts(items: list[dict[str, Any]]) -> Counter[str]:
    """ORPHAN_MARKER and MISSING_MARKER: the marker rows against what the live documents hold."""
    markers: set[tuple[str, str, str, str]] = set()
    claims: set[tuple[str, str, str, str]] = set()
    for item in items:
        user, doc = item["userId"], item["documentId"]
        if item["SK"].startswith(layout.marker_sk_prefix()):
            markers.add((user, doc, *layout.parse_marker_sk(item["SK"])))
        elif item["status"] != Status.DELETED:
            claims |= {(user, doc, k.value, item[f]) for k, f in MARKER_FIELDS.items() if f in item}
    return Counter({Code.ORPHAN_MARKER: len(markers - claims), Code.MISSING_MARKER: len(claims - markers)})


def worker_duckdb_keep(inputs: dict[str, Any]) -> dict[str, Any]:
    from bench.reconcile_nightly import worker_duckdb_keep as keep  # see WORKERS

    return keep(inputs)


def _athena_night_bytes(inputs: dict[str, Any], root: Path) -> dict[str, int]:
    from bench.reconcile_nightly import athena_night_bytes  # see WORKERS

    return athena_night_bytes(inputs, root)


# Each worker runs in a process of its own, timed, its RSS sampled from outside. The bench modules
# that load DuckDB, sqlglot or moto are imported only where used, so the job's figures carry what
# `python -m jobs reconcile` loads and no more (imported at the top, they added ~50 MB to every
# peak RSS measured).
WORKERS = {
    "polars": worker_polars,
    "keep": worker_keep,
    "nightly": worker_nightly,
    "nightly-deep": worker_nightly_deep,
    "nightly-rewrite": worker_nightly_rewrite,
    "duckdb": worker_duckdb,
    "duckdb-keep": worker_duckdb_keep,
    "duckdb-night": worker_duckdb_night,
    "baseline": worker_baseline,
    "baseline-night": worker_baseline_night,
    "live": worker_live,
}
NIGHT_HEADERS = ["items", "nightly s", "cpu s", "MB", "--deep MB", "all rows written s"]
NIGHT_HEADERS += ["duckdb night s", "cpu s", "MB"]
NIGHT_HEADERS += ["baseline night s", "cpu s", "MB", "same counts", "load"]
FULL_HEADERS = ["items", "full export s", "cpu s", "MB", "duckdb s", "cpu s", "MB", "baseline s", "cpu s", "MB"]


# --- live -----------------------------------------------------------------------------------------
def _seeded_s3(objects: Path, port: int, log_dir: Path) -> ServerSpec:
    command = [sys.executable, str(Path(__file__).with_name("seeded_s3.py")), str(port), str(objects)]
    return ServerSpec("s3", port, command, log_dir / "s3.log")


def live(n: int) -> dict[str, Any]:
    """The files benchmark's data (same discrepancies) on a fresh local stack; time one live
    reconcile: a parallel Scan of the table and listings of both buckets, all over HTTP.

    The objects are loaded inside the S3 server's process (bench/seeded_s3.py) and the items with
    BatchWriteItem on a table whose stream is switched off first: a Scan never reads the stream,
    and DynamoDB Local writes 4x faster without it.
    """
    settings = JobSettings(stage=LIVE_STAGE)
    frame = _frame(n)
    lines = _table_lines(frame, settings.store.raw_bucket, settings.store.processed_bucket).to_list()
    with tempfile.TemporaryDirectory(prefix="docuflow-reconcile-live-") as tmp:
        objects_file = Path(tmp) / "objects.parquet"
        from bench.seeded_s3 import OBJECT_COLUMNS  # see WORKERS

        objects = pl.concat(_objects(frame, settings)).select(OBJECT_COLUMNS)
        objects.write_parquet(objects_file)
        seeding = time.perf_counter()
        with fresh_stack(functools.partial(_seeded_s3, objects_file)) as endpoints:
            settings = stage(endpoints, LIVE_STAGE)
            ddb = dynamodb_client(settings)
            ddb.update_table(TableName=settings.store.table_name, StreamSpecification={"StreamEnabled": False})

            def write_items(batch: list[str]) -> None:
                request = {
                    settings.store.table_name: [{"PutRequest": {"Item": json.loads(line)["Item"]}} for line in batch]
                }
                while request:
                    request = ddb.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}

            with ThreadPoolExecutor(8) as pool:
                list(pool.map(write_items, [lines[i : i + 25] for i in range(0, len(lines), 25)]))
            seeded = time.perf_counter() - seeding
            ceiling = read_ceiling(
                settings, settings.store.table_name, ReconcileRun(settings, LIVE_OPTIONS).scan_segments
            )
            inputs_file = Path(tmp) / "inputs.json"
            inputs_file.write_text(json.dumps({"stage": LIVE_STAGE}))
            job, rss = _measure("live", inputs_file)
    seconds = job["seconds"]
    return {
        "items": len(lines),
        "objects": objects.height,
        "seedSeconds": round(seeded, 1),
        "seconds": round(seconds, 2),
        "cpuSeconds": round(job["cpuSeconds"], 2),
        "peakRssMb": rss,
        "ceilingSeconds": round(ceiling, 2),
        "ceilingOverJob": round(ceiling / seconds, 3),
        "itemsPerSecond": round(len(lines) / seconds),
        "findings": sum(job["counts"].values()),
        "counts": job["counts"],
        "timings": {k: round(v, 2) for k, v in job["timings"].items()},
    }


# --- driver ----------------------------------------------------------------------------------------
def _measure(kind: str, inputs_file: Path) -> tuple[dict[str, Any], float]:
    # The job's own allocator setting (jobs/reconcile/cli.py sets it before polars loads).
    env = {**os.environ, "POLARS_MAX_THREADS": os.environ.get("POLARS_MAX_THREADS", "2"), **ALLOCATOR_ENV}
    command = [sys.executable, "-m", "bench.bench_reconcile", "--worker", kind, str(inputs_file)]
    done, rss = run_measured(command, env)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} worker failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), rss


def _figures(job: dict[str, Any] | None, rss: float | None) -> dict[str, Any] | None:
    if not job:
        return None
    return {"seconds": round(job["seconds"], 2), "cpuSeconds": round(job["cpuSeconds"], 2), "peakRssMb": rss}


def _cells(figures: dict[str, Any] | None) -> list[Any]:
    return [figures["seconds"], figures["cpuSeconds"], figures["peakRssMb"]] if figures else ["-", "-", "-"]


def run_size(n: int, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Every contender at one size: the night (the kept state + the night's changes) and the full
    export, each against DuckDB and plain Python reading the same inputs.
    """
    clock = time.perf_counter()
    inputs = generate(n, root, JobSettings(stage=STAGE), args.inventory_format, args.inventory_file_rows)
    inputs |= {"state0": str(root / "state0"), "state1": str(root / "state1"), "duckdbState": str(root / "night.db")}
    generated = time.perf_counter() - clock
    inputs_file = root / "inputs.json"
    inputs_file.write_text(json.dumps(inputs))
    baseline = n <= args.baseline_max

    def measure(kind: str, wanted: bool = True) -> tuple[dict[str, Any] | None, float | None]:
        return _measure(kind, inputs_file) if wanted else (None, None)

    full, full_rss = measure("polars")
    _, kept_rss = measure("keep")
    nights = []  # the machine is shared: the night is measured args.repeat times, the median kept
    for _ in range(args.repeat):
        shutil.rmtree(inputs["state1"], ignore_errors=True)
        nights.append(measure("nightly"))
    nightly, nightly_rss = sorted(nights, key=lambda m: m[0]["seconds"] if m[0] else 0)[len(nights) // 2]
    state_written = sum(p.stat().st_size for p in Path(inputs["state1"]).rglob("*") if p.is_file())
    state_listed = json.loads((Path(inputs["state1"]) / "table-state.json").read_text())["files"]
    shutil.rmtree(inputs["state1"], ignore_errors=True)
    rewrite, rewrite_rss = measure("nightly-rewrite")
    deep, deep_rss = measure("nightly-deep", args.deep)
    duck, duck_rss = measure("duckdb")
    parquet = args.inventory_format == "Parquet"  # the DuckDB night reads Parquet inventories, as Athena's tables
    measure("duckdb-keep", parquet)
    duck_night, duck_night_rss = measure("duckdb-night", parquet)
    base, base_rss = measure("baseline", baseline)
    base_night, base_night_rss = measure("baseline-night", baseline)
    counts = [c["counts"] for c in (full, nightly, rewrite, duck, duck_night, base, base_night) if c]
    return {
        "items": n,
        "inventoryFormat": args.inventory_format,
        "inventoryFileRows": args.inventory_file_rows or None,
        "generateSeconds": round(generated, 1),
        "loadAverage1m": round(os.getloadavg()[0], 2),
        "night": {
            "changes": inputs["nightlyChanges"],
            "changesBytes": sum(p.stat().st_size for p in Path(inputs["changes"]).rglob("*") if p.is_file()),
            "stateBytes": sum(f["bytes"] for f in state_listed),
            "stateWrittenBytes": state_written,
            "stateFilesKept": sum(1 for f in state_listed if f["state"]),
            "stateFilesWritten": sum(1 for f in state_listed if not f["state"]),
            "previousNightPeakRssMb": kept_rss,
            "polars": _figures(nightly, nightly_rss) | {"timings": nightly["timings"] if nightly else {}},
            "polarsRuns": [_figures(job, rss) for job, rss in nights],
            "polarsEveryRowWritten": _figures(rewrite, rewrite_rss),
            "polarsDeep": _figures(deep, deep_rss),
            "duckdb": _figures(duck_night, duck_night_rss),
            "baseline": _figures(base_night, base_night_rss),
        },
        "fullExport": {
            "polars": _figures(full, full_rss),
            "duckdb": _figures(duck, duck_rss),
            "baseline": _figures(base, base_rss),
        },
        "countsAgree": all(c == counts[0] for c in counts),
        "findings": sum(full["counts"].values()) if full else None,
        "counts": full["counts"] if full else None,
        "athenaScanBytes": athena_scan_bytes(inputs, root),
        "athenaNightBytes": _athena_night_bytes(inputs, root) if parquet else None,
    }


def _rows(r: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    night, full = r["night"], r["fullExport"]
    deep = night["polarsDeep"]
    deep_cell = f"{deep['peakRssMb']} ({deep['peakRssMb'] / night['polars']['peakRssMb']:.2f}x)" if deep else "-"
    rewrite = night["polarsEveryRowWritten"]
    night_row = [f"{r['items']:,}", *_cells(night["polars"]), deep_cell, rewrite["seconds"] if rewrite else "-"]
    night_row += _cells(night["duckdb"])
    night_row += [*_cells(night["baseline"]), r["countsAgree"], r["loadAverage1m"]]
    full_row = [f"{r['items']:,}", *_cells(full["polars"]), *_cells(full["duckdb"]), *_cells(full["baseline"])]
    return night_row, full_row


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_reconcile", description=__doc__)
    parser.add_argument("--sizes", default="1000000,4000000", help="comma-separated item counts")
    # The baselines hold one Python dict per item (~4 GB at 1M), so above 1M they are skipped by default.
    parser.add_argument("--baseline-max", type=int, default=1_000_000, help="skip the baselines above this size")
    parser.add_argument("--live", type=int, default=100_000, help="live items to seed (0: skip)")
    parser.add_argument("--no-deep", dest="deep", action="store_false", help="skip the --deep night")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the night; the median is reported")
    parser.add_argument(
        "--inventory-format",
        choices=("Parquet", "CSV"),
        default="Parquet",
        help="S3 Inventory format (the stack writes Parquet)",
    )
    parser.add_argument(
        "--inventory-file-rows",
        type=int,
        default=INVENTORY_ROWS_PER_FILE,
        help="objects per inventory data file (0: one file per bucket)",
    )
    parser.add_argument("--results", default="reconcile", help="the results file's name under bench/results/")
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("inputs", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker](json.loads(Path(args.inputs).read_text())), default=str))
        return
    results, night_rows, full_rows = [], [], []
    for n in (int(s) for s in args.sizes.split(",") if s.strip()):
        with tempfile.TemporaryDirectory(prefix="docuflow-reconcile-bench-") as tmp:
            results.append(run_size(n, Path(tmp), args))
        night_row, full_row = _rows(results[-1])
        night_rows.append(night_row)
        full_rows.append(full_row)
        print(table(NIGHT_HEADERS, night_rows[-1:]), flush=True)
    path = RESULTS / f"{args.results}.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    live_result = live(args.live) if args.live else previous.get("live")
    path = write_result(args.results, {"files": results, "live": live_result})
    print("\nthe night (the kept table state + the night's incremental export; every contender reads them):")
    print(table(NIGHT_HEADERS, night_rows))
    print("\nfrom a full export of the table (every contender reads it):")
    print(table(FULL_HEADERS, full_rows))
    if live_result:
        print(
            f"\nlive (local stack, {live_result['items']:,} items + {live_result['objects']:,} objects): "
            f"{live_result['seconds']} s, {live_result['itemsPerSecond']:,} items/s, "
            f"peak RSS {live_result['peakRssMb']} MB; the same reads with no "
            f"work done take {live_result['ceilingSeconds']} s ({live_result['ceilingOverJob']:.2f} x ceiling)"
        )
    print(f"\nwritten {path}")


if __name__ == "__main__":
    main()
