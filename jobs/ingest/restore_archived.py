"""`python -m jobs restore-archived`: bring one document's archived objects back, and send the
document to the next drain once its raw object reads again.

    restore-archived --user U --document D [--days N] [--tier Standard|Bulk|Expedited]

A raw upload in GLACIER or DEEP_ARCHIVE (the lifecycle's tiering, after a year) cannot be read
until S3 restores a temporary copy of it; a re-processing that met it ended the document FAILED
with reason ARCHIVED. This command asks S3 to restore each of the document's archived objects
(the raw upload and result.json), for `--days` days. S3 takes hours (Standard 3-5 h, Bulk 5-12 h,
Expedited minutes; DEEP_ARCHIVE longer): run the same command again later. Once the raw object
reads, a document that failed ARCHIVED is re-queued for the next drain (the same message
reconcile's repair sends), which finishes it; without a queue (`--backfill` stacks) the next
sweep does. Safe to run any number of times: a restore already asked for is not asked again.

Prints one JSON object. Exit codes are the jobs' one map (jobs.errors.ExitCode): 0 when done, 2
for bad input (an unknown document), 3 when AWS is unreachable or refuses access, 143/130 when
stopped by a signal before it began (a restore asked for is not asked again: rerun it).
"""

from __future__ import annotations

import argparse
import json
from typing import get_args

from pydantic import BaseModel, Field

from jobs.contract import DocumentItem, FailureCode, Status, layout
from jobs.contract.events import requeue_body
from jobs.errors import DocumentNotFoundError, ExitCode, InfrastructureError
from jobs.ingest.job import RESTORE_ARCHIVED
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.store.archive import Archives, ArchiveState, Readable, RestoreTier
from jobs.store.clients import s3_client
from jobs.store.dynamo import DocumentTable
from jobs.store.queue import ArrivalQueue
from jobs.store.s3 import Buckets

DEFAULT_DAYS = 7  # long enough for the next night's drain, and a person's look at result.json


class ObjectRestore(BaseModel):
    uri: str
    storageClass: str
    state: str
    restoreRequested: bool
    restoredUntil: str | None = None


class RestoreReport(BaseModel):
    userId: str
    documentId: str
    status: str
    objects: list[ObjectRestore] = Field(default_factory=list)
    requeued: bool = False
    next: str = ""


class ArchivedRestore:
    def __init__(self, table: DocumentTable, buckets: Buckets, archives: Archives, arrivals: ArrivalQueue | None):
        self._table = table
        self._buckets = buckets
        self._archives = archives
        self._arrivals = arrivals

    def run(self, user_id: str, document_id: str, days: int, tier: RestoreTier) -> RestoreReport:
        item = self._table.get(layout.validate_id(user_id, "userId"), layout.validate_id(document_id, "documentId"))
        if item is None:
            raise DocumentNotFoundError(f"no document {document_id!r} of user {user_id!r}")
        report = RestoreReport(userId=item.userId, documentId=item.documentId, status=item.status.value)
        raw_readable = False
        for uri in (item.rawS3Uri, item.resultS3Uri):
            if not uri:
                continue
            restored = self._restore(*layout.parse_s3_uri(uri), days, tier)
            report.objects.append(restored)
            if uri == item.rawS3Uri:
                raw_readable = restored.state in (Readable.YES, Readable.RESTORED)
        waiting = item.status == Status.FAILED and item.failureCode == FailureCode.ARCHIVED.value
        if not waiting:
            report.next = "nothing to re-process: the restored objects read until their restore expires"
        elif not raw_readable:
            report.next = "the raw object is being restored: run this command again once S3 has restored it"
        else:
            report.requeued, report.next = self._requeue(item)
        return report

    def _restore(self, bucket: str, key: str, days: int, tier: RestoreTier) -> ObjectRestore:
        uri = layout.s3_uri(bucket, key)
        state = self._archives.state(bucket, key)
        if state is None:
            return ObjectRestore(uri=uri, storageClass="", state="missing", restoreRequested=False)
        requested = state.readable == Readable.ARCHIVED
        if requested:
            self._archives.request_restore(bucket, key, days, tier)
            state = self._archives.state(bucket, key) or state
        return _shown(uri, state, requested)

    def _requeue(self, item: DocumentItem) -> tuple[bool, str]:
        if self._arrivals is None:
            return False, "no arrival queue configured: the next `ingest backfill` re-processes it"
        raw = self._buckets.head(*layout.parse_s3_uri(item.rawS3Uri))
        if raw is None:
            return False, "the raw object is gone: nothing to re-process"
        if self._arrivals.send([requeue_body(raw)]) != 1:
            raise InfrastructureError(f"the arrival queue did not accept {item.rawS3Uri}: run this command again")
        return True, "re-queued: the next drain re-processes it"


def _shown(uri: str, state: ArchiveState, requested: bool) -> ObjectRestore:
    return ObjectRestore(
        uri=uri,
        storageClass=state.storage_class,
        state=state.readable.value,
        restoreRequested=requested,
        restoredUntil=state.restored_until,
    )


def of(context: RunContext) -> ArchivedRestore:
    """The restore on the run's adapters (its table, buckets and arrival queue)."""
    return ArchivedRestore(
        context.table(), context.buckets, Archives(s3_client(context.settings), context.calls), context.arrivals
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m jobs restore-archived", description=__doc__.split("\n\n")[0])
    parser.add_argument("--user", required=True)
    parser.add_argument("--document", "--doc", dest="document", required=True)
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS, help="how long the restored copy stays readable")
    parser.add_argument("--tier", choices=get_args(RestoreTier), default="Standard", help="S3's retrieval tier")
    return parser


def _checked(args: argparse.Namespace) -> argparse.Namespace:
    if args.days < 1:
        raise ValueError("--days must be at least 1")
    return args


def _restore(context: RunContext, args: argparse.Namespace) -> int:
    context.stop.check("before it began")
    report = of(context).run(args.user, args.document, args.days, args.tier)
    print(json.dumps(report.model_dump(mode="json"), indent=2))
    return ExitCode.SUCCESS


CLI = Cli(RESTORE_ARCHIVED, _parser, _checked, _restore)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
