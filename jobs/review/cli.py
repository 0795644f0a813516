"""`python -m jobs review claim|release|settle|correct --user U --doc D --reviewer R [--set field=value …]`.

Prints the document as it now stands (one JSON object; `correct` adds the corrections it made).
Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 done; 2 refused or bad input (a value
the extraction would not accept, an unknown field, a document not in review, not the caller's
claim, not the user's): one line, nothing changed; 3 AWS unreachable; 4 a race was lost (a
re-upload or another reviewer changed the document since it was read): nothing was changed, run
it again; 143/130 stopped by a signal before the action began (once begun, it runs to its end).
"""

from __future__ import annotations

import argparse
import json

from jobs.errors import ExitCode
from jobs.review.corrections import FIELDS
from jobs.review.desk import ReviewDesk, ReviewOutcome
from jobs.review.job import JOB
from jobs.runtime.context import Cli, RunContext, run_job

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


def _checked(args: argparse.Namespace) -> argparse.Namespace:
    if args.set and args.action != "correct":
        raise ValueError("--set goes with correct only")
    return args


def _review(context: RunContext, args: argparse.Namespace) -> int:
    context.stop.check("before the action started")  # one document's action runs to its end once begun
    # A lost race is NOT_SETTLED (4, run_job's map): run it again.
    outcome = _act(ReviewDesk.from_settings(context.settings, context.table(), context.calls), args)
    shown = outcome.item.model_dump(mode="json", include=set(SHOWN), exclude_none=True)
    if args.action == "correct" and outcome.result is not None and outcome.result.review is not None:
        shown["corrections"] = [c.model_dump(mode="json") for c in outcome.result.review.corrections]
    print(json.dumps(shown, indent=2))
    return ExitCode.SUCCESS


CLI = Cli(JOB, _parser, _checked, _review)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
