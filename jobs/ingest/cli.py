"""`python -m jobs ingest [--backfill [--shard I/N]] [--max-docs N] [--max-minutes M] [--dry-run]`.

Without `--backfill` the run drains the arrival queue (the nightly mode) and ends when a receive
has waited `--idle-seconds` for nothing, or at `--max-docs` / `--max-minutes`; what is left stays
queued for the next run. `--backfill` sweeps the whole raw/ prefix instead.

Exit 0 when the run completed (FAILED documents are recorded, not errors); 2 for bad options or
settings; 3 when AWS or the local stack is unreachable or denies access after bounded retries;
130/143 when stopped by SIGINT/SIGTERM (claims and messages handed back first).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from jobs.errors import InfrastructureError, RunStoppedError, SettingsError
from jobs.ingest.run import IngestOptions, IngestRun
from jobs.observability import setup_logging
from jobs.progress import Ticker
from jobs.settings import JobSettings

EXIT_SETTINGS = 2
EXIT_INFRASTRUCTURE = 3
EXIT_SIGNAL = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    try:
        return int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard {text!r}: expected I/N, e.g. 0/4") from None


def parse_options(argv: list[str], settings: JobSettings) -> IngestOptions:
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
        "--idle-seconds", type=int, default=20, help="drain: end once a receive waited this long (0-20)"
    )
    parser.add_argument("--dry-run", action="store_true", help="decide and report, write nothing")
    args = parser.parse_args(argv)
    index, count = args.shard or (settings.shard_index, settings.shard_count)
    try:
        return IngestOptions(
            backfill=args.backfill,
            shard_index=index,
            shard_count=count,
            max_docs=args.max_docs,
            max_seconds=args.max_minutes * 60 if args.max_minutes is not None else None,
            idle_seconds=args.idle_seconds,
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


def main(argv: list[str]) -> int:
    setup_logging()
    try:
        settings = JobSettings.from_env()
        options = parse_options(argv, settings)
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
    return 0
