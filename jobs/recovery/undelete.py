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
Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 when done, 2 for bad options, 3 when
AWS is unreachable or denies access, 143/130 when stopped by a signal (between two pages of
markers). A run that removed publishes DeleteMarkersRemoved and LeftAlone.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime

from jobs.contract import layout
from jobs.contract.metrics import Datum, Job, Metric
from jobs.errors import ExitCode, InvalidKeyError
from jobs.recovery.decisions import at, deleted_by_person, who
from jobs.recovery.job import UNDELETE
from jobs.recovery.plan import in_window
from jobs.runtime.cli import point_in_time
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.settings import JobSettings
from jobs.store.clients import s3_client
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
    settings: JobSettings,
    purpose: str,
    since: datetime,
    until: datetime | None,
    dry_run: bool,
    context: RunContext | None = None,
) -> UndeleteSummary:
    """Remove the window's markers page by page; the run's stop (`context`) is taken between pages
    (what was removed stays removed: a rerun finds the rest).
    """
    context = context or RunContext.of(settings, UNDELETE)
    bucket = settings.store.bucket_names()[purpose]
    prefix = layout.RAW_PREFIX if purpose == "raw" else layout.PROCESSED_PREFIX
    versions = ObjectVersions(s3_client(settings), context.calls)
    table = context.table()
    summary = UndeleteSummary(bucket, since, until, dryRun=dry_run)
    left: dict[tuple[str, str], LeftAlone] = {}
    # S3 stamps versions to the second: a marker made in the second `since` falls in is in.
    start = since.replace(microsecond=0)
    for page in versions.current_delete_markers(bucket, prefix):
        context.stop.check("between two pages of markers")
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


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs undelete", description=__doc__)
    p.add_argument("--bucket", required=True, choices=PURPOSES, help="the data bucket to undelete in")
    p.add_argument("--since", required=True, type=point_in_time, help="remove delete markers made from then")
    p.add_argument("--until", type=point_in_time, help="… until then (default: now)")
    p.add_argument("--dry-run", action="store_true", help="count the markers, remove nothing")
    return p


def _undelete(context: RunContext, args: argparse.Namespace) -> int:
    summary = undelete(context.settings, args.bucket, args.since, args.until, args.dry_run, context)
    if not args.dry_run:
        context.record(
            Job.UNDELETE,
            [
                Datum(metric=Metric.MARKERS_REMOVED, value=summary.removed),
                Datum(metric=Metric.LEFT_ALONE, value=len(summary.leftAlone)),
            ],
        )
    print(json.dumps(asdict(summary), default=str, indent=2))
    return ExitCode.SUCCESS


CLI = Cli(UNDELETE, parser, lambda args: args, _undelete)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
