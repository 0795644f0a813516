"""The local change-log writer (the stand-in of Pipe + Firehose): records per second, bytes per record.

    python -m bench.bench_audit [--changes 10000]

On a fresh local stack, `--changes` item versions are written (documents of four versions each,
in transactions of 25), then read back from the table stream twice in the same run:

- baseline: the stream read alone (DescribeStream, GetShardIterator, GetRecords to the end), the
  floor any reader of DynamoDB Local's stream pays;
- stand-in: a fresh `StagePipe.flush()`: the same read, each record turned into the Pipe's JSON,
  converted to the contract's columns, written as Parquet into the audit bucket.

It reports both rates, their ratio, the writer's own rate (conversion, Parquet, S3 PUT; the read
excluded), the JSON bytes per record as a Pipe hands them to Firehose (what Firehose bills, in 5 KB
steps) and the Parquet bytes per record (what S3 stores); docs/capacity.md prices them. The log
must hold exactly one record per change (distinct eventIDs), or the run fails.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq

from bench.common import fresh_stack, stage, table, write_result
from jobs.contract import DocumentItem, Status, layout
from jobs.contract.actors import ActorKind, actor
from jobs.local.standins.audit_pipe import StagePipe, pipe_event
from jobs.observability import CallMetrics
from jobs.store.clients import dynamodb_client, s3_client, streams_client
from jobs.store.dynamo import DocumentTable
from jobs.store.streams import TableStream, stream_arn
from jobs.store.table_writes import claim_put

VERSIONS = 4
STATUSES = (Status.PROCESSING, Status.REVIEW_REQUIRED, Status.PROCESSED, Status.PROCESSING)


def write_changes(table: DocumentTable, changes: int) -> None:
    """`changes` item versions: documents of VERSIONS versions each, version by version."""
    t0 = datetime.now(UTC).replace(microsecond=0)
    docs = [
        DocumentItem(
            userId=f"user-{n % 50:03d}",
            documentId=f"doc-{n:06d}",
            status=Status.PROCESSING,
            createdAt=t0,
            updatedAt=t0,
            rawS3Uri=layout.s3_uri("raw", layout.raw_key(f"user-{n % 50:03d}", f"doc-{n:06d}", "invoice.xml")),
            rawEtag='"0123456789abcdef0123456789abcdef"',
            vendorName="ACME Lieferungen GmbH",
            updatedBy=actor(ActorKind.INGEST, "bench-run-1"),
        )
        for n in range(-(-changes // VERSIONS))
    ]
    written = 0
    for version in range(1, VERSIONS + 1):
        batch = [
            claim_put(
                d.evolve(
                    version=version,
                    status=STATUSES[version - 1],
                    updatedAt=t0 + timedelta(seconds=version),
                    updatedBy=actor(ActorKind.INGEST, f"bench-run-{version}"),
                ),
                version - 1 if version > 1 else None,
            )
            for d in docs[: max(0, min(len(docs), changes - written))]
        ]
        assert all(table.put_all(batch, "bench.put"))
        written += len(batch)


def bare_read(settings) -> tuple[int, float]:
    metrics = CallMetrics()
    arn = stream_arn(dynamodb_client(settings), settings.store.table_name, metrics)
    stream = TableStream(streams_client(settings), arn, metrics)
    started, count = time.perf_counter(), 0
    for shard in stream.shards():
        iterator = stream.iterator(shard.shard_id, None)
        while iterator is not None:
            records, iterator = stream.read(iterator)
            count += len(records)
            if not records:
                break
    return count, time.perf_counter() - started


def json_bytes(settings, sample: int = 500) -> float:
    """Mean size of a record as the Pipe hands it to Firehose (a sample from the stream)."""
    metrics = CallMetrics()
    arn = stream_arn(dynamodb_client(settings), settings.store.table_name, metrics)
    stream = TableStream(streams_client(settings), arn, metrics)
    shard = stream.shards()[0]
    records, _ = stream.read(stream.iterator(shard.shard_id, None), sample)
    return statistics.fmean(len(json.dumps(pipe_event(r, arn), default=str)) for r in records)


def parquet_log(settings) -> tuple[int, int, int]:
    """(objects, bytes, distinct eventIDs) of the delivered log."""
    s3 = s3_client(settings)
    keys = [
        o["Key"]
        for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket=settings.audit.audit_bucket, Prefix=layout.AUDIT_CHANGES_PREFIX
        )
        for o in page.get("Contents", [])
    ]
    size, ids = 0, set()
    for key in keys:
        body = s3.get_object(Bucket=settings.audit.audit_bucket, Key=key)["Body"].read()
        size += len(body)
        ids.update(pq.read_table(io.BytesIO(body), columns=["eventid"]).column("eventid").to_pylist())
    return len(keys), size, len(ids)


def measure(changes: int) -> dict:
    """Write `changes` versions on a fresh stack, read them back bare and through the stand-in."""
    with fresh_stack() as endpoints:
        settings = stage(endpoints, "bench-audit")
        table_ = DocumentTable(
            dynamodb_client(settings), settings.store.table_name, settings.store.index_name, CallMetrics()
        )
        started = time.perf_counter()
        write_changes(table_, changes)
        written_s = time.perf_counter() - started
        read, read_s = bare_read(settings)
        pipe = StagePipe.for_settings(settings)
        started = time.perf_counter()
        delivered = pipe.flush()
        pipe_s = time.perf_counter() - started
        objects, parquet, distinct = parquet_log(settings)
        sample = json_bytes(settings)
    return {
        "changes": changes,
        "read": read,
        "delivered": delivered,
        "writeSeconds": round(written_s, 1),
        "baseline": {
            "what": "the stream read alone",
            "seconds": round(read_s, 2),
            "recordsPerSecond": round(read / read_s),
        },
        "standIn": {"seconds": round(pipe_s, 2), "recordsPerSecond": round(delivered / pipe_s)},
        "standInOverBaseline": round(read_s / pipe_s, 2),
        "writerSeconds": round(pipe.firehose.delivered.seconds, 2),
        "writerRecordsPerSecond": round(delivered / pipe.firehose.delivered.seconds),
        "distinctRecords": distinct,
        "objects": objects,
        "jsonBytesPerRecord": round(sample),
        "parquetBytesPerRecord": round(parquet / distinct, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_audit", description=__doc__)
    parser.add_argument("--changes", type=int, default=10_000)
    args = parser.parse_args(argv)
    r = measure(args.changes)
    if not (r["read"] == r["delivered"] == r["distinctRecords"] == args.changes):
        print(f"the log does not hold one record per change: {r}", file=sys.stderr)
        return 1
    rows = [
        ["stream read alone (baseline)", r["baseline"]["seconds"], r["baseline"]["recordsPerSecond"]],
        ["stand-in: read, convert, Parquet, PUT", r["standIn"]["seconds"], r["standIn"]["recordsPerSecond"]],
        ["writer alone (convert, Parquet, PUT)", r["writerSeconds"], r["writerRecordsPerSecond"]],
    ]
    print(table(["", "seconds", "records/s"], rows))
    print(
        f"{r['distinctRecords']:,} distinct records in {r['objects']} object(s); {r['jsonBytesPerRecord']} JSON "
        f"bytes and {r['parquetBytesPerRecord']} Parquet bytes per record; "
        f"stand-in = {r['standInOverBaseline']} x the bare read"
    )
    write_result("audit", r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
