"""`python -m jobs ingest [--shard I/N] [--max-docs N] [--dry-run]`.

Exit 0 when the run completed (FAILED documents are recorded, not errors); 3 when AWS or the
local stack is unreachable or denies access after bounded retries; 2 for bad options/settings.
"""

from __future__ import annotations

import argparse
import os
import sys

from jobs.errors import InfrastructureError, SettingsError
from jobs.ingest.run import IngestOptions, IngestRun
from jobs.observability import setup_logging
from jobs.progress import Ticker
from jobs.settings import ENV_SHARD_COUNT, ENV_SHARD_INDEX, JobSettings

EXIT_INFRASTRUCTURE = 3


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    try:
        return int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard {text!r}: expected I/N, e.g. 0/4") from None


def parse_options(argv: list[str]) -> IngestOptions:
    parser = argparse.ArgumentParser(prog="python -m jobs ingest", description=__doc__)
    parser.add_argument("--shard", type=_shard, help="I/N (default from SHARD_INDEX/SHARD_COUNT, else 0/1)")
    parser.add_argument("--max-docs", type=int, default=None, help="stop claiming after N documents")
    parser.add_argument("--dry-run", action="store_true", help="decide and report, write nothing")
    args = parser.parse_args(argv)
    if args.shard is None:
        args.shard = (int(os.environ.get(ENV_SHARD_INDEX, "0")), int(os.environ.get(ENV_SHARD_COUNT, "1")))
    try:
        return IngestOptions(args.shard[0], args.shard[1], args.max_docs, args.dry_run)
    except ValueError as exc:
        parser.error(str(exc))
        raise  # unreachable: parser.error exits


def main(argv: list[str]) -> int:
    options = parse_options(argv)
    setup_logging()
    ticker = Ticker("ingest")
    try:
        run = IngestRun(JobSettings.from_env(), options, on_document=ticker.advance)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with ticker.shown():
            summary = run.execute()
    except InfrastructureError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INFRASTRUCTURE
    print(summary.model_dump_json(indent=2))
    return 0
