"""`python -m jobs ingest drain|backfill|redrive`: the nightly ingest, in one of three modes.

    ingest drain [--max-docs N] [--max-minutes M] [--idle-seconds S] [--dry-run]
    ingest backfill [--shard I/N] [--max-docs N] [--max-minutes M] [--dry-run]
    ingest redrive

`drain` (the nightly mode) takes work from the arrival queue and ends when a receive has waited
`--idle-seconds` for nothing, or at `--max-docs`, or after `--max-minutes`: then it claims nothing
more, lets what it holds finish, hands back the rest and ends as completed (the summary's
`stoppedFor` says why), so the scheduled drain is done before the reconcile judges the night.
What is left stays queued for the next run. `backfill` sweeps the whole raw/ prefix instead.
`redrive` moves the dead-letter queue's messages back to the arrival queue (after the cause is
fixed) and prints what it moved; the next drain processes them. Each mode is its plan
(jobs/ingest/plans.py).

Exit codes (jobs.errors.ExitCode, docs/operations.md): 0 when the run completed (FAILED documents
are recorded, not errors); 1 when it completed but more of its documents FAILED than
DOCUFLOW_FAILED_RATIO_THRESHOLD allows (a bad night, never a silent one); 2 for bad options or
settings; 3 when AWS or the local stack is unreachable or denies access after bounded retries;
130/143 when stopped by SIGINT/SIGTERM (claims and messages handed back first).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from typing import TYPE_CHECKING

from jobs.errors import ExitCode, SettingsError
from jobs.ingest.job import JOB
from jobs.ingest.plans import BackfillPlan, DrainPlan, Plan, RedrivePlan, Shard
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.progress import Ticker
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.settings import JobSettings
from jobs.store.clients import sqs_client
from jobs.store.queue import ArrivalQueue
from jobs.store.redrive import Redrive, redrive

if TYPE_CHECKING:
    from jobs.store.clients import SQSClient

logger = logging.getLogger(__name__)

PROG = "python -m jobs ingest"
MODES = ("drain", "backfill", "redrive")


def _shard(text: str) -> Shard:
    index, _, count = text.partition("/")
    try:
        return Shard(index=int(index), count=int(count))
    except ValueError:  # not numbers, or pydantic's: not 0 <= index < count
        raise argparse.ArgumentTypeError(f"--shard {text!r}: expected I/N with 0 <= I < N, e.g. 0/4") from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = p.add_subparsers(dest="mode", required=True, metavar="{" + ",".join(MODES) + "}")
    drain = modes.add_parser("drain", help="drain the arrival queue (the nightly mode)")
    backfill = modes.add_parser("backfill", help="sweep the whole raw/ prefix instead of draining the queue")
    modes.add_parser("redrive", help="move the dead-letter queue's messages back to the arrival queue")
    backfill.add_argument(
        "--shard", type=_shard, help="I/N of the sweep (default from SHARD_INDEX/SHARD_COUNT, else 0/1)"
    )
    for mode in (drain, backfill):
        mode.add_argument("--max-docs", type=int, default=None, help="stop claiming after N documents")
        mode.add_argument(
            "--max-minutes", type=float, default=None, help="stop taking new work after M minutes, then end (exit 0)"
        )
        mode.add_argument("--dry-run", action="store_true", help="decide and report, write nothing")
    drain.add_argument(
        "--idle-seconds", type=int, default=None, help="end once a receive waited this long (0-20, default 20)"
    )
    return p


def plan_of(args: argparse.Namespace) -> Plan:
    """The plan the subcommand's arguments name (ValueError: one they cannot)."""
    if args.mode == "redrive":
        return RedrivePlan()
    bounds = {
        "max_docs": args.max_docs,
        "max_seconds": args.max_minutes * 60 if args.max_minutes is not None else None,
        "dry_run": args.dry_run,
    }
    if args.mode == "backfill":
        return BackfillPlan(shard=args.shard, **bounds)
    return DrainPlan(**bounds, **({} if args.idle_seconds is None else {"idle_seconds": args.idle_seconds}))


def redrive_dead_letters(
    settings: JobSettings, sqs: SQSClient | None = None, calls: CallMetrics | None = None
) -> Redrive:
    """`ingest redrive`: the arrival queue's dead letters back into it (jobs.store.redrive)."""
    if not settings.store.arrivals_queue_url:
        raise SettingsError("no arrival queue configured (DOCUFLOW_ARRIVALS_QUEUE_URL)")
    metrics = calls or CallMetrics()
    client = sqs or sqs_client(settings)
    arrivals = ArrivalQueue(client, settings.store.arrivals_queue_url, metrics)
    moved = redrive(client, arrivals, metrics, move_task=settings.ingest.sqs_move_tasks)
    logger.info("dead letters moved back", extra=dataclasses.asdict(moved))
    return moved


def _ingest(context: RunContext, plan: Plan) -> int:
    settings = context.settings
    if isinstance(plan, RedrivePlan):
        moved = redrive_dead_letters(settings, calls=context.calls)
        print(json.dumps(dataclasses.asdict(moved), indent=2))
        return ExitCode.SUCCESS
    ticker = Ticker("ingest")
    run = IngestRun(settings, plan, context=context, on_document=ticker.advance)
    with ticker.shown():
        summary = run.execute()
    print(summary.model_dump_json(indent=2))
    if summary.failed_ratio_breached(settings.ingest.failed_ratio_threshold):
        print(
            f"failed: {summary.statuses.get('FAILED', 0)} of {summary.processed} documents FAILED "
            f"(more than {settings.ingest.failed_ratio_threshold:.0%})",
            file=sys.stderr,
        )
        return ExitCode.FINDINGS
    return ExitCode.SUCCESS


CLI = Cli(JOB, parser, plan_of, _ingest)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
