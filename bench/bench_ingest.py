"""Ingest throughput on the local stack: the job vs a naive sequential loop vs the emulator ceiling.

The ceiling issues the minimum requests per document (one GET, one PUT of as many bytes, one item
write) from a
tuned concurrent client with no extraction; the local servers, not the job, bound every figure,
so the ratio job/ceiling is the number that matters. Each contender writes to its own fresh
stage (table with stream, buckets) on fresh servers of its own, seeded with the same corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from bench.common import fresh_stack, run_measured, stage, table, write_result
from jobs.contract import DocumentItem, Status, layout
from jobs.contract.objects import ObjectInfo
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.extract import extract_document
from jobs.local.stack import Endpoints
from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client
from jobs.store.dynamo import to_wire
from jobs.store.s3 import Buckets


def _raw_objects(settings: JobSettings) -> list[ObjectInfo]:
    buckets = Buckets(s3_client(settings), CallMetrics())
    return [obj for page in buckets.list_pages(settings.raw_bucket, layout.RAW_PREFIX) for obj in page]


def _summary_item(obj, status: Status) -> dict:  # noqa: ANN001
    raw = layout.parse_raw_key(obj.key)
    now = layout.utc_now()
    return DocumentItem(
        userId=raw.user_id, documentId=raw.document_id, status=status, createdAt=obj.last_modified,
        updatedAt=now, rawS3Uri=obj.uri, rawEtag=obj.etag,
    ).to_item()


def ceiling(source: JobSettings, target: JobSettings, objects: list, threads: int) -> float:
    s3 = s3_client(source)
    ddb = dynamodb_client(source)

    def one(obj) -> None:  # noqa: ANN001
        body = s3.get_object(Bucket=obj.bucket, Key=obj.key)["Body"].read()
        raw = layout.parse_raw_key(obj.key)
        s3.put_object(Bucket=target.processed_bucket, Key=layout.result_key(raw.user_id, raw.document_id), Body=body)
        ddb.put_item(TableName=target.table_name, Item=to_wire(_summary_item(obj, Status.PROCESSED)))

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, objects))
    return len(objects) / (time.perf_counter() - started)


def naive(source: JobSettings, target: JobSettings, objects: list) -> float:
    s3 = s3_client(source)
    ddb = dynamodb_client(source)
    started = time.perf_counter()
    for obj in objects:
        body = s3.get_object(Bucket=obj.bucket, Key=obj.key)["Body"].read()
        raw = layout.parse_raw_key(obj.key)
        outcome = extract_document(body, raw.filename)
        s3.put_object(Bucket=target.processed_bucket, Key=layout.result_key(raw.user_id, raw.document_id),
                      Body=outcome.model_dump_json().encode())
        ddb.put_item(TableName=target.table_name, Item=to_wire(_summary_item(obj, outcome.validation.status)))
    return len(objects) / (time.perf_counter() - started)


@contextmanager
def seeded(docs: int, threads: int) -> Iterator[tuple[Endpoints, JobSettings, list[ObjectInfo], int]]:
    """Fresh servers with the corpus in raw/: every contender starts from the same state (DynamoDB
    Local slows down as stream records pile up, so a shared server would favour whoever runs first)."""
    with fresh_stack() as endpoints:
        source = stage(endpoints, "bench")
        kinds = upload(s3_client(source), source.raw_bucket, generate(20, docs, seed=11), threads)
        yield endpoints, source, _raw_objects(source), sum(kinds.values())


def run_job(source: JobSettings, job_threads: int | None) -> tuple[dict, float]:
    env = {**os.environ, **source.env(), "DOCUFLOW_LOG_FORMAT": "json"}
    if job_threads:
        env["DOCUFLOW_IO_THREADS"] = str(job_threads)
    done, rss = run_measured([sys.executable, "-m", "jobs", "ingest"], env)
    if done.returncode != 0:
        raise SystemExit(f"ingest failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout), rss


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--naive-docs", type=int, default=500, help="the naive loop is slow: time a subset")
    parser.add_argument("--threads", type=int, default=16, help="ceiling and seeding threads")
    parser.add_argument("--job-threads", type=int, default=None, help="the job's I/O threads (default: the job's own)")
    parser.add_argument("--repeat", type=int, default=3, help="ceiling/job pairs; medians are reported (one run varies by ±10%%)")
    args = parser.parse_args(argv)
    ceilings, jobs, summaries, rss = [], [], [], []
    for _ in range(args.repeat):
        with seeded(args.docs, args.threads) as (endpoints, source, objects, _):
            ceilings.append(ceiling(source, stage(endpoints, "benchceil"), objects, args.threads))
        with seeded(args.docs, args.threads) as (_, source, _, count):
            summary, job_rss = run_job(source, args.job_threads)
        jobs.append(summary["processed"] / summary["seconds"])
        summaries.append(summary)
        rss.append(job_rss)
        print(f"pair {len(jobs)}: ceiling {ceilings[-1]:.1f} docs/s, job {jobs[-1]:.1f} docs/s ({jobs[-1] / ceilings[-1]:.2f} x)", flush=True)
    with seeded(args.naive_docs, args.threads) as (endpoints, source, objects, _):
        naive_rate = naive(source, stage(endpoints, "benchnaive"), objects)
    ceiling_rate, job_rate = statistics.median(ceilings), statistics.median(jobs)
    summary = summaries[jobs.index(statistics.median_high(jobs))]
    rows = [
        ["emulator ceiling (GET+PUT+PutItem, no extraction)", f"{ceiling_rate:.1f}", "1.00"],
        ["naive sequential loop", f"{naive_rate:.1f}", f"{naive_rate / ceiling_rate:.2f}"],
        ["ingest job", f"{job_rate:.1f}", f"{job_rate / ceiling_rate:.2f}"],
    ]
    print(f"\nIngest, {summary['processed']} documents ({count} seeded), fresh servers per run, median of {args.repeat}")
    print(table(["contender", "docs/s", "x ceiling"], rows))
    print(f"job vs naive: {job_rate / naive_rate:.2f}x; job peak RSS (process tree): {max(rss)} MB")
    result = {
        "documents": summary["processed"],
        "repeat": args.repeat,
        "docsPerSecond": {"ceiling": round(ceiling_rate, 1), "naive": round(naive_rate, 1), "job": round(job_rate, 1)},
        "ratios": {"jobOverCeiling": round(job_rate / ceiling_rate, 3), "jobOverNaive": round(job_rate / naive_rate, 3)},
        "runs": [{"ceiling": round(c, 1), "job": round(j, 1), "ratio": round(j / c, 3)} for c, j in zip(ceilings, jobs, strict=True)],
        "jobPeakRssMb": max(rss),
        "statuses": summary["statuses"],
        "calls": summary["calls"],
    }
    write_result("ingest", result)
    return result


if __name__ == "__main__":
    main()
