"""`python -m jobs reconcile live|files|nightly|athena`: check DynamoDB against S3 and write a
write-once audit report; `reconcile acknowledge` records that a person accepted a finding.

Each mode is a subcommand with only its own options, and builds its plan (`plans`): `live` reads
the table and the buckets now; `files` a table export (or a kept table state and an incremental
export) and S3 Inventory reports, on polars or duckdb; `nightly` the scheduled chain; `athena` the
Trino SQL in the stack's workgroup (`--nightly`: over the kept Iceberg table).

The run goes through the job runtime (jobs.runtime.run_job): one run id, its metrics published
once at the end, a stop on SIGTERM/SIGINT before anything is written (143, 130). Exit codes
(jobs.errors.ExitCode, docs/operations.md): 0 when no finding reaches --fail-on (a night with
nothing to judge yet included), 1 when one does, 2 when the run refused its input (bad options,
unreadable export/inventory files, report key already taken), 3 when AWS or the local stack is
unreachable after bounded retries.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

# Polars' jemalloc keeps freed pages resident for 10 s by default; a reconcile allocates and frees
# join tables rule after rule and partition after partition. Returning them after 1 s keeps peak
# RSS flat and costs far fewer page faults than returning them at once, which spends more CPU in
# the kernel for little memory; one arena instead of one per core: less memory held in arenas
# the other thread no longer uses (docs/reconcile.md, Performance).
# Read by jemalloc when polars loads, hence set before the imports below.
ALLOCATOR_ENV = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:1"}
for _name, _value in ALLOCATOR_ENV.items():
    os.environ.setdefault(_name, _value)

from datetime import timedelta

from jobs.reconcile.job import JOB
from jobs.reconcile.plans import AthenaPlan, AuditCheck, FilesPlan, LivePlan, NightlyPlan, Plan
from jobs.reconcile.rules.findings import Severity
from jobs.reconcile.run import ReconcileOutcome, ReconcileRun
from jobs.runtime.cli import duration
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.settings import JobSettings

PROG = "python -m jobs reconcile"
PLANS: dict[str, type[Plan]] = {plan.mode: plan for plan in (LivePlan, FilesPlan, NightlyPlan, AthenaPlan)}
ACKNOWLEDGE = "acknowledge"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = p.add_subparsers(dest="mode", required=True, metavar="{live,files,nightly,athena,acknowledge}")
    live = modes.add_parser("live", help="the table scanned and the buckets listed now (polars)")
    _deep_and_audit(live)
    live.add_argument(
        "--segments", type=int, default=None, help="parallel Scan segments, 1-64 (default from DOCUFLOW_IO_THREADS)"
    )
    files = modes.add_parser("files", help="a table export (or kept state) against S3 Inventory reports")
    files.add_argument(
        "--engine", choices=("polars", "duckdb"), default="polars", help="polars, or the Athena SQL on DuckDB"
    )
    _files(files)
    files.add_argument(
        "--table-state",
        metavar="LOCATION",
        help="the table as an earlier run kept it (path or s3://); "
        "--dynamodb-export then names the incremental export that follows it (polars)",
    )
    files.add_argument(
        "--write-table-state",
        metavar="LOCATION",
        help="keep the table this run reads there (write-once), for the next run's --table-state (polars)",
    )
    _deep_and_audit(files)
    nightly = modes.add_parser(
        "nightly",
        help="the scheduled chain: the newest kept table state brought forward by tonight's exports (or a "
        "full export), judged against the newest inventories, the new state kept",
    )
    _deep_and_audit(nightly)
    athena = modes.add_parser("athena", help="the rules' SQL in the stack's Athena workgroup")
    athena.add_argument(
        "--nightly", action="store_true", help="bring the kept Iceberg table forward instead of exporting"
    )
    _files(athena)
    for sub in (live, files, nightly, athena):
        _judging(sub)
    modes.add_parser(ACKNOWLEDGE, help="a person accepts a finding (write-once; `acknowledge --help`)")
    return p


def _judging(p: argparse.ArgumentParser) -> None:
    """What every mode shares: how findings are judged and what the run writes."""
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
    p.add_argument("--no-report", action="store_true", help="print findings only, write nothing to the reports bucket")


def _deep_and_audit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--deep", action="store_true", help="also read every result.json and compare the summary fields")
    p.add_argument(
        "--audit-log",
        action="store_true",
        help="also check that the change log holds every version of every item (docs/audit.md)",
    )
    p.add_argument(
        "--audit-window", type=duration, default=None, help="with --audit-log: only versions written this recently (3d)"
    )


def _files(p: argparse.ArgumentParser) -> None:
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


def plan_of(args: argparse.Namespace) -> Plan:
    """The plan the subcommand's arguments name (ValueError: one they cannot)."""
    values: dict[str, Any] = {k: v for k, v in vars(args).items() if k != "mode"}
    values["write_report"] = not values.pop("no_report")
    values["fail_on"] = Severity(values["fail_on"])
    if "s3_inventory" in values:
        values["s3_inventories"] = tuple(values.pop("s3_inventory"))
    if "audit_log" in values:
        audit_log, window = values.pop("audit_log"), values.pop("audit_window")
        if window is not None and not audit_log:
            raise ValueError("--audit-window is a positive duration, given with --audit-log")
        values["audit"] = AuditCheck(window=window) if audit_log else None
    return PLANS[args.mode](**values)


def _run(context: RunContext, plan: Plan) -> int:
    outcome = ReconcileRun(context.settings, plan, context=context).execute()
    _print(outcome, plan.write_report, context.settings)
    return outcome.exit_code


CLI = Cli(JOB, parser, plan_of, _run)


def main(argv: list[str]) -> int:
    if argv[:1] == [ACKNOWLEDGE]:
        from jobs.reconcile import acknowledge

        return acknowledge.main(argv[1:])
    return run_job(CLI, argv)


def _print(outcome: ReconcileOutcome, reported: bool, settings: JobSettings) -> None:
    summary = outcome.summary
    print(
        f"reconcile {summary.runId}: {summary.totalFindings} findings "
        f"({summary.severities.get('error', 0)} errors, {summary.severities.get('warning', 0)} warnings)"
    )
    if summary.notJudged:
        print(f"  {summary.notJudged}")
    for code, count in summary.counts.items():
        if count:
            print(f"  {code:<18} {count}")
    if summary.repairs:
        applied = sum(r.outcome == "applied" for r in summary.repairs)
        print(f"  repairs: {applied} applied of {len(summary.repairs)}")
    if reported:
        print(f"  report: s3://{settings.store.reports_bucket}/{summary.reportPrefix}")
