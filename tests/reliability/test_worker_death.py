"""An extraction worker killed mid-run (out of memory, a native crash): the run goes on.

A dead worker breaks a ProcessPoolExecutor for good; the ingest replaces the pool and gives the
documents that were in flight one more try, so the run completes as a clean run would.
"""

from __future__ import annotations

import os
import signal
import threading

import psutil
from reliability_helpers import assert_clean

from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun

DOCS = 150


def extraction_workers() -> list[psutil.Process]:
    """The workers of our forkserver (multiprocessing keeps one per parent process)."""
    servers = [p for p in psutil.Process().children() if "forkserver" in " ".join(p.cmdline())]
    return [worker for server in servers for worker in server.children()]


def test_a_killed_extraction_worker_fails_no_document(stack) -> None:
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(4, DOCS, bad_ratio=0.0, seed=3))
    some_done = threading.Event()
    done = []

    def on_document(result: object) -> None:
        done.append(result)
        if len(done) == 20:
            some_done.set()

    run = IngestRun(stack.settings, BackfillPlan(), on_document=on_document)
    outcome: list[object] = []
    runner = threading.Thread(target=lambda: outcome.append(run.execute()))
    runner.start()
    assert some_done.wait(timeout=120), "the run never got going"
    workers = extraction_workers()
    assert workers, "no extraction worker found to kill"
    os.kill(workers[0].pid, signal.SIGKILL)
    runner.join(timeout=240)

    summary = outcome[0]
    assert summary.outcome == "completed" and summary.processed == DOCS
    assert not [f for f in summary.failures if "INTERNAL" in f.reason], summary.failures
    assert summary.statuses.get("FAILED", 0) == 0
    assert_clean(stack, expected=DOCS)
