"""Ingest throughput on the local stack: the job vs the emulator ceiling of its own request mix.

Two modes, each against a ceiling that issues the minimum requests per document from a tuned
concurrent client with no extraction:

- drain (the nightly default): ReceiveMessage (10 a call) → GET → PUT result → PutItem →
  DeleteMessageBatch; the job's messages come from the raw bucket's own notifications;
- backfill (`--backfill`): the listing sweep, against GET → PUT → PutItem per listed object.

The local servers, not the job, bound every figure, so job/ceiling is the number that matters.
Each contender runs on fresh servers of its own, seeded with the same corpus (DynamoDB Local
slows down as stream records pile up, so a shared server would favour whoever runs first). A
naive sequential loop with extraction is the second baseline.

`--baseline-ref REF` also runs the ingest of an earlier commit (checked out with `git archive`
into a temporary directory) in every drain pair, on its own fresh servers: the change's cost is
the ratio of the two jobs' job/ceiling in the same run, and its requests per document beside the
current job's. `--duplicates N` measures what duplicate detection costs a duplicate: a drain of N
uploads of one file against a drain of N distinct files.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from bench.common import fresh_stack, run_measured, stage, table, write_result
from jobs.contract import DocumentItem, ObjectInfo, Status, layout
from jobs.contract.events import Arrival, parse_body
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.extract import extract_document
from jobs.local.stack import Endpoints, job_env
from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client, sqs_client
from jobs.store.dynamo_wire import to_wire
from jobs.store.s3 import Buckets

IDLE_SECONDS = 1  # both the job and the drain ceiling end on one empty receive of this length
REPO_ROOT = Path(__file__).resolve().parents[1]
# Writes of the run's own summary report: not per-document work.
_RUN_REPORT = "s3.PutObject.once"


def _raw_objects(settings: JobSettings) -> list[ObjectInfo]:
    buckets = Buckets(s3_client(settings), CallMetrics())
    return [obj for page in buckets.list_pages(settings.store.raw_bucket, layout.RAW_PREFIX) for obj in page]


def _summary_item(obj: ObjectInfo, status: Status) -> dict:
    raw = layout.parse_raw_key(obj.key)
    return DocumentItem(
        userId=raw.user_id,
        documentId=raw.document_id,
        status=status,
        createdAt=obj.last_modified,
        updatedAt=layout.utc_now(),
        rawS3Uri=obj.uri,
        rawEtag=obj.etag,
    ).to_item()


class _Minimal:
    """The least work per document: read the raw bytes, write them as the result, write an item."""

    def __init__(self, settings: JobSettings) -> None:
        self.settings, self.s3, self.ddb = settings, s3_client(settings), dynamodb_client(settings)

    def one(self, obj: ObjectInfo) -> None:
        body = self.s3.get_object(Bucket=obj.bucket, Key=obj.key)["Body"].read()
        raw = layout.parse_raw_key(obj.key)
        self.s3.put_object(
            Bucket=self.settings.store.processed_bucket, Key=layout.result_key(raw.user_id, raw.document_id), Body=body
        )
        self.ddb.put_item(TableName=self.settings.store.table_name, Item=to_wire(_summary_item(obj, Status.PROCESSED)))


def sweep_ceiling(settings: JobSettings, threads: int) -> float:
    objects, minimal = _raw_objects(settings), _Minimal(settings)
    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(minimal.one, objects))
    return len(objects) / (time.perf_counter() - started)


def drain_ceiling(settings: JobSettings, threads: int) -> float:
    minimal, sqs, url = _Minimal(settings), sqs_client(settings), settings.store.arrivals_queue_url
    done: list[int] = []

    def receiver() -> None:
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=IDLE_SECONDS).get(
            "Messages", []
        ):
            for message in messages:
                for record in parse_body(message["Body"]):
                    if isinstance(record, Arrival):
                        minimal.one(record.obj)
                        done.append(1)
            sqs.delete_message_batch(
                QueueUrl=url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
            )

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(receiver) for _ in range(threads)]:
            future.result()
    return len(done) / (time.perf_counter() - started)


def naive(settings: JobSettings, objects: list[ObjectInfo]) -> float:
    s3, ddb = s3_client(settings), dynamodb_client(settings)
    started = time.perf_counter()
    for obj in objects:
        body = s3.get_object(Bucket=obj.bucket, Key=obj.key)["Body"].read()
        raw = layout.parse_raw_key(obj.key)
        outcome = extract_document(body, raw.filename)
        s3.put_object(
            Bucket=settings.store.processed_bucket,
            Key=layout.result_key(raw.user_id, raw.document_id),
            Body=outcome.model_dump_json().encode(),
        )
        ddb.put_item(TableName=settings.store.table_name, Item=to_wire(_summary_item(obj, outcome.validation.status)))
    return len(objects) / (time.perf_counter() - started)


@contextmanager
def seeded(docs: int, threads: int) -> Iterator[tuple[Endpoints, JobSettings, int]]:
    """Fresh servers with the corpus uploaded to raw/ (its notifications fill the arrival queue)."""
    with fresh_stack() as endpoints:
        settings = stage(endpoints, "bench")
        kinds = upload(s3_client(settings), settings.store.raw_bucket, generate(20, docs, seed=11), threads)
        yield endpoints, settings, sum(kinds.values())


@contextmanager
def checked_out(ref: str | None) -> Iterator[Path | None]:
    """The tree of commit `ref` in a temporary directory (None: no baseline asked for)."""
    if ref is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="docuflow-baseline-") as tmp:
        archive = subprocess.run(["git", "archive", ref], cwd=REPO_ROOT, capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


def requests_per_document(summary: dict) -> float:
    calls = sum(v["calls"] for k, v in summary["calls"].items() if k != _RUN_REPORT)
    return round(calls / max(summary["processed"], 1), 3)


def run_job(
    endpoints: Endpoints, settings: JobSettings, mode: list[str], job_threads: int | None, tree: Path | None = None
) -> tuple[dict, float]:
    """The ingest job of this tree (or of `tree`, an earlier commit's) on the seeded servers."""
    env = {**os.environ, **job_env(endpoints, settings), "DOCUFLOW_LOG_FORMAT": "json"}
    if job_threads:
        env["DOCUFLOW_IO_THREADS"] = str(job_threads)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    done, rss = run_measured([sys.executable, "-m", "jobs", "ingest", *mode], env, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"ingest failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout), rss


def pairs(
    name: str,
    mode: list[str],
    ceiling: Callable[[JobSettings, int], float],
    args: argparse.Namespace,
    repeat: int,
    baseline: Path | None = None,
) -> dict:
    ceilings, jobs, summaries, rss, earlier = [], [], [], [], []
    for _ in range(repeat):
        with seeded(args.docs, args.threads) as (_, settings, _):
            ceilings.append(ceiling(settings, args.threads))
        if baseline is not None:
            with seeded(args.docs, args.threads) as (endpoints, settings, _):
                before, _ = run_job(endpoints, settings, mode, args.job_threads, baseline)
            earlier.append(before)
        with seeded(args.docs, args.threads) as (endpoints, settings, _):
            summary, job_rss = run_job(endpoints, settings, mode, args.job_threads)
        jobs.append(summary["processed"] / summary["seconds"])
        summaries.append(summary)
        rss.append(job_rss)
        was = f", baseline {_rate(earlier[-1]) / ceilings[-1]:.2f} x" if earlier else ""
        print(
            f"{name} pair {len(jobs)}: ceiling {ceilings[-1]:.1f} docs/s, job {jobs[-1]:.1f} docs/s "
            f"({jobs[-1] / ceilings[-1]:.2f} x{was})",
            flush=True,
        )
    ceiling_rate, job_rate = statistics.median(ceilings), statistics.median(jobs)
    summary = summaries[jobs.index(statistics.median_high(jobs))]
    result = {
        "documents": summary["processed"],
        "repeat": repeat,
        "docsPerSecond": {"ceiling": round(ceiling_rate, 1), "job": round(job_rate, 1)},
        "jobOverCeiling": round(job_rate / ceiling_rate, 3),
        "runs": [
            {"ceiling": round(c, 1), "job": round(j, 1), "ratio": round(j / c, 3)}
            for c, j in zip(ceilings, jobs, strict=True)
        ],
        "jobPeakRssMb": max(rss),
        "statuses": summary["statuses"],
        "requestsPerDocument": requests_per_document(summary),
        "calls": summary["calls"],
    }
    if earlier:
        result["baseline"] = _baseline(earlier, ceilings, ceiling_rate, job_rate)
    return result


def _rate(summary: dict) -> float:
    return summary["processed"] / summary["seconds"]


def _baseline(earlier: list[dict], ceilings: list[float], ceiling_rate: float, job_rate: float) -> dict:
    """The earlier commit's job beside this one: its job/ceiling, and this job's over it."""
    rates = [_rate(s) for s in earlier]
    rate = statistics.median(rates)
    picked = earlier[rates.index(statistics.median_high(rates))]
    return {
        "docsPerSecond": round(rate, 1),
        "jobOverCeiling": round(rate / ceiling_rate, 3),
        "ratios": [round(r / c, 3) for r, c in zip(rates, ceilings, strict=True)],
        "requestsPerDocument": requests_per_document(picked),
        "calls": picked["calls"],
        "currentOverBaseline": round(job_rate / rate, 3),
    }


def duplicates(count: int, threads: int) -> dict:
    """Requests per document of a drain of `count` uploads of one file vs `count` distinct files."""
    one = next(d for d in generate(1, 50, bad_ratio=0, review_ratio=0, seed=17) if d.kind == "ubl")
    measured = {}
    for name, bodies in (("distinct", None), ("copies", one.body)):
        with fresh_stack() as endpoints:
            settings = stage(endpoints, "bench")
            if bodies is None:
                upload(
                    s3_client(settings),
                    settings.store.raw_bucket,
                    generate(1, count, bad_ratio=0, review_ratio=0, seed=18),
                    threads,
                )
            else:
                client = s3_client(settings)
                for n in range(count):
                    client.put_object(
                        Bucket=settings.store.raw_bucket,
                        Key=layout.raw_key("user-0000", f"copy-{n:04d}", one.filename),
                        Body=bodies,
                    )
            summary, _ = run_job(endpoints, settings, ["drain", "--idle-seconds", str(IDLE_SECONDS)], None)
        measured[name] = {
            "processed": summary["processed"],
            "duplicates": summary.get("duplicateCount", 0),
            "requestsPerDocument": requests_per_document(summary),
            "calls": {k: v["calls"] for k, v in summary["calls"].items()},
        }
    flagged = measured["copies"]["duplicates"]
    extra = measured["copies"]["requestsPerDocument"] - measured["distinct"]["requestsPerDocument"]
    return {**measured, "extraRequestsPerDuplicate": round(extra * count / max(flagged, 1), 3)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--naive-docs", type=int, default=500, help="the naive loop is slow: time a subset")
    parser.add_argument("--threads", type=int, default=16, help="ceiling and seeding threads")
    parser.add_argument("--job-threads", type=int, default=None, help="the job's I/O threads (default: the job's own)")
    parser.add_argument("--repeat", type=int, default=3, help="ceiling/job pairs of the drain; medians are reported")
    parser.add_argument("--baseline-ref", help="also run this commit's ingest in every drain pair (git ref)")
    parser.add_argument("--duplicates", type=int, default=100, help="uploads of one file for the duplicates figure")
    parser.add_argument("--drain-only", action="store_true", help="the drain pairs (and duplicates) only")
    args = parser.parse_args(argv)
    with checked_out(args.baseline_ref) as baseline:
        drain = pairs(
            "drain", ["drain", "--idle-seconds", str(IDLE_SECONDS)], drain_ceiling, args, args.repeat, baseline
        )
    result: dict = {"documents": drain["documents"], "drain": drain}
    rows = [
        [
            "drain: emulator ceiling (receive+GET+PUT+PutItem+delete)",
            f"{drain['docsPerSecond']['ceiling']:.1f}",
            "1.00",
        ],
        ["drain: ingest job", f"{drain['docsPerSecond']['job']:.1f}", f"{drain['jobOverCeiling']:.2f}"],
    ]
    if "baseline" in drain:
        was = drain["baseline"]
        rows.append(
            [f"drain: ingest job of {args.baseline_ref}", f"{was['docsPerSecond']:.1f}", f"{was['jobOverCeiling']:.2f}"]
        )
        result["baselineRef"] = args.baseline_ref
    if args.duplicates:
        result["duplicates"] = duplicates(args.duplicates, args.threads)
    if not args.drain_only:
        backfill = pairs("backfill", ["backfill"], sweep_ceiling, args, 1)
        with seeded(args.naive_docs, args.threads) as (_, settings, _):
            naive_rate = naive(settings, _raw_objects(settings))
        rows += [
            ["backfill: emulator ceiling (GET+PUT+PutItem)", f"{backfill['docsPerSecond']['ceiling']:.1f}", "1.00"],
            [
                "backfill: ingest job --backfill",
                f"{backfill['docsPerSecond']['job']:.1f}",
                f"{backfill['jobOverCeiling']:.2f}",
            ],
            ["naive sequential loop (with extraction)", f"{naive_rate:.1f}", "-"],
        ]
        result |= {
            "backfill": backfill,
            "naiveDocsPerSecond": round(naive_rate, 1),
            "drainOverNaive": round(drain["docsPerSecond"]["job"] / naive_rate, 3),
        }
    print(f"\nIngest, {drain['documents']} documents, fresh servers per run; drain median of {args.repeat}")
    print(table(["contender", "docs/s", "x its ceiling"], rows))
    _print_requests(result)
    write_result("ingest" if not args.drain_only else "ingest-drain", result)
    return result


def _print_requests(result: dict) -> None:
    drain = result["drain"]
    line = f"requests per document (drain): {drain['requestsPerDocument']}"
    if "baseline" in drain:
        was = drain["baseline"]
        line += (
            f" (baseline {was['requestsPerDocument']}); job/ceiling now over baseline: {was['currentOverBaseline']:.3f}"
        )
    print(line)
    if "duplicates" in result:
        dup = result["duplicates"]
        print(
            f"duplicates: {dup['copies']['duplicates']} of {dup['copies']['processed']} copies flagged; requests per "
            f"document {dup['copies']['requestsPerDocument']} vs {dup['distinct']['requestsPerDocument']} distinct "
            f"(+{dup['extraRequestsPerDuplicate']} per duplicate)"
        )


if __name__ == "__main__":
    main()
