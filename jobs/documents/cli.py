"""`python -m jobs documents <action>`: a user's documents, and the actions on one of them.

    documents list --user U [--status S] [--limit N] [--next-token T]   (or --status S alone: the queue)
    documents delete  --user U --doc D        the owner's delete: DELETED at once, gone after the grace
    documents restore --user U --doc D        within the grace: back as it was (a newer upload its
                                              delete hid is queued for the next drain)
    documents hold    --user U --doc D --operator NAME [--release]   an operator's legal hold
    documents url     --user U --doc D        a short-lived presigned GET of that user's result.json

Prints one JSON object. Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 when done (also
when there was nothing to change), 2 for bad input (ids outside the id rules, an unknown document,
a state the action does not allow: one line, nothing changed), 3 when AWS is unreachable or
refuses access, 143/130 when stopped by a signal before the action began (once begun, an action
on one document runs to its end, well inside ECS's 30 s stop timeout). Each action publishes its
metrics (DocumentActions by Action, ItemsChanged).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from jobs.contract import Status, layout
from jobs.contract.actors import ActorKind, actor
from jobs.contract.metrics import ACTION, Datum, Job, Metric
from jobs.documents.actions import DocumentActions
from jobs.documents.job import JOB
from jobs.documents.queries import list_documents
from jobs.documents.url import result_url
from jobs.errors import ExitCode
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
    "createdAt",
    "resultS3Uri",
    "failureCode",
    "reviewReasons",
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m jobs documents", description=__doc__)
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="a user's documents, or the cross-user queue of one status")
    listing.add_argument("--user")
    listing.add_argument("--status", type=Status, choices=list(Status))
    listing.add_argument("--limit", type=int, default=25)
    listing.add_argument("--next-token")
    for name, help_ in (
        ("delete", "the owner's delete"),
        ("restore", "the owner's restore within the grace"),
        ("url", "a short-lived presigned GET of the document's result.json (jobs.documents.url)"),
    ):
        one = actions.add_parser(name, help=help_)
        one.add_argument("--user", required=True)
        one.add_argument("--doc", required=True)
    hold = actions.add_parser("hold", help="an operator's legal hold (or its release)")
    hold.add_argument("--user", required=True)
    hold.add_argument("--doc", required=True)
    hold.add_argument("--operator", required=True, help="who places or releases the hold (recorded)")
    hold.add_argument("--release", action="store_true")
    return parser


def _checked(args: argparse.Namespace) -> argparse.Namespace:
    if args.action == "list" and args.user is None and args.status is None:
        raise ValueError("give --user, --status, or both")
    return args


def _run(context: RunContext, args: argparse.Namespace) -> int:
    context.stop.check("before the action started")  # a one-document action runs to its end once begun
    output = {"list": _list, "url": _url}.get(args.action, _act)(context, args)
    print(json.dumps(output, indent=2))
    return ExitCode.SUCCESS


def _list(context: RunContext, args: argparse.Namespace) -> dict[str, Any]:
    page = list_documents(
        context.settings,
        user_id=args.user,
        status=args.status,
        limit=args.limit,
        next_token=args.next_token,
        table=context.table(),
    )
    items = [
        {k: v for k, v in item.model_dump(mode="json", include=set(SHOWN), exclude_none=True).items() if v != []}
        for item in page.items
    ]
    return {"items": items, "nextToken": page.next_token}


def _url(context: RunContext, args: argparse.Namespace) -> dict[str, Any]:
    signed = result_url(context.settings, args.user, args.doc, table=context.table())
    return {"url": signed.url, "expiresAt": layout.format_ts(signed.expires_at)}


def _act(context: RunContext, args: argparse.Namespace) -> dict[str, object]:
    settings = context.settings
    actions = DocumentActions(
        context.table(),
        context.buckets,
        settings.store.raw_bucket,
        settings.store.processed_bucket,
        settings.store.retention,
        arrivals=context.arrivals,
    )
    if args.action == "hold":
        who = actor(ActorKind.OPERATOR, args.operator)
        act = actions.release if args.release else actions.hold
        name = "release" if args.release else "hold"
    else:  # the owner acts on their own document: the actor is the document's user
        who = actor(ActorKind.USER, args.user)
        act = actions.delete if args.action == "delete" else actions.restore
        name = args.action
    summary = act(args.user, args.doc, who).summary()
    context.record(Job.DOCUMENTS, action_metrics(name, bool(summary["itemChanged"])))
    return summary


CLI = Cli(JOB, _parser, _checked, _run)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)


def action_metrics(action: str, changed: bool) -> list[Datum]:
    """One action, in total (the dashboard's line) and by its kind; whether it changed the item."""
    return [
        Datum(metric=Metric.DOCUMENT_ACTIONS, value=1),
        Datum(metric=Metric.DOCUMENT_ACTIONS, value=1, breakdown={ACTION: action}),
        Datum(metric=Metric.ITEMS_CHANGED, value=int(changed)),
    ]
