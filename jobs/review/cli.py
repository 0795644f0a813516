"""`python -m jobs review claim|release|settle|correct --user U --doc D --reviewer R [--set field=value …]`.

Prints the document as it now stands (one JSON object; `correct` adds the corrections it made).
Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 done; 2 refused or bad input (a value
the extraction would not accept, an unknown field, a document not in review, not the caller's
claim, not the user's): one line, nothing changed; 3 AWS unreachable; 4 a race was lost (a
re-upload or another reviewer changed the document since it was read): nothing was changed, run
it again.
"""

from __future__ import annotations

import argparse
import json
import sys

from jobs.errors import DocuFlowError, ReviewConflictError, exit_code_for
from jobs.review.corrections import FIELDS
from jobs.review.desk import ReviewDesk, ReviewOutcome
from jobs.settings import JobSettings

SHOWN = (
    "userId",
    "documentId",
    "status",
    "vendorName",
    "invoiceNumber",
    "invoiceDate",
    "totalAmount",
    "currency",
    "reviewReasons",
    "leaseOwner",
    "leaseExpiresAt",
    "version",
    "updatedBy",
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m jobs review", description=__doc__)
    parser.add_argument("action", choices=["claim", "release", "settle", "correct"])
    parser.add_argument("--user", required=True)
    parser.add_argument("--doc", required=True)
    parser.add_argument("--reviewer", required=True)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help=f"with correct: one of {', '.join(FIELDS)} (repeat for several)",
    )
    return parser


def _act(desk: ReviewDesk, args: argparse.Namespace) -> ReviewOutcome:
    actions = {"claim": desk.claim, "release": desk.release, "settle": desk.settle}
    if args.action == "correct":
        return desk.correct(args.user, args.doc, args.reviewer, args.set)
    return actions[args.action](args.user, args.doc, args.reviewer)


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.set and args.action != "correct":
        parser.error("--set goes with correct only")
    try:
        outcome = _act(ReviewDesk.from_settings(JobSettings.from_env()), args)
    except (DocuFlowError, ValueError) as exc:
        print(f"{'conflict' if isinstance(exc, ReviewConflictError) else 'error'}: {exc}", file=sys.stderr)
        return exit_code_for(exc)  # a lost race is NOT_SETTLED (4): run it again
    shown = outcome.item.model_dump(mode="json", include=set(SHOWN), exclude_none=True)
    if args.action == "correct" and outcome.result is not None and outcome.result.review is not None:
        shown["corrections"] = [c.model_dump(mode="json") for c in outcome.result.review.corrections]
    print(json.dumps(shown, indent=2))
    return 0
