"""`python -m jobs erase --user U [--dry-run]`: erase everything stored of one user, for good.

Every item of the user's partition, every version and delete marker under the user's raw and
processed prefixes (`layout.user_prefixes`), deleted now, except documents under a legal hold
(kept whole, and listed); a receipt written once into the reports bucket
(`erasure/U/<runId>.json`). `--dry-run` counts what would go and changes nothing. Running it
again finds nothing and says so.

Prints one JSON object. Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 when done (or
nothing was left), 2 for bad input (an id outside the id rules, a user of whom nothing is stored),
3 when AWS is unreachable or refuses access, 4 when the user's data kept changing, 143/130 when
stopped by a signal between delete batches (both: rerun, the erasure resumes under its marker).
A run that erased publishes ItemsDeleted, ObjectVersionsDeleted and DocumentsKeptForHold.
"""

from __future__ import annotations

import argparse
import json

from jobs.contract.metrics import Datum, Job, Metric
from jobs.erasure.job import JOB
from jobs.erasure.run import ErasureResult, ErasureRun
from jobs.errors import ExitCode
from jobs.runtime.context import Cli, RunContext, run_job


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs erase", description=__doc__)
    p.add_argument("--user", required=True, help="the userId to erase")
    p.add_argument("--dry-run", action="store_true", help="count what would be erased; change nothing")
    return p


def _erase(context: RunContext, args: argparse.Namespace) -> int:
    user, dry_run = args.user, args.dry_run
    run = ErasureRun(context.settings, context.table(), context.buckets, context.calls, stop=context.stop)
    result = run.execute(user, dry_run=dry_run)
    if not dry_run:
        context.record(Job.ERASURE, erasure_metrics(result))
    output: dict[str, object] = {"outcome": result.outcome, "message": result.message}
    if result.receipt is not None:
        output |= {"receipt": result.receipt_uri, **result.receipt.model_dump(mode="json")}
    if result.would_delete is not None:
        output["wouldDelete"] = result.would_delete.model_dump()
    print(json.dumps(output, indent=2))
    return ExitCode.SUCCESS


def erasure_metrics(result: ErasureResult) -> list[Datum]:
    """What the erasure deleted for good (zeros when nothing was left) and the documents a hold kept."""
    receipt = result.receipt
    deleted = receipt.deleted if receipt is not None else None
    return [
        Datum(metric=Metric.ITEMS_DELETED, value=deleted.items if deleted else 0),
        Datum(metric=Metric.VERSIONS_DELETED, value=(deleted.versions + deleted.deleteMarkers) if deleted else 0),
        Datum(metric=Metric.DOCUMENTS_KEPT, value=len(receipt.kept) if receipt is not None else 0),
    ]


CLI = Cli(JOB, parser, lambda args: args, _erase)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
