"""`python -m jobs undelete --bucket raw|processed --since TIME`: bring back what a bad role deleted.

The data buckets are versioned: a deletion is a delete marker over the object's last version,
which stays until the lifecycle expires noncurrent versions (`noncurrentExpirationDays`, 90).
This removes the markers made from TIME (to --until) in that bucket, so each object's previous
version is current again with its own ETag, and items and result.json match it as before; a
deletion before TIME (a user's own) stays, and so does one inside the window that a person made:
the markers under a document whose item its owner (or an operator) deleted stay with that DELETED
item (read from the table, a BatchGetItem per 100 documents of a listing page), so objects never
come back under a deleted document; `leftAlone` in the output names each such document, with the
reason (a restore within the grace, `documents restore`, is the owner's way back). Then reconcile,
as after any repair. Reports are not
undeleted here: their bucket refuses deletes to all but the break-glass role, which Object Lock
backs. Removing a marker is s3:DeleteObjectVersion: an operator's permission, no task role has it.
Exit 0 when done, 2 for bad options, 3 when AWS is unreachable or denies access.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime

from jobs.contract import layout
from jobs.errors import DocuFlowError, InfrastructureError, InvalidKeyError
from jobs.observability import CallMetrics, setup_logging
from jobs.recovery.cli import EXIT_BAD_REQUEST, EXIT_UNAVAILABLE, point_in_time
from jobs.recovery.decisions import at, deleted_by_person, who
from jobs.recovery.plan import in_window
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client
from jobs.store.dynamo import DocumentTable
from jobs.store.versions import DeleteMarker, ObjectVersions

PURPOSES = ("raw", "processed")


@dataclass
class LeftAlone:
    """A document a person deleted: its markers in the window stay, for this reason."""

    userId: str
    documentId: str
    reason: str
    markers: int = 0


@dataclass
class UndeleteSummary:
    bucket: str
    since: datetime
    until: datetime | None
    markersFound: int = 0
    removed: int = 0
    dryRun: bool = False
    leftAlone: list[LeftAlone] = field(default_factory=list)


def undelete(
    settings: JobSettings, purpose: str, since: datetime, until: datetime | None, dry_run: bool
) -> UndeleteSummary:
    bucket = settings.bucket_names()[purpose]
    prefix = layout.RAW_PREFIX if purpose == "raw" else layout.PROCESSED_PREFIX
    metrics = CallMetrics()
    versions = ObjectVersions(s3_client(settings), metrics)
    table = DocumentTable(dynamodb_client(settings), settings.table_name, settings.index_name, metrics)
    summary = UndeleteSummary(bucket, since, until, dryRun=dry_run)
    left: dict[tuple[str, str], LeftAlone] = {}
    # S3 stamps versions to the second: a marker made in the second `since` falls in is in.
    start = since.replace(microsecond=0)
    for page in versions.current_delete_markers(bucket, prefix):
        chosen = in_window(page, lambda m: m.last_modified, start, until)
        summary.markersFound += len(chosen)
        kept = _deleted_by_a_person(table, purpose, chosen)
        removing = []
        for marker in chosen:
            document = _document_of(purpose, marker.key)
            if document is not None and document in kept:
                left.setdefault(document, kept[document]).markers += 1
            else:
                removing.append(marker)
        if not dry_run:
            summary.removed += versions.remove(bucket, removing)
    summary.leftAlone = list(left.values())
    return summary


def _document_of(purpose: str, key: str) -> tuple[str, str] | None:
    """The document a key belongs to, or None for a key outside the layout (undeleted as any)."""
    try:
        if purpose == "raw":
            raw = layout.parse_raw_key(key)
            return raw.user_id, raw.document_id
        return layout.parse_result_key(key)
    except InvalidKeyError:
        return None


def _deleted_by_a_person(
    table: DocumentTable, purpose: str, markers: list[DeleteMarker]
) -> dict[tuple[str, str], LeftAlone]:
    """The documents of `markers` whose item a person deleted, each with the reason it stays."""
    documents = {d for d in (_document_of(purpose, m.key) for m in markers) if d is not None}
    return {
        key: LeftAlone(
            item.userId,
            item.documentId,
            f"deleted by {who(item.deletedBy)} at {at(item.deletedAt)}: its objects stay hidden with its DELETED item",
        )
        for key, item in table.get_many(documents).items()
        if deleted_by_person(item)
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs undelete", description=__doc__)
    p.add_argument("--bucket", required=True, choices=PURPOSES, help="the data bucket to undelete in")
    p.add_argument("--since", required=True, type=point_in_time, help="remove delete markers made from then")
    p.add_argument("--until", type=point_in_time, help="… until then (default: now)")
    p.add_argument("--dry-run", action="store_true", help="count the markers, remove nothing")
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    setup_logging()
    try:
        summary = undelete(JobSettings.from_env(), args.bucket, args.since, args.until, args.dry_run)
    except InfrastructureError as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except DocuFlowError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    print(json.dumps(asdict(summary), default=str, indent=2))
    return 0
