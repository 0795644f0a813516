"""What publishing a run's metrics adds to a night: requests and time, against the same night
without them.

Each repeat seeds a fresh stage with the same night (the demo corpus, a fixed seed), runs the
ingest drain and then a live reconcile that writes its report, each in its own run context as
`python -m jobs` does, and times the night's work apart from the context's `flush` (the one
PutMetricData of jobs.runtime.run_metrics, with the CloudWatch client it builds). The night
without metrics is the same run with the flush left out: the jobs hand their metrics to the
context and do nothing else for them (jobs/runtime/context.py). Requests are counted by the
run's own call metrics, before and after the flush.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from bench.common import fresh_stack, stage, table, write_result
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.ingest.plans import DrainPlan
from jobs.ingest.run import IngestRun
from jobs.local.stack import Endpoints
from jobs.observability import CallMetrics
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.run import ReconcileRun
from jobs.runtime.context import RunContext
from jobs.settings import JobSettings
from jobs.store.clients import s3_client


def _requests(calls: CallMetrics) -> int:
    return sum(op["calls"] for op in calls.summary().values())


def _measured(context: RunContext, work: Callable[[], object]) -> dict[str, float]:
    """The night's seconds and requests, then what the flush added to them."""
    clock = time.perf_counter()
    work()
    night = time.perf_counter() - clock
    before = _requests(context.calls)
    clock = time.perf_counter()
    context.flush()
    publish = time.perf_counter() - clock
    return {
        "nightSeconds": night,
        "nightRequests": before,
        "publishSeconds": publish,
        "publishRequests": _requests(context.calls) - before,
    }


def one_night(endpoints: Endpoints, name: str, users: int, docs: int) -> dict[str, dict[str, float]]:
    settings: JobSettings = stage(endpoints, name)
    upload(
        s3_client(settings), settings.store.raw_bucket, generate(users, docs, bad_ratio=0.05, ocr_ratio=0, seed=34), 16
    )
    ingest = RunContext("ingest", settings)
    run = IngestRun(settings, DrainPlan(idle_seconds=1), context=ingest)
    measured = {"ingest": _measured(ingest, run.execute)}
    reconcile = RunContext("reconcile", settings)
    audit = ReconcileRun(settings, LivePlan(grace=timedelta(0)), context=reconcile)
    measured["reconcile"] = _measured(reconcile, audit.execute)
    return measured


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_run_metrics", description=__doc__)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--docs", type=int, default=300, help="the night's documents, over --users users")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with fresh_stack() as endpoints:
        nights = [one_night(endpoints, f"met{i}", args.users, args.docs) for i in range(args.repeat)]
    result: dict[str, Any] = {"documents": args.docs, "repeat": args.repeat, "jobs": {}}
    rows = []
    for job in ("ingest", "reconcile"):
        runs = [n[job] for n in nights]
        median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        share = median["publishSeconds"] / median["nightSeconds"]
        result["jobs"][job] = {**{k: round(v, 4) for k, v in median.items()}, "publishShareOfNight": round(share, 4)}
        rows.append(
            [
                job,
                f"{median['nightRequests']:.0f}",
                f"+{median['publishRequests']:.0f}",
                f"{median['nightSeconds']:.2f}",
                f"+{median['publishSeconds'] * 1000:.0f} ms",
                f"{1 + share:.3f}x",
            ]
        )
    headers = ["job", "requests without", "with metrics", "night s without", "with metrics", "time ratio"]
    print(table(headers, rows))
    write_result("run-metrics", result)
    return result


if __name__ == "__main__":
    main()
