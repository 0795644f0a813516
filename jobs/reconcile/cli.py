"""`python -m jobs reconcile`: check DynamoDB against S3 and write a write-once audit report.

Exit codes (jobs.errors.ExitCode, docs/operations.md): 0 when no finding reaches --fail-on, 1
when one does, 2 when the run refused its input (bad options, unreadable export/inventory files,
report key already taken), 3 when AWS or the local stack is unreachable after bounded retries.
`python -m jobs reconcile acknowledge --finding ID --by NAME --reason TEXT` records that a person
accepted a finding (`acknowledge`).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from datetime import timedelta

# Polars' jemalloc keeps freed pages resident for 10 s by default; a reconcile allocates and frees
# join tables rule after rule and partition after partition. Returning them after 1 s keeps peak
# RSS flat and costs far fewer page faults than returning them at once, which spends more CPU in
# the kernel for little memory; one arena instead of one per core: less memory held in arenas
# the other thread no longer uses (docs/reconcile.md, Performance).
# Read by jemalloc when polars loads, hence set before the imports below.
ALLOCATOR_ENV = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:1"}
for _name, _value in ALLOCATOR_ENV.items():
    os.environ.setdefault(_name, _value)

from jobs.errors import DocuFlowError, SettingsError, exit_code_for
from jobs.observability import setup_logging
from jobs.reconcile.engines import NAMES
from jobs.reconcile.findings import Severity
from jobs.reconcile.run import ReconcileOptions, ReconcileRun
from jobs.settings import JobSettings

logger = logging.getLogger(__name__)

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def duration(text: str) -> timedelta:
    """`90s`, `15m`, `6h`, `2d`."""
    match = _DURATION.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 30s, 15m, 6h or 2d")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs reconcile", description=__doc__)
    _input_options(p)
    p.add_argument("--deep", action="store_true", help="also read every result.json and compare the summary fields")
    p.add_argument("--repair", action="store_true", help="apply the safe fixes (logged, in the report)")
    p.add_argument(
        "--grace", type=duration, default=timedelta(minutes=15), help="objects newer than this are not judged (15m)"
    )
    p.add_argument(
        "--stuck-after", type=duration, default=timedelta(hours=6), help="lease expired longer ago than this (6h)"
    )
    p.add_argument(
        "--fail-on", choices=[s.value for s in Severity], default=Severity.ERROR.value, help="exit 1 threshold (error)"
    )
    p.add_argument(
        "--segments", type=int, default=None, help="parallel Scan segments, 1-64 (default from DOCUFLOW_IO_THREADS)"
    )
    p.add_argument("--no-report", action="store_true", help="print findings only, write nothing to the reports bucket")
    p.add_argument(
        "--audit-log",
        action="store_true",
        help="also check that the change log holds every version of every item (docs/audit.md)",
    )
    p.add_argument(
        "--audit-window", type=duration, default=None, help="with --audit-log: only versions written this recently (3d)"
    )
    return p


def _input_options(p: argparse.ArgumentParser) -> None:
    """Where the run reads the table and the buckets from, and the engine that judges them."""
    p.add_argument(
        "--source", choices=("live", "files"), default=None, help="default: files when files are given, else live"
    )
    p.add_argument(
        "--engine",
        choices=NAMES,
        default=None,
        help="polars (in process), duckdb (the Athena SQL on embedded DuckDB over the files) or athena; "
        "default: DOCUFLOW_RECONCILE_ENGINE, else polars",
    )
    p.add_argument(
        "--dynamodb-export", metavar="LOCATION", help="export directory or manifest-summary.json (path or s3://)"
    )
    p.add_argument(
        "--s3-inventory",
        metavar="MANIFEST",
        action="append",
        default=[],
        help="inventory manifest.json, once per bucket",
    )
    p.add_argument(
        "--table-state",
        metavar="LOCATION",
        help="the table as an earlier run kept it (path or s3://); "
        "--dynamodb-export then names the incremental export that follows it",
    )
    p.add_argument(
        "--write-table-state",
        metavar="LOCATION",
        help="keep the table this run reads there (write-once), for the next run's --table-state",
    )
    p.add_argument(
        "--nightly",
        action="store_true",
        help="the scheduled run: bring the newest kept table state forward by tonight's incremental "
        "exports (or re-anchor with a full export), judge it against the newest inventories, keep the new state",
    )


def parse_options(argv: list[str]) -> ReconcileOptions:
    p = parser()
    args = p.parse_args(argv)
    try:
        engine = args.engine or JobSettings.from_env().reconcile_engine
    except SettingsError as exc:
        p.error(str(exc))
    files = (
        args.dynamodb_export
        or args.s3_inventory
        or args.table_state
        or args.write_table_state
        or args.nightly
        or engine == "duckdb"
    )
    if args.nightly and args.source == "live":
        p.error("--nightly reads the kept table state and files, not --source live")
    source = args.source or ("files" if files else "live")
    try:
        return ReconcileOptions(
            source=source,
            engine=engine,
            dynamodb_export=args.dynamodb_export,
            s3_inventories=tuple(args.s3_inventory),
            table_state=args.table_state,
            write_table_state=args.write_table_state,
            deep=args.deep,
            repair=args.repair,
            grace=args.grace,
            stuck_after=args.stuck_after,
            fail_on=Severity(args.fail_on),
            segments=args.segments,
            write_report=not args.no_report,
            nightly=args.nightly,
            audit_log=args.audit_log,
            audit_window=args.audit_window,
        )
    except ValueError as exc:
        p.error(str(exc))
        raise  # unreachable: parser.error exits


def main(argv: list[str]) -> int:
    if argv[:1] == ["acknowledge"]:
        from jobs.reconcile import acknowledge

        return acknowledge.main(argv[1:])
    try:
        options = parse_options(argv)
    except SystemExit as exc:  # argparse: --help is 0, bad options are 2
        return int(exc.code or 0)
    setup_logging()
    try:
        outcome = ReconcileRun(JobSettings.from_env(), options).execute()
    except DocuFlowError as exc:  # S3ObjectExistsError (a taken report key) included
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return exit_code_for(exc)
    summary = outcome.summary
    print(
        f"reconcile {summary.runId}: {summary.totalFindings} findings "
        f"({summary.severities.get('error', 0)} errors, {summary.severities.get('warning', 0)} warnings)"
    )
    for code, count in summary.counts.items():
        if count:
            print(f"  {code:<18} {count}")
    if summary.repairs:
        applied = sum(r.outcome == "applied" for r in summary.repairs)
        print(f"  repairs: {applied} applied of {len(summary.repairs)}")
    if options.write_report:
        print(f"  report: s3://{JobSettings.from_env().reports_bucket}/{summary.reportPrefix}")
    return outcome.exit_code
