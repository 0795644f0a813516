"""--repair: the few safe fixes reconcile may make, each a conditional put, each logged.

- ORPHAN_RESULT: rebuild the missing item from result.json (put only if no item exists), and only
  while the raw object it names is still there with the same ETag: a result.json whose raw object
  is gone is a deleted document, not one to bring back.
- MISSING_RESULT, STUCK_PROCESSING and RESULT_SOURCE_MISMATCH: mark the item for reprocessing
  (FAILED + INTERNAL with attempts reset: jobs.ingest.plan re-claims exactly that), guarded by the
  version we saw, then send its raw object to the arrival queue like a lost arrival: the nightly
  drain sees only queued messages, so a marked item would otherwise wait for a backfill.
- MISSING_RAW of a finished document: the DELETED tombstone (jobs.contract.status), guarded by
  the version we saw and only while the raw object is still gone.
- INDEX_DRIFT: rewrite the item through DocumentItem.to_item, which derives GSI1PK/GSI1SK.
- UNPROCESSED_RAW: a raw object whose arrival never reached the ingest (a lost notification, or
  one from before the queue existed) is sent to the arrival queue again, in the shape of an S3
  event (jobs.contract.events), while it is still there: the next nightly drain processes it.
  DELETED_RAW_EXISTS (a tombstone's raw object uploaded again) is re-queued the same way.

Nothing else is touched (STALE_RESULT, KEY_MISMATCH, BAD_KEY, SUMMARY_MISMATCH and
RESULT_UNREADABLE need a person), and no S3 object is ever deleted or written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import polars as pl
from pydantic import ValidationError

from jobs.contract import (
    TERMINAL,
    DocumentItem,
    FailureCode,
    ResultDocument,
    RetentionPolicy,
    Status,
    bare_etag,
    finished_item,
    layout,
    tombstone,
)
from jobs.contract.events import requeue_body
from jobs.errors import DocuFlowError
from jobs.reconcile.report.written import RepairAction
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.rules.polars_rules import RESULT_PROMISED

if TYPE_CHECKING:
    from jobs.store.dynamo import DocumentTable
    from jobs.store.queue import ArrivalQueue
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

REPAIRABLE = (
    Code.ORPHAN_RESULT,
    Code.MISSING_RESULT,
    Code.STUCK_PROCESSING,
    Code.INDEX_DRIFT,
    Code.RESULT_SOURCE_MISMATCH,
    Code.MISSING_RAW,
    Code.UNPROCESSED_RAW,
    Code.DELETED_RAW_EXISTS,
)
NOT_REPAIRABLE = tuple(c for c in Code if c not in REPAIRABLE)
REPROCESS_MESSAGE = "reconcile: {why}; marked for reprocessing"


class _Skip(Exception):
    """The state changed since the snapshot, or the fix would not be safe: leave it."""


def item_from_result(
    doc: ResultDocument, result_uri: str, result_etag: str | None, now: datetime, actor: str, policy: RetentionPolicy
) -> DocumentItem:
    """The summary item ingest would have written for this result.json: `finished_item` applied
    to the claim that wrote it (rebuilt: first attempt, version 1, so the item ends at version 2).
    """
    claim = DocumentItem(
        userId=doc.userId,
        documentId=doc.documentId,
        status=Status.PROCESSING,
        createdAt=doc.createdAt,
        updatedAt=doc.processedAt,
        rawS3Uri=doc.source.uri,
        rawEtag=doc.source.etag,
        attempts=1,
        version=1,
    )
    return finished_item(claim, doc, result_uri, result_etag, now, actor, policy)


def reprocess(item: DocumentItem, why: str, now: datetime, actor: str) -> DocumentItem:
    """FAILED + INTERNAL with attempts 0: the next ingest claims it again (plan.decide)."""
    return item.evolve(
        status=Status.FAILED,
        failureCode=FailureCode.INTERNAL.value,
        failureMessage=REPROCESS_MESSAGE.format(why=why),
        attempts=0,
        version=item.version + 1,
        updatedAt=now,
        updatedBy=actor,
        resultS3Uri=None,
        leaseOwner=None,
        leaseExpiresAt=None,
    )


class Repairer:
    def __init__(
        self,
        table: DocumentTable,
        buckets: Buckets,
        processed_bucket: str,
        actor: str,
        policy: RetentionPolicy,
        clock: Callable[[], datetime] = layout.utc_now,
        arrivals: ArrivalQueue | None = None,
    ) -> None:
        """`actor`: who the repairs are written as (jobs.contract.actors, the reconcile run);
        `policy`: the retention a rebuilt item or a tombstone gets (the stack's);
        `arrivals`: the queue lost arrivals are sent to again (None: they are reported only).
        """
        self._actor = actor
        self._policy = policy
        self._table = table
        self._buckets = buckets
        self._processed_bucket = processed_bucket
        self._clock = clock
        self._arrivals = arrivals

    def run(self, findings: pl.DataFrame) -> list[RepairAction]:
        todo = findings.filter(pl.col("code").is_in([c.value for c in REPAIRABLE]))
        actions = [self._one(row) for row in todo.iter_rows(named=True)]
        applied = sum(a.outcome == "applied" for a in actions)
        logger.info("repairs done", extra={"attempted": len(actions), "applied": applied})
        return actions

    def _one(self, row: dict[str, object]) -> RepairAction:
        code = Code(str(row["code"]))
        handler = {
            Code.ORPHAN_RESULT: self._orphan,
            Code.MISSING_RESULT: self._missing_result,
            Code.STUCK_PROCESSING: self._stuck,
            Code.INDEX_DRIFT: self._index,
            Code.RESULT_SOURCE_MISMATCH: self._foreign_result,
            Code.MISSING_RAW: self._deleted,
            Code.UNPROCESSED_RAW: self._requeue,
            Code.DELETED_RAW_EXISTS: self._requeue,
        }[code]
        user_id, document_id = row.get("userId"), row.get("documentId")
        evidence = json.loads(str(row["evidence"]))
        try:
            action, detail = handler(row, evidence)
            outcome = "applied"
        except _Skip as exc:
            action, detail, outcome = _ACTION_NAMES[code], "", f"skipped: {exc}"
        except (ValidationError, DocuFlowError, ValueError) as exc:
            action, detail, outcome = _ACTION_NAMES[code], "", f"failed: {type(exc).__name__}: {str(exc)[:300]}"
        result = RepairAction(
            code=code.value,
            userId=None if user_id is None else str(user_id),
            documentId=None if document_id is None else str(document_id),
            action=action,
            outcome=outcome,
            detail=detail,
        )
        logger.info("repair", extra=result.model_dump())
        return result

    def _current(self, row: dict[str, object], evidence: dict[str, object]) -> DocumentItem:
        item = self._table.get(str(row["userId"]), str(row["documentId"]))
        if item is None:
            raise _Skip("the item no longer exists")
        if item.version != evidence.get("version"):
            raise _Skip(f"the item changed since the snapshot (version {evidence.get('version')} -> {item.version})")
        return item

    def _put(self, item: DocumentItem, expected: int | None) -> None:
        if not self._table.put_if_version(item, expected):
            raise _Skip("the item changed while repairing (condition failed)")

    def _orphan(self, row: dict[str, object], evidence: dict[str, object]) -> tuple[str, str]:
        bucket, key = str(row["bucket"]), str(row["key"])
        doc = ResultDocument.from_json_bytes(self._buckets.get_bytes(bucket, key))
        if (doc.userId, doc.documentId) != (row["userId"], row["documentId"]):
            raise _Skip("result.json names other ids than its key")
        raw = self._buckets.head(doc.source.bucket, doc.source.key)
        if raw is None:
            raise _Skip(f"the raw object {doc.source.uri} is gone: a deleted document is not rebuilt")
        if not raw.same_version(doc.source.uri, doc.source.etag):
            raise _Skip(f"the raw object {doc.source.uri} changed since this result.json (ETag {bare_etag(raw.etag)})")
        etag = evidence.get("etag")
        item = item_from_result(
            doc,
            layout.s3_uri(bucket, key),
            None if etag is None else str(etag),
            self._clock(),
            self._actor,
            self._policy,
        )
        self._put(item, None)
        return _ACTION_NAMES[Code.ORPHAN_RESULT], f"status {item.status.value} from {key}"

    def _missing_result(self, row: dict[str, object], evidence: dict[str, object]) -> tuple[str, str]:
        item = self._current(row, evidence)
        if item.status.value not in RESULT_PROMISED:
            raise _Skip(f"status is now {item.status.value}")
        if self._buckets.head(self._processed_bucket, layout.result_key(item.userId, item.documentId)) is not None:
            raise _Skip("result.json exists now")
        self._put(reprocess(item, "result.json missing", self._clock(), self._actor), item.version)
        return _ACTION_NAMES[Code.MISSING_RESULT], f"was {item.status.value} v{item.version}; {self._queued(item)}"

    def _stuck(self, row: dict[str, object], evidence: dict[str, object]) -> tuple[str, str]:
        item = self._current(row, evidence)
        now = self._clock()
        if item.status != Status.PROCESSING or (item.leaseExpiresAt is not None and item.leaseExpiresAt > now):
            raise _Skip("the lease is held again")
        self._put(reprocess(item, f"lease of {item.leaseOwner} expired", now, self._actor), item.version)
        return _ACTION_NAMES[
            Code.STUCK_PROCESSING
        ], f"lease expired {evidence.get('leaseExpiresAt')}; {self._queued(item)}"

    def _index(self, row: dict[str, object], evidence: dict[str, object]) -> tuple[str, str]:
        item = self._current(row, evidence)
        self._put(item.evolve(version=item.version + 1, updatedAt=self._clock(), updatedBy=self._actor), item.version)
        return _ACTION_NAMES[
            Code.INDEX_DRIFT
        ], f"GSI1PK was {evidence.get('GSI1PK')}, GSI1SK was {evidence.get('GSI1SK')}"

    def _foreign_result(self, row: dict[str, object], evidence: dict[str, object]) -> tuple[str, str]:
        item = self._current(row, evidence)
        if item.status == Status.PROCESSING:
            raise _Skip("the document is being processed again")
        self._put(
            reprocess(item, "result.json was extracted from another upload", self._clock(), self._actor), item.version
        )
        return _ACTION_NAMES[
            Code.RESULT_SOURCE_MISMATCH
        ], f"result.json from {evidence.get('resultEtag')}, item {evidence.get('itemEtag')}; {self._queued(item)}"

    def _deleted(self, row: dict[str, object], evidence: dict[str, object]) -> tuple[str, str]:
        item = self._current(row, evidence)
        if item.status not in TERMINAL:
            raise _Skip(f"status is {item.status.value}, not finished")
        if self._buckets.head(str(row["bucket"]), str(row["key"])) is not None:
            raise _Skip("the raw object exists again")
        why = "reconcile: raw object deleted after it was processed"
        gone = tombstone(item, self._clock(), why, self._actor, self._policy)
        # A tombstone is no document: the duplicate markers it held go in the same transaction.
        if not self._table.put_giving_up_markers(gone, item.version, item):
            raise _Skip("the item changed while repairing (condition failed)")
        return _ACTION_NAMES[Code.MISSING_RAW], f"was {item.status.value} v{item.version}"

    def _queued(self, item: DocumentItem) -> str:
        """Send the marked item's raw object to the arrival queue; what was done, for the report."""
        if self._arrivals is None:
            return "no arrival queue configured: run `ingest backfill`"
        raw = self._buckets.head(*layout.parse_s3_uri(item.rawS3Uri))
        if raw is None:
            return "raw object gone: not re-queued"
        if self._arrivals.send([requeue_body(raw)]) != 1:
            raise DocuFlowError(f"marked, but the queue did not accept {item.rawS3Uri}: run `ingest backfill`")
        return "re-queued for the next drain"

    def _requeue(self, row: dict[str, object], evidence: dict[str, object]) -> tuple[str, str]:
        if self._arrivals is None:
            raise _Skip("no arrival queue configured: run `ingest backfill`")
        raw = self._buckets.head(str(row["bucket"]), str(row["key"]))
        if raw is None:
            raise _Skip("the raw object is gone")
        if self._arrivals.send([requeue_body(raw)]) != 1:
            raise _Skip("the queue did not accept the message")
        return _ACTION_NAMES[Code.UNPROCESSED_RAW], f"ETag {bare_etag(raw.etag)}: processed by the next drain"


_ACTION_NAMES = {
    Code.ORPHAN_RESULT: "rebuild item from result.json",
    Code.MISSING_RESULT: "mark for reprocessing",
    Code.STUCK_PROCESSING: "release lease, mark for reprocessing",
    Code.INDEX_DRIFT: "rewrite item (derived index keys)",
    Code.RESULT_SOURCE_MISMATCH: "mark for reprocessing",
    Code.MISSING_RAW: "mark DELETED (tombstone)",
    Code.UNPROCESSED_RAW: "re-queue the arrival",
    Code.DELETED_RAW_EXISTS: "re-queue the arrival",
}
