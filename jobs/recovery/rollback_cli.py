"""`python -m jobs rollback --restored-table NAME --since TIME`: undo a bad deploy's writes.

Puts every live item changed at or after TIME back to its version in NAME (a table the drill
restored as of before the deploy), or marks it for reprocessing, or deletes it (see
jobs.recovery.rollback); then replay the window with `python -m jobs ingest --backfill`. A
person's decision since TIME (a legal hold or its release, an owner's delete or restore) stays:
`leftAlone` in the output names each such document and why. `--dry-run` prints what it would
do. Exit 0 when done, 2 for bad options or a missing table, 3 when AWS is unreachable or denies
access.
"""

from __future__ import annotations

import argparse
import json
import sys

from jobs.errors import DocuFlowError, InfrastructureError
from jobs.observability import setup_logging
from jobs.recovery.cli import EXIT_BAD_REQUEST, EXIT_UNAVAILABLE, point_in_time
from jobs.recovery.rollback_run import RollbackOptions, RollbackRun
from jobs.settings import JobSettings


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs rollback", description=__doc__)
    p.add_argument("--restored-table", required=True, metavar="NAME", help="the table restored as of before the deploy")
    p.add_argument("--since", required=True, type=point_in_time, help="the deploy's start (ISO-8601 with a zone)")
    p.add_argument("--dry-run", action="store_true", help="decide and count, write nothing")
    return p


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    setup_logging()
    options = RollbackOptions(args.restored_table, args.since, args.dry_run)
    try:
        summary = RollbackRun(JobSettings.from_env(), options).execute()
    except InfrastructureError as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except DocuFlowError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    print(json.dumps(vars(summary), default=str, indent=2))
    return 0
