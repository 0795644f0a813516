"""`python -m jobs ingest [--backfill [--shard I/N]] [--max-docs N] [--max-minutes M] [--dry-run]`,
and `python -m jobs ingest --redrive-dlq`.

Without `--backfill` the run drains the arrival queue (the nightly mode) and ends when a receive
has waited `--idle-seconds` for nothing, or at `--max-docs` / `--max-minutes`; what is left stays
queued for the next run. `--backfill` sweeps the whole raw/ prefix instead. `--redrive-dlq`
moves the dead-letter queue's messages back to the arrival queue (after the cause is fixed) and
prints what it moved; the next drain processes them.

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
import signal
import sys
import threading
from types import FrameType
from typing import Any

from jobs.errors import ExitCode, InfrastructureError, RunStoppedError, SettingsError
from jobs.ingest.run import IngestOptions, IngestRun
from jobs.observability import CallMetrics, setup_logging
from jobs.progress import Ticker
from jobs.settings import JobSettings
from jobs.store.clients import sqs_client
from jobs.store.queue import ArrivalQueue
from jobs.store.redrive import Redrive, redrive

logger = logging.getLogger(__name__)

EXIT_SETTINGS = ExitCode.BAD_INPUT
EXIT_INFRASTRUCTURE = ExitCode.UNAVAILABLE
EXIT_SIGNAL = {signal.SIGINT: ExitCode.SIGINT, signal.SIGTERM: ExitCode.SIGTERM}


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    try:
        return int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard {text!r}: expected I/N, e.g. 0/4") from None


def parse_options(argv: list[str], settings: JobSettings) -> IngestOptions | None:
    """The run's options; None for `--redrive-dlq`, which is no run."""
    parser = argparse.ArgumentParser(
        prog="python -m jobs ingest", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--backfill", action="store_true", help="sweep the whole raw/ prefix instead of draining the queue"
    )
    parser.add_argument(
        "--shard", type=_shard, help="I/N of a backfill (default from SHARD_INDEX/SHARD_COUNT, else 0/1)"
    )
    parser.add_argument("--max-docs", type=int, default=None, help="stop claiming after N documents")
    parser.add_argument("--max-minutes", type=float, default=None, help="stop taking new work after M minutes")
    parser.add_argument(
        "--idle-seconds", type=int, default=None, help="drain: end once a receive waited this long (0-20, default 20)"
    )
    parser.add_argument("--dry-run", action="store_true", help="decide and report, write nothing")
    parser.add_argument(
        "--redrive-dlq", action="store_true", help="move the dead-letter queue's messages back to the arrival queue"
    )
    args = parser.parse_args(argv)
    if args.redrive_dlq:
        given = [
            name
            for name in ("backfill", "shard", "max_docs", "max_minutes", "idle_seconds", "dry_run")
            if getattr(args, name)
        ]
        if given:
            parser.error(f"--redrive-dlq takes no other option (got --{given[0].replace('_', '-')})")
        return None
    index, count = args.shard or (settings.shard_index, settings.shard_count)
    try:
        return IngestOptions(
            backfill=args.backfill,
            shard_index=index,
            shard_count=count,
            max_docs=args.max_docs,
            max_seconds=args.max_minutes * 60 if args.max_minutes is not None else None,
            idle_seconds=20 if args.idle_seconds is None else args.idle_seconds,
            dry_run=args.dry_run,
        )
    except ValueError as exc:
        parser.error(str(exc))
        raise  # unreachable: parser.error exits


def _stop_on_signals(run: IngestRun) -> list[int]:
    """Install the handlers; the returned list receives the signals that arrived."""
    received: list[int] = []

    def handle(signum: int, _frame: FrameType | None) -> None:
        # The handler runs between two bytecodes of the main thread, possibly inside a lock it
        # holds: the stop itself runs on a thread of its own.
        received.append(signum)
        name = signal.Signals(signum).name
        threading.Thread(target=run.stop, args=(f"stopped by {name}",), name="stop", daemon=True).start()

    for signum in EXIT_SIGNAL:
        signal.signal(signum, handle)
    return received


def redrive_dead_letters(settings: JobSettings, sqs: Any = None) -> Redrive:
    """`ingest --redrive-dlq`: the arrival queue's dead letters back into it (jobs.store.redrive)."""
    if not settings.arrivals_queue_url:
        raise SettingsError("no arrival queue configured (DOCUFLOW_ARRIVALS_QUEUE_URL)")
    metrics = CallMetrics()
    client = sqs or sqs_client(settings)
    arrivals = ArrivalQueue(client, settings.arrivals_queue_url, metrics)
    moved = redrive(client, arrivals, metrics, move_task=settings.sqs_move_tasks)
    logger.info("dead letters moved back", extra=dataclasses.asdict(moved))
    return moved


def _redrive(settings: JobSettings) -> int:
    try:
        moved = redrive_dead_letters(settings)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETTINGS
    except InfrastructureError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INFRASTRUCTURE
    print(json.dumps(dataclasses.asdict(moved), indent=2))
    return 0


def main(argv: list[str]) -> int:
    setup_logging()
    try:
        settings = JobSettings.from_env()
        options = parse_options(argv, settings)
        if options is None:
            return _redrive(settings)
        ticker = Ticker("ingest")
        run = IngestRun(settings, options, on_document=ticker.advance)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETTINGS
    signals = _stop_on_signals(run)
    try:
        with ticker.shown():
            summary = run.execute()
    except RunStoppedError as exc:
        print(f"stopped: {exc}; unfinished claims and messages were handed back", file=sys.stderr)
        return EXIT_SIGNAL[signal.Signals(signals[0])] if signals else EXIT_INFRASTRUCTURE
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETTINGS
    except InfrastructureError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INFRASTRUCTURE
    print(summary.model_dump_json(indent=2))
    if summary.failed_ratio_breached(settings.failed_ratio_threshold):
        print(
            f"failed: {summary.statuses.get('FAILED', 0)} of {summary.processed} documents FAILED "
            f"(more than {settings.failed_ratio_threshold:.0%})",
            file=sys.stderr,
        )
        return ExitCode.FINDINGS
    return ExitCode.SUCCESS
