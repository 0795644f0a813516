"""`python -m jobs <command>`: the one entry point of the job image and of developers' shells.

Each command lives in its own module with a `main(argv) -> int`; it is imported only when
called, so `local` and `extract` start without loading boto3 clients or polars.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "ingest": ("jobs.ingest.cli", "drain the arrival queue (or sweep raw/ with --backfill): extract, write results"),
    "reconcile": ("jobs.reconcile.cli", "check DynamoDB against S3 and write an audit report"),
    "reports": ("jobs.reports.cli", "verify the chain of signed reconcile reports; pack a month's evidence"),
    "drill": ("jobs.recovery.cli", "restore the table into a new table, reconcile it, report RPO and RTO"),
    "rollback": ("jobs.recovery.rollback_cli", "after a bad deploy: put changed items back from a restored table"),
    "undelete": ("jobs.recovery.undelete", "remove the delete markers a bad role left in a data bucket"),
    "extract": ("jobs.extract.cli", "extract and validate local files (debugging)"),
    "documents": (
        "jobs.documents.cli",
        "a user's documents, a status queue; delete, restore, legal hold; a presigned URL of result.json",
    ),
    "restore-archived": (
        "jobs.ingest.restore_archived",
        "restore a document's archived objects (GLACIER), then re-queue it for the next drain",
    ),
    "review": ("jobs.review.cli", "work the review queue: claim, correct, settle or release a document"),
    "erase": ("jobs.erasure.cli", "GDPR erasure of one user: every item, version and marker, with a receipt"),
    "audit": ("jobs.audit.cli", "the audit trail: a document's history, what an actor changed"),
    "demo": ("jobs.demo.cli", "seed a deterministic demo corpus into raw/"),
    "local": ("jobs.local.cli", "start, stop or inspect the embedded local AWS stack"),
}


def _usage() -> str:
    lines = ["usage: python -m jobs <command> [options]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    return int(module.main(rest))


if __name__ == "__main__":
    sys.exit(main())
