"""Requests per nightly run: the queue drain's cost follows the night's uploads, the sweep's follows
everything stored.

For each stored size (default 10 k and 100 k documents already processed) one fresh stack holds
those documents (raw objects loaded inside the S3 server's process by bench/seeded_s3.py, items
written in batches), then the night's new documents are uploaded over HTTP, so only they reach
the arrival queue through the bucket's notifications. On that state:

- `ingest backfill --dry-run` measures what a sweep reads to find the night's work (every
  ListObjectsV2 page and BatchGetItem of the stored prefix); its per-document work is the drain's;
- `ingest` (the drain) processes the night for real, and its own summary counts every request.

The drain's count must stay flat between the sizes (≤ 1.1 x), the sweep's grows with them.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import polars as pl

from bench.common import fresh_stack, run_measured, stage, table, write_result
from bench.seeded_s3 import OBJECT_COLUMNS
from jobs.contract import DocumentItem, Status, layout
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.local.servers import ServerSpec
from jobs.local.stack import Endpoints, job_env
from jobs.settings import JobSettings
from jobs.store.clients import s3_client

UPLOADED = datetime(2026, 1, 1, tzinfo=UTC)


def _stored(n: int, settings: JobSettings) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """N raw objects (for the S3 server to load) and their PROCESSED items."""
    rows, items = [], []
    for i in range(n):
        key = layout.raw_key(f"user-{i % 5000:05d}", f"old-{i:08d}", "invoice.xml")
        etag = hashlib.md5(key.encode(), usedforsecurity=False).hexdigest()
        modified = UPLOADED + timedelta(seconds=i)
        rows.append((settings.store.raw_bucket, key, etag, modified))
        raw = layout.parse_raw_key(key)
        items.append(
            DocumentItem(
                userId=raw.user_id,
                documentId=raw.document_id,
                status=Status.PROCESSED,
                createdAt=modified,
                updatedAt=modified,
                rawS3Uri=layout.s3_uri(settings.store.raw_bucket, key),
                rawEtag=f'"{etag}"',
                version=2,
                resultS3Uri=layout.s3_uri(
                    settings.store.processed_bucket, layout.result_key(raw.user_id, raw.document_id)
                ),
            ).to_item()
        )
    frame = pl.DataFrame(
        rows,
        schema=dict(zip(OBJECT_COLUMNS, (pl.String, pl.String, pl.String, pl.Datetime("us", "UTC")), strict=True)),
        orient="row",
    )
    return frame, items


def _seeded_s3(objects: Path, port: int, log_dir: Path) -> ServerSpec:
    command = [sys.executable, str(Path(__file__).with_name("seeded_s3.py")), str(port), str(objects)]
    return ServerSpec("s3", port, command, log_dir / "s3.log")


def _run(endpoints: Endpoints, settings: JobSettings, *args: str) -> dict[str, Any]:
    env = {**os.environ, **job_env(endpoints, settings), "DOCUFLOW_LOG_FORMAT": "json"}
    done, _ = run_measured([sys.executable, "-m", "jobs", "ingest", *args], env)
    if done.returncode != 0:
        raise SystemExit(f"ingest {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _counts(summary: dict[str, Any]) -> dict[str, int]:
    """Requests by AWS operation (the run's own summary report excluded)."""
    counts: dict[str, int] = {}
    for operation, stats in summary["calls"].items():
        if operation == "s3.PutObject.once":
            continue
        name = operation.split(".")[0] + "." + operation.split(".")[1]
        counts[name] = counts.get(name, 0) + stats["calls"]
    return counts


def night(stored: int, new: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="docuflow-requests-") as tmp:
        probe = JobSettings(stage="req")
        frame, items = _stored(stored, probe)
        objects = Path(tmp) / "objects.parquet"
        frame.write_parquet(objects)
        with fresh_stack(functools.partial(_seeded_s3, objects)) as endpoints:
            settings = stage(endpoints, "req")
            table_ = boto3.resource("dynamodb", endpoint_url=endpoints.dynamodb).Table(settings.store.table_name)
            with table_.batch_writer() as writer:
                for item in items:
                    writer.put_item(Item=item)
            upload(s3_client(settings), settings.store.raw_bucket, generate(50, new, bad_ratio=0.02, seed=17), 16)
            sweep = _run(endpoints, settings, "backfill", "--dry-run")
            drain = _run(endpoints, settings, "drain", "--idle-seconds", "1")
    per_document = {k: v for k, v in _counts(drain).items() if not k.startswith("sqs.")}
    sweep_reads = _counts(sweep)
    backfill = dict(sweep_reads)
    for operation, count in per_document.items():
        if operation != "dynamodb.BatchGetItem":  # the sweep's own reads stand in for the drain's
            backfill[operation] = backfill.get(operation, 0) + count
    return {
        "stored": stored,
        "new": new,
        "processed": drain["processed"],
        "drain": _counts(drain),
        "backfill": backfill,
        "drainTotal": sum(_counts(drain).values()),
        "backfillTotal": sum(backfill.values()),
        "drainSeconds": drain["seconds"],
        "sweepReadSeconds": sweep["seconds"],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stored", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--new", type=int, default=1000)
    args = parser.parse_args(argv)
    nights = [night(n, args.new) for n in args.stored]
    operations = sorted({op for n in nights for op in (*n["drain"], *n["backfill"])})
    headers = ["requests"] + [f"{mode} @ {n['stored']:,} stored" for n in nights for mode in ("drain", "backfill")]
    rows = [[op] + [str(n[mode].get(op, 0)) for n in nights for mode in ("drain", "backfill")] for op in operations]
    rows.append(["total"] + [str(n[f"{mode}Total"]) for n in nights for mode in ("drain", "backfill")])
    print(f"\nRequests per nightly run with {args.new:,} new documents")
    print(table(headers, rows))
    first, last = nights[0], nights[-1]
    growth = {
        "drain": round(last["drainTotal"] / first["drainTotal"], 3),
        "backfill": round(last["backfillTotal"] / first["backfillTotal"], 3),
    }
    print(
        f"from {first['stored']:,} to {last['stored']:,} stored: "
        f"drain x{growth['drain']}, backfill x{growth['backfill']}"
    )
    result = {"new": args.new, "nights": nights, "growth": growth}
    write_result("requests", result)
    return result


if __name__ == "__main__":
    main()
