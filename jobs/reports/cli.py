"""`python -m jobs reports verify [--since DATE] [--until DATE]` and `python -m jobs reports pack
--month YYYY-MM`: the reconcile reports as evidence (docs/reconcile.md, "Provenance and the chain"
and "The monthly evidence pack").

Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 when everything checked holds, 1 when
something does not (each problem printed; for `pack`, the pack is then not written), 2 when the
command could not run as asked (bad options, no signing key set, a pack already written), 3 when
AWS is unreachable or denies access, 143/130 when stopped by a signal (before a pack is written:
it is written once, whole, or not at all).

Every signature is checked against the stack's signing key (DOCUFLOW_REPORT_SIGNING_KEY, its key
ARN, the stack output reportSigningKeyArn; an alias is refused, exit 2, since it can be moved to
another key), and a night is a date in DOCUFLOW_SCHEDULE_TIMEZONE.
"""

from __future__ import annotations

import argparse
from datetime import date

from jobs.errors import ExitCode
from jobs.reports.job import JOB
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.store.kms import Signatures, kms_client

EXIT_OK = ExitCode.SUCCESS
EXIT_PROBLEMS = ExitCode.FINDINGS


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs reports", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    check = sub.add_parser("verify", help="walk the chain of reports: checksums, signatures, links, missing nights")
    check.add_argument("--since", type=date.fromisoformat, default=None, help="first night (YYYY-MM-DD)")
    check.add_argument("--until", type=date.fromisoformat, default=None, help="last night (YYYY-MM-DD)")
    pack = sub.add_parser("pack", help="one signed, write-once archive of a month's reports and evidence")
    pack.add_argument("--month", required=True, help="YYYY-MM")
    opened = sub.add_parser("verify-pack", help="check a month's archive on its own (manifest, signature, chain)")
    opened.add_argument("--month", required=True, help="YYYY-MM")
    return p


def _run(context: RunContext, args: argparse.Namespace) -> int:
    settings = context.settings
    buckets = context.buckets
    signatures = Signatures(kms_client(settings), context.calls)
    if args.command == "verify":
        from jobs.reports.verify import stack_key_arn, stack_nights, verify_chain

        key_arn = stack_key_arn(settings, signatures)
        nights = stack_nights(settings, args.since, args.until)
        result = verify_chain(buckets, settings.store.reports_bucket, signatures, key_arn, nights)
        return _report(result.checked, [str(p) for p in result.problems], "reports")
    from jobs.reports import pack

    if args.command == "pack":
        context.stop.check("before the pack was built")
        outcome = pack.write_pack(buckets, settings, signatures, args.month, context.stop.check)
        if outcome.key is None:
            _report(outcome.checked, outcome.problems, "reports")
            print(f"pack NOT written: the month's evidence does not verify ({len(outcome.problems)} problems)")
            return EXIT_PROBLEMS
        print(f"pack written: s3://{settings.store.reports_bucket}/{outcome.key}")
        return EXIT_OK
    checked, problems = pack.verify_pack(buckets, settings, signatures, args.month)
    return _report(checked, problems, "packed reports")


CLI = Cli(JOB, parser, lambda args: args, _run)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)


def _report(checked: list[str], problems: list[str], what: str) -> int:
    for problem in problems:
        print(f"PROBLEM {problem}")
    if not checked:
        print(f"PROBLEM no {what} in the window")
        return EXIT_PROBLEMS
    verdict = "FAILED" if problems else "OK"
    print(f"{verdict}: {len(checked)} {what} checked, {checked[0]} .. {checked[-1]}, {len(problems)} problems")
    return EXIT_PROBLEMS if problems else EXIT_OK
