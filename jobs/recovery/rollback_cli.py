"""`python -m jobs rollback --restored-table NAME --since TIME`: undo a bad deploy's writes.

Puts every live item changed at or after TIME back to its version in NAME (a table the drill
restored as of before the deploy), or marks it for reprocessing, or deletes it (see
jobs.recovery.rollback); then replay the window with `python -m jobs ingest backfill`. A
person's decision since TIME (a legal hold or its release, an owner's delete or restore) stays:
`leftAlone` in the output names each such document and why. `--dry-run` prints what it would
do. Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 when done, 2 for bad options or a
missing table, 3 when AWS is unreachable or denies access, 143/130 when stopped by a signal before
it wrote (what it writes is conditional on the version it read: a rerun decides again). A run that
wrote publishes ItemsRolledBack and LeftAlone.
"""

from __future__ import annotations

import argparse
import json

from jobs.contract.metrics import Datum, Job, Metric
from jobs.errors import ExitCode
from jobs.recovery.job import ROLLBACK
from jobs.recovery.rollback import Action
from jobs.recovery.rollback_run import RollbackOptions, RollbackRun, RollbackSummary
from jobs.runtime.cli import point_in_time
from jobs.runtime.context import Cli, RunContext, run_job


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs rollback", description=__doc__)
    p.add_argument("--restored-table", required=True, metavar="NAME", help="the table restored as of before the deploy")
    p.add_argument("--since", required=True, type=point_in_time, help="the deploy's start (ISO-8601 with a zone)")
    p.add_argument("--dry-run", action="store_true", help="decide and count, write nothing")
    return p


def _rollback(context: RunContext, options: RollbackOptions) -> int:
    summary = RollbackRun(context.settings, options, context=context).execute()
    if not options.dry_run:
        context.record(Job.ROLLBACK, rollback_metrics(summary))
    print(json.dumps(vars(summary), default=str, indent=2))
    return ExitCode.SUCCESS


def rollback_metrics(summary: RollbackSummary) -> list[Datum]:
    """The items it wrote back (put back, marked for reprocessing or deleted) and the documents a
    person's decision kept as they are.
    """
    writes = (Action.PUT_BACK, Action.REPROCESS, Action.DELETE)
    written = sum(summary.actions.get(action.value, 0) for action in writes) - summary.changedSince
    return [
        Datum(metric=Metric.ITEMS_ROLLED_BACK, value=max(0, written)),
        Datum(metric=Metric.LEFT_ALONE, value=len(summary.leftAlone)),
    ]


def _options(args: argparse.Namespace) -> RollbackOptions:
    return RollbackOptions(args.restored_table, args.since, args.dry_run)


CLI = Cli(ROLLBACK, parser, _options, _rollback)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
