"""How long a restore drill takes on the local stack: restore from an export, then reconcile.

For each size, a fresh local stack holds N processed documents, consistent (items, raw objects,
result.json objects), so the drill must end with 0 findings. The objects are loaded inside the S3
server's process (bench/seeded_s3.py) and the items with BatchWriteItem; the table is exported
with the local stand-in for ExportTableToPointInTime (`local export-table`, timed apart: on AWS
the export or PITR runs beside the table). Then `python -m jobs drill --drop-after` runs as its
own process, and its report gives the restore (create, load the export in batches, ACTIVE) and
reconcile seconds: the RTO it proves on this machine. Apart (`--undelete-sizes`, results in
undelete.json): a bad role deletes every object of both data buckets and `undelete` brings them
back (their delete markers removed), timed against the bare listing of the versions it reads.

Baselines in the same run, on the same stack: the same items written straight from memory with
BatchWriteItem (what a restore cannot beat: no export to read or parse), and the reconcile's reads
with nothing done to them (a parallel Scan of the table and the listings of both buckets).

    python -m bench.bench_drill [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from bench.common import fresh_stack, read_ceiling, run_measured, stage, table, write_result
from bench.seeded_s3 import OBJECT_COLUMNS, server_spec
from jobs.contract import Status, layout, table_spec
from jobs.local.stack import REGION
from jobs.local.table_export import export_table
from jobs.reconcile.rules.keys import templates
from jobs.recovery.undelete import undelete
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client
from jobs.store.restore import create_table_request

STAGE = "benchdrill"
BASE = datetime(2026, 1, 1, tzinfo=UTC)
TS = "%Y-%m-%dT%H:%M:%S%.3fZ"
WRITERS = 8


def documents(n: int, settings: JobSettings) -> tuple[list[str], pl.DataFrame]:
    """N processed documents: their items (DynamoDB JSON) and their raw and result objects."""
    i = pl.col("i")
    frame = pl.DataFrame({"i": pl.arange(0, n, eager=True)}).with_columns(
        ("u" + (i % max(1, n // 50)).cast(pl.String).str.zfill(6)).alias("user"),
        ("d" + i.cast(pl.String).str.zfill(9)).alias("doc"),
        (pl.lit(BASE) + pl.duration(milliseconds=i * 7)).alias("created"),
        ("e" + i.hash(11).cast(pl.String)).alias("etag"),
    )
    keys = templates()  # the contract's key formats, as the reconcile's rules build them
    frame = frame.with_columns(
        keys["raw"].build(pl.col("user"), pl.col("doc"), pl.lit("invoice.xml")).alias("rawKey"),
        keys["result"].build(pl.col("user"), pl.col("doc")).alias("resultKey"),
        pl.col("created").dt.strftime(TS).alias("ts"),
    )

    def s(expr: pl.Expr) -> pl.Expr:
        return pl.concat_str([pl.lit('{"S":"'), expr, pl.lit('"}')])

    fields = {
        layout.PK_ATTR: s(keys["pk"].build(pl.col("user"))),
        layout.SK_ATTR: s(keys["sk"].build(pl.col("doc"))),
        layout.GSI1_PK_ATTR: s(pl.lit(layout.status_pk(Status.PROCESSED))),
        layout.GSI1_SK_ATTR: s(pl.col("ts")),
        "userId": s(pl.col("user")),
        "documentId": s(pl.col("doc")),
        "status": s(pl.lit(Status.PROCESSED.value)),
        "createdAt": s(pl.col("ts")),
        "updatedAt": s(pl.col("ts")),
        "rawS3Uri": s(pl.lit(layout.s3_uri(settings.store.raw_bucket, "")) + pl.col("rawKey")),
        "rawEtag": s(pl.lit('\\"') + pl.col("etag") + pl.lit('\\"')),
        "resultS3Uri": s(pl.lit(layout.s3_uri(settings.store.processed_bucket, "")) + pl.col("resultKey")),
        "version": pl.lit('{"N":"2"}'),
        "attempts": pl.lit('{"N":"1"}'),
        "entityType": s(pl.lit(layout.ENTITY_DOCUMENT)),
        "vendorName": s(pl.lit("Lieferant GmbH")),
        "totalAmount": pl.lit('{"N":"529.87"}'),
        "currency": s(pl.lit("EUR")),
    }
    parts: list[pl.Expr] = [pl.lit('{"Item":{')]
    for number, (name, value) in enumerate(fields.items()):
        parts += [pl.lit(("," if number else "") + f'"{name}":'), value]
    lines = frame.select(pl.concat_str([*parts, pl.lit("}}")]).alias("l")).get_column("l").to_list()
    objects = pl.concat(
        [
            frame.select(
                pl.lit(settings.store.raw_bucket).alias("bucket"), pl.col("rawKey").alias("key"), "etag", "created"
            ),
            frame.select(
                pl.lit(settings.store.processed_bucket).alias("bucket"),
                pl.col("resultKey").alias("key"),
                ("r" + pl.col("etag")).alias("etag"),
                (pl.col("created") + pl.duration(seconds=1)).alias("created"),
            ),
        ]
    ).rename({"created": "lastModified"})
    return lines, objects.select(OBJECT_COLUMNS)


def write_items(settings: JobSettings, table_name: str, lines: list[str]) -> float:
    """BatchWriteItem, 25 items a request on WRITERS threads; returns the seconds it took."""
    ddb = dynamodb_client(settings)

    def batch(chunk: list[str]) -> None:
        request = {table_name: [{"PutRequest": {"Item": json.loads(line)["Item"]}} for line in chunk]}
        while request:
            request = ddb.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}

    started = time.perf_counter()
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(batch, [lines[i : i + 25] for i in range(0, len(lines), 25)]))
    return time.perf_counter() - started


def empty_and_undelete(settings: JobSettings) -> tuple[float, float, int]:
    """A bad role deletes every object of both data buckets; time `undelete` of each, and the
    bare listing of the versions it reads (its baseline). Returns (undelete s, listing s, objects back).
    """
    s3 = s3_client(settings)
    buckets = (settings.store.raw_bucket, settings.store.processed_bucket)
    since = datetime.now(UTC)
    for bucket in buckets:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                s3.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
    clock = time.perf_counter()
    for bucket in buckets:
        for _ in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
            pass
    listing = time.perf_counter() - clock
    clock = time.perf_counter()
    for purpose in ("raw", "processed"):
        undelete(settings, purpose, since, None, dry_run=False)
    undeleted = time.perf_counter() - clock
    back = sum(p.get("KeyCount", 0) for b in buckets for p in s3.get_paginator("list_objects_v2").paginate(Bucket=b))
    return undeleted, listing, back


def measure_undelete(n: int) -> dict[str, Any]:
    """N documents' raw and result objects on a fresh stack, emptied by a bad role, undeleted."""
    settings = JobSettings(stage=STAGE)
    _, objects = documents(n, settings)
    with tempfile.TemporaryDirectory(prefix="docuflow-undelete-bench-") as tmp:
        objects_file = Path(tmp) / "objects.parquet"
        objects.write_parquet(objects_file)
        with fresh_stack(partial(server_spec, objects_file)) as endpoints:
            undeleted, listed, back = empty_and_undelete(stage(endpoints, STAGE))
    return {
        "documents": n,
        "objects": objects.height,
        "undeleteSeconds": round(undeleted, 2),
        "versionListingSeconds": round(listed, 2),
        "undeleteOverVersionListing": round(undeleted / listed, 2),
        "objectsBack": back,
        "loadAverage1m": round(os.getloadavg()[0], 2),
    }


