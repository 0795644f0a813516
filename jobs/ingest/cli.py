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
fixed) and prints what it moved; the next drain processes them. The old spellings (`ingest
--backfill`, `ingest --redrive-dlq`, `ingest` alone for a drain) work for one more release.

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
from typing import Any

from jobs.errors import ExitCode, SettingsError
from jobs.ingest.run import IngestOptions, IngestRun
from jobs.observability import CallMetrics
from jobs.progress import Ticker
from jobs.runtime import RunContext, run_job, with_mode
from jobs.settings import JobSettings
from jobs.store.clients import sqs_client
from jobs.store.queue import ArrivalQueue
from jobs.store.redrive import Redrive, redrive

logger = logging.getLogger(__name__)

PROG = "python -m jobs ingest"
MODES = ("drain", "backfill", "redrive")
OLD_FLAGS = {"--redrive-dlq": "redrive", "--backfill": "backfill"}


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    try:
        return int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard {text!r}: expected I/N, e.g. 0/4") from None


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


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The mode and its options (the old spellings rewritten); bad options exit 2 (argparse)."""
    return parser().parse_args(with_mode(argv, PROG, MODES, "drain", OLD_FLAGS))


def options_of(args: argparse.Namespace, settings: JobSettings) -> IngestOptions | None:
    """The run's options; None for `redrive`, which is no run. ValueError: options that disagree."""
    if args.mode == "redrive":
        return None
    index, count = getattr(args, "shard", None) or (settings.ingest.shard_index, settings.ingest.shard_count)
    idle = getattr(args, "idle_seconds", None)
    return IngestOptions(
        backfill=args.mode == "backfill",
        shard_index=index,
        shard_count=count,
        max_docs=args.max_docs,
        max_seconds=args.max_minutes * 60 if args.max_minutes is not None else None,
        idle_seconds=20 if idle is None else idle,
        dry_run=args.dry_run,
    )


def redrive_dead_letters(settings: JobSettings, sqs: Any = None, calls: CallMetrics | None = None) -> Redrive:
    """`ingest redrive`: the arrival queue's dead letters back into it (jobs.store.redrive)."""
    if not settings.store.arrivals_queue_url:
        raise SettingsError("no arrival queue configured (DOCUFLOW_ARRIVALS_QUEUE_URL)")
    metrics = calls or CallMetrics()
    client = sqs or sqs_client(settings)
    arrivals = ArrivalQueue(client, settings.store.arrivals_queue_url, metrics)
    moved = redrive(client, arrivals, metrics, move_task=settings.ingest.sqs_move_tasks)
    logger.info("dead letters moved back", extra=dataclasses.asdict(moved))
    return moved


def _ingest(context: RunContext, args: argparse.Namespace) -> int:
    settings = context.settings
    options = options_of(args, settings)
    if options is None:
        moved = redrive_dead_letters(settings, calls=context.calls)
        print(json.dumps(dataclasses.asdict(moved), indent=2))
        return ExitCode.SUCCESS
    ticker = Ticker("ingest")
    run = IngestRun(settings, options, context=context, on_document=ticker.advance)
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


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    return run_job("ingest", lambda context: _ingest(context, args))
