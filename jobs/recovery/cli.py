"""`python -m jobs drill`: restore the table into a new drill table, reconcile it, report once.

Exit 0 when the restored table reconciles clean, 1 when it has findings at or above --fail-on,
2 for a request the drill refuses (a time outside the window, a target table that exists or is
not a drill table, nothing to restore from, bad options; one line, nothing created) or unreadable
export files, 3 when AWS is unreachable, denies access, or a restore it accepted failed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime

from jobs.errors import DocuFlowError, InfrastructureError, RestoreFailedError
from jobs.observability import setup_logging
from jobs.recovery.drill import DrillOptions, DrillRun
from jobs.recovery.plan import Source
from jobs.settings import JobSettings

EXIT_BAD_REQUEST = 2
EXIT_UNAVAILABLE = 3


def point_in_time(text: str) -> datetime:
    """ISO-8601 with a time zone (`2026-11-30T02:00:00Z`, `…+01:00`), as UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO-8601 time like 2026-11-30T02:00:00Z") from exc
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone: add Z or an offset")
    return moment.astimezone(UTC)


def default_source(environ: Mapping[str, str]) -> Source:
    """PITR on AWS; an export beside an emulated DynamoDB (DynamoDB Local has no PITR)."""
    return Source.EXPORT if environ.get("AWS_ENDPOINT_URL_DYNAMODB") else Source.PITR


def parser() -> argparse.ArgumentParser:
    from jobs.reconcile.cli import duration

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
    p.add_argument("--drop-after", action="store_true", help="delete the drill table once the report is written")
    p.add_argument(
        "--no-report", action="store_true", help="print the report only, write nothing to the reports bucket"
    )
    return p


def parse_options(argv: list[str]) -> DrillOptions:
    from jobs.reconcile import Severity

    args = parser().parse_args(argv)
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
    )


def main(argv: list[str]) -> int:
    try:
        options = parse_options(argv)
    except SystemExit as exc:  # argparse: --help is 0, bad options are 2
        return int(exc.code or 0)
    setup_logging()
    try:
        run = DrillRun(JobSettings.from_env(), options)
        outcome = run.execute()
    except (InfrastructureError, RestoreFailedError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except DocuFlowError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    report = outcome.report
    print(report.model_dump_json(indent=2))
    if options.write_report:
        print(f"report: s3://{run.settings.reports_bucket}/{report.key}", file=sys.stderr)
    return outcome.exit_code
