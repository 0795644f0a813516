"""`python -m jobs reports verify [--since DATE] [--until DATE]` and `python -m jobs reports pack
--month YYYY-MM`: the reconcile reports as evidence (docs/reconcile.md, "Provenance and the chain"
and "The monthly evidence pack").

Exit 0 when everything checked holds, 1 when something does not (each problem printed), 2 when
the command could not run (bad options, AWS unreachable, a pack already written).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date

from jobs.errors import DocuFlowError
from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.store.clients import s3_client
from jobs.store.kms import Signatures, kms_client
from jobs.store.s3 import Buckets

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_FAILED = 2


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


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    settings = JobSettings.from_env()
    metrics = CallMetrics()
    buckets = Buckets(s3_client(settings), metrics)
    signatures = Signatures(kms_client(settings), metrics)
    try:
        if args.command == "verify":
            from jobs.reports.verify import verify_chain

            result = verify_chain(buckets, settings.reports_bucket, signatures, args.since, args.until)
            return _report(result.checked, [str(p) for p in result.problems], "reports")
        from jobs.reports import pack

        if args.command == "pack":
            key = pack.write_pack(buckets, settings, signatures, args.month)
            print(f"pack written: s3://{settings.reports_bucket}/{key}")
            return EXIT_OK
        checked, problems = pack.verify_pack(buckets, settings.reports_bucket, signatures, args.month)
        return _report(checked, problems, "packed reports")
    except (ValueError, DocuFlowError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED


def _report(checked: list[str], problems: list[str], what: str) -> int:
    for problem in problems:
        print(f"PROBLEM {problem}")
    if not checked:
        print(f"PROBLEM no {what} in the window")
        return EXIT_PROBLEMS
    verdict = "FAILED" if problems else "OK"
    print(f"{verdict}: {len(checked)} {what} checked, {checked[0]} .. {checked[-1]}, {len(problems)} problems")
    return EXIT_PROBLEMS if problems else EXIT_OK