def measure(n: int) -> dict[str, Any]:
    settings = JobSettings(stage=STAGE)
    lines, objects = documents(n, settings)
    with tempfile.TemporaryDirectory(prefix="docuflow-drill-bench-") as tmp:
        objects_file = Path(tmp) / "objects.parquet"
        objects.write_parquet(objects_file)
        with fresh_stack(partial(server_spec, objects_file)) as endpoints:
            settings = stage(endpoints, STAGE)
            seeded = write_items(settings, settings.store.table_name, lines)
            clock = time.perf_counter()
            export_table(settings, dynamodb_client(settings), s3_client(settings), REGION)
            exported = time.perf_counter() - clock
            env = {**os.environ, "DOCUFLOW_STAGE": STAGE, "DOCUFLOW_LOG_FORMAT": "json"}
            done, rss = run_measured([sys.executable, "-m", "jobs", "drill", "--drop-after"], env)
            if done.returncode != 0:
                raise RuntimeError(f"drill failed ({done.returncode}): {done.stderr[-2000:]}")
            report = json.loads(done.stdout)
            # Baselines: the same items into a new table straight from memory; the bare reads.
            baseline_table = f"{settings.store.table_name}-baseline"
            ddb = dynamodb_client(settings)
            ddb.create_table(**create_table_request(table_spec(STAGE).model_copy(update={"name": baseline_table})))
            ddb.get_waiter("table_exists").wait(TableName=baseline_table)
            load_ceiling = write_items(settings, baseline_table, lines)
            reads = read_ceiling(settings, baseline_table, max(2, min(16, settings.store.io_threads)))
    return {
        "documents": n,
        "objects": objects.height,
        "seedItemsSeconds": round(seeded, 1),
        "exportSeconds": round(exported, 2),
        "restoreSeconds": report["restoreSeconds"],
        "reconcileSeconds": report["reconcileSeconds"],
        "newestChangeSeconds": report["newestChangeSeconds"],
        "rtoSeconds": report["rtoSeconds"],
        "findings": report["findings"]["total"],
        "restoredItems": report["itemCount"],
        "drillPeakRssMb": rss,
        "loadCeilingSeconds": round(load_ceiling, 2),
        "restoreOverLoadCeiling": round(report["restoreSeconds"] / load_ceiling, 2),
        "readCeilingSeconds": round(reads, 2),
        "reconcileOverReadCeiling": round(report["reconcileSeconds"] / reads, 2),
        "itemsPerSecondRestored": round(n / report["restoreSeconds"]),
        "loadAverage1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_drill", description=__doc__)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated document counts (drill)")
    parser.add_argument("--undelete-sizes", default="10000", help="comma-separated document counts (undelete)")
    args = parser.parse_args()
    undeletes = [measure_undelete(int(s)) for s in args.undelete_sizes.split(",") if s.strip()]
    for result in undeletes:
        print(json.dumps(result), flush=True)
    if undeletes:
        write_result("undelete", {"sizes": undeletes})
    results = []
    for n in (int(s) for s in args.sizes.split(",") if s.strip()):
        result = measure(n)
        results.append(result)
        print(json.dumps(result), flush=True)
    print(
        table(
            [
                "documents",
                "restore s",
                "x load ceiling",
                "reconcile s",
                "x read ceiling",
                "RTO s",
                "findings",
                "RSS MB",
            ],
            [
                [
                    f"{r['documents']:,}",
                    r["restoreSeconds"],
                    r["restoreOverLoadCeiling"],
                    r["reconcileSeconds"],
                    r["reconcileOverReadCeiling"],
                    r["rtoSeconds"],
                    r["findings"],
                    r["drillPeakRssMb"],
                ]
                for r in results
            ],
        )
    )
    if results:
        write_result("drill", {"sizes": results})


if __name__ == "__main__":
    main()
