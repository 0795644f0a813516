"""`python -m jobs documents list --user U [--status S] [--limit N] [--next-token T]`, or `--status S`
alone for the cross-user queue newest first: one JSON object, items and nextToken.
`python -m jobs documents url --user U --doc D`: a short-lived presigned GET of that user's
result.json (jobs.documents.url): one JSON object, url and expiresAt.
"""

from __future__ import annotations

import argparse
import json
import sys

from jobs.contract import Status, layout
from jobs.documents.queries import list_documents
from jobs.documents.url import result_url
from jobs.errors import DocuFlowError
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
    "createdAt",
    "resultS3Uri",
    "failureCode",
    "reviewReasons",
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs documents", description=__doc__)
    parser.add_argument("action", choices=["list", "url"])
    parser.add_argument("--user")
    parser.add_argument("--doc", help="with url: the document whose result.json to read")
    parser.add_argument("--status", type=Status, choices=list(Status))
    parser.add_argument("--limit", type=int, default=25)
    parser.add_argument("--next-token")
    args = parser.parse_args(argv)
    if args.action == "url":
        if args.user is None or args.doc is None:
            parser.error("url needs --user and --doc")
        return _url(args.user, args.doc)
    if args.user is None and args.status is None:
        parser.error("give --user, --status, or both")
    try:
        page = list_documents(
            JobSettings.from_env(), user_id=args.user, status=args.status, limit=args.limit, next_token=args.next_token
        )
    except (DocuFlowError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    items = [
        {k: v for k, v in item.model_dump(mode="json", include=set(SHOWN), exclude_none=True).items() if v != []}
        for item in page.items
    ]
    print(json.dumps({"items": items, "nextToken": page.next_token}, indent=2))
    return 0


def _url(user_id: str, document_id: str) -> int:
    try:
        signed = result_url(JobSettings.from_env(), user_id, document_id)
    except (DocuFlowError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"url": signed.url, "expiresAt": layout.format_ts(signed.expires_at)}, indent=2))
    return 0
