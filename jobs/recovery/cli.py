"""`python -m jobs drill`: restore the table into a new drill table, reconcile it, report once.

Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 when the restored table reconciles
clean within the targets, 1 when it has findings at or above --fail-on or missed its RTO (or a
given RPO) target, 2 for a request the drill refuses (a time outside the window, a target table
that exists or is not a drill table, nothing to restore from, bad options; one line, nothing
created) or unreadable export files, 3 when AWS is unreachable, denies access, or a restore it
accepted failed, 143/130 when stopped by a signal (the drill table it made is dropped). Every
run publishes TargetsMissed (1: failed or missed), and RpoSeconds and RtoSeconds once measured.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping

from jobs.errors import ExitCode
from jobs.recovery.drill import DrillOptions, DrillRun
from jobs.recovery.job import DRILL
from jobs.recovery.plan import Source
from jobs.runtime.cli import duration, point_in_time
from jobs.runtime.context import Cli, RunContext, run_job


def default_source(environ: Mapping[str, str]) -> Source:
    """PITR on AWS; an export beside an emulated DynamoDB (DynamoDB Local has no PITR)."""
    return Source.EXPORT if environ.get("AWS_ENDPOINT_URL_DYNAMODB") else Source.PITR


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs drill", description=__doc__)
    p.add_argument("--as-of", type=point_in_time, help="restore the table as of this time (default: the newest)")
    p.add_argument("--target-table", metavar="NAME", help="the new table (default: <table>-drill-<run id>)")
    p.add_argument(
        "--source",
        choices=[s.value for s in Source],
        help="pitr (AWS), backup (an AWS Backup recovery point) or export (a full table export); "
        "default: export beside a local DynamoDB endpoint, else pitr",
    )
    p.add_argument("--exports", metavar="LOCATION", help="where --source export looks (directory or s3:// prefix)")
    p.add_argument("--backup-role", metavar="ARN", help="the role AWS Backup restores with (--source backup)")
    p.add_argument("--grace", type=duration, default="15m", help="objects newer than this are not judged (15m)")
    p.add_argument("--fail-on", choices=("warning", "error"), default="error", help="exit 1 threshold (error)")
    p.add_argument("--rto-target", type=duration, default="2h", help="a restore and reconcile longer misses it (2h)")
    p.add_argument("--rpo-target", type=duration, default=None, help="a newest change older misses it (not judged)")
    p.add_argument("--drop-after", action="store_true", help="delete the drill table once the report is written")
    p.add_argument(
        "--no-report", action="store_true", help="print the report only, write nothing to the reports bucket"
    )
    return p


def options_of(args: argparse.Namespace) -> DrillOptions:
    from jobs.reconcile import Severity

    return DrillOptions(
        source=Source(args.source) if args.source else default_source(os.environ),
        as_of=args.as_of,
        target=args.target_table,
        exports=args.exports,
        backup_role_arn=args.backup_role,
        grace=args.grace,
        fail_on=Severity(args.fail_on),
        drop_after=args.drop_after,
        write_report=not args.no_report,
        rto_target=args.rto_target,
        rpo_target=args.rpo_target,
    )


def _drill(context: RunContext, options: DrillOptions) -> int:
    run = DrillRun(context.settings, options, context=context)
    outcome = run.execute()
    report = outcome.report
    print(report.model_dump_json(indent=2))
    if options.write_report:
        print(f"report: s3://{run.settings.store.reports_bucket}/{report.key}", file=sys.stderr)
    if run.missed(outcome) and outcome.exit_code == 0:
        print(f"targets missed: RTO {report.rtoSeconds} s, RPO {report.rpoSeconds} s", file=sys.stderr)
        return ExitCode.FINDINGS
    return outcome.exit_code


CLI = Cli(DRILL, parser, options_of, _drill)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
