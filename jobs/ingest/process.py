"""One claimed document through the pipeline: read → extract → result.json → finish.

Write order and fencing: result.json is written before the summary item, and only over the
result.json the claim knew of (S3 If-Match on the item's resultEtag, If-None-Match when there was
none). A writer whose claim was taken over meets a different ETag, checks whether it still holds
the claim, and gives up if not: its bytes never become the current result.json. The item is then
finished under the condition that the claim still holds and records the ETag it points at, so
result.json always belongs to the claim that finished the item.

A raw object that changed or disappeared after the event/listing that led to the claim is not a
failure of the document: a deleted object ends DELETED (tombstone); a replaced one restores the
item as it was (the newer upload has its own event) or hands the claim back.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from jobs.contract import (
    DocumentFormat,
    DocumentItem,
    ExtractionOutcome,
    FailureCode,
    ObjectInfo,
    ResultDocument,
    RetentionClass,
    RetentionPolicy,
    SourceObject,
    Status,
    ValidationResult,
    finished_item,
    layout,
    tombstone,
)
from jobs.contract.item import retention_class
from jobs.errors import (
    RunStoppedError,
    S3ObjectChangedError,
    S3ObjectMissingError,
    TextractDocumentRejectedError,
    TextractJobFailedError,
    TextractJobTimeoutError,
)
from jobs.extract.fallback import wants_textract_fallback
from jobs.ingest.plan import Decision, released, restored, same_upload
from jobs.store.dynamo import ConditionalWrite, DocumentTable, finish_put, release_delete
from jobs.store.s3 import Buckets
from jobs.store.textract import TextractOcr

logger = logging.getLogger(__name__)

PIPELINE_VERSION = "docuflow-ingest/1"
FENCE_TRIES = 3
T = TypeVar("T")
U = TypeVar("U")

# Submits one extraction (bytes, filename) to the process pool.
Extractor = Callable[[bytes, str], "Future[ExtractionOutcome]"]


@dataclass(frozen=True)
class DocumentResult:
    user_id: str
    document_id: str
    key: str
    status: Status | None  # None: nothing of this run's was written (claim lost, or a stale event)
    format: DocumentFormat | None = None
    failure_code: str | None = None
    failure_message: str | None = None
    stale: bool = False  # the raw object had changed since the event or listing


def failed(code: FailureCode, message: str, fmt: DocumentFormat = DocumentFormat.UNKNOWN) -> ExtractionOutcome:
    """A document the ingest itself gave up on (too large, worker died, unstorable value)."""
    return ExtractionOutcome.failure(code, message, fmt, engine="ingest")


class DocumentProcessor:
    def __init__(
        self,
        buckets: Buckets,
        table: DocumentTable,
        processed_bucket: str,
        extract: Extractor,
        finish: Callable[[ConditionalWrite], Future[bool]],
        max_input_bytes: int,
        extract_timeout: float,
        policy: RetentionPolicy,
        textract: TextractOcr | None = None,
        clock: Callable[[], datetime] = layout.utc_now,
        stopping: Callable[[], bool] = lambda: False,
        textract_fallback: bool = False,
    ) -> None:
        """`textract`: when set, scans and image-only PDFs that need OCR go to Amazon Textract.
        `stopping`: true once the run is stopping; an extraction cut off then is handed back
        (RunStoppedError), not recorded as the document's failure. `textract_fallback`: text-layer
        PDFs whose reading left header fields missing go to Textract too (costs per page).
        """
        self._buckets = buckets
        self._table = table
        self._processed_bucket = processed_bucket
        self._extract = extract
        self._finish = finish
        self._textract = textract
        self._max_input_bytes = max_input_bytes
        self._extract_timeout = extract_timeout
        self._policy = policy
        self._clock = clock
        self._stopping = stopping
        self._textract_fallback = textract_fallback

    def run(self, raw: layout.RawKey, obj: ObjectInfo, decision: Decision) -> Future[DocumentResult]:
        """Process a document whose claim is held. The finish is queued, not awaited: the calling
        thread moves on, and the returned future completes once the finish was sent.
        """
        claim = decision.claim
        assert claim is not None
        try:
            outcome = self._outcome(raw, obj)
        except (S3ObjectMissingError, S3ObjectChangedError) as exc:
            return self._stale(raw, obj, decision, gone=isinstance(exc, S3ObjectMissingError))
        now = self._clock()
        key = layout.result_key(raw.user_id, raw.document_id)
        uri = layout.s3_uri(self._processed_bucket, key)
        result, final = self._finished(raw, obj, claim, outcome, uri, now)
        retention = final.retentionClass
        assert retention is not None  # finished_item decides it
        etag = self._write_result(claim, key, result.to_json_bytes(), retention)
        if etag is None:
            return _resolved(DocumentResult(raw.user_id, raw.document_id, obj.key, None))
        self._tag_raw(obj, decision, retention)
        final = final.evolve(resultEtag=etag)
        landed = self._finish(finish_put(final, claim.leaseOwner or "", claim.version))
        return _then(landed, lambda ok: _document_result(raw, obj, result.validation, result.source.format, ok))

    def _finished(
        self,
        raw: layout.RawKey,
        obj: ObjectInfo,
        claim: DocumentItem,
        outcome: ExtractionOutcome,
        uri: str,
        now: datetime,
    ) -> tuple[ResultDocument, DocumentItem]:
        """result.json and the item that ends the claim; a value the item cannot store (a total
        DynamoDB cannot hold, say) fails this document MALFORMED instead of its whole batch.
        """
        try:
            result = self._result(raw, obj, claim, outcome, now)
            return result, finished_item(claim, result, uri, None, now, _actor_of(claim), self._policy)
        except ValueError as exc:
            problem = "; ".join(str(exc).splitlines()[1:3]) or str(exc)
            outcome = failed(FailureCode.MALFORMED, f"a value cannot be stored: {problem}", outcome.format)
            result = self._result(raw, obj, claim, outcome, now)
            return result, finished_item(claim, result, uri, None, now, _actor_of(claim), self._policy)

    def _result(
        self, raw: layout.RawKey, obj: ObjectInfo, claim: DocumentItem, outcome: ExtractionOutcome, now: datetime
    ) -> ResultDocument:
        return ResultDocument(
            userId=raw.user_id,
            documentId=raw.document_id,
            source=SourceObject.of(obj, outcome.format),
            engine=outcome.engine,
            extraction=outcome.raw,
            invoice=outcome.invoice,
            validation=outcome.validation,
            createdAt=claim.createdAt,
            processedAt=now,
            pipelineVersion=PIPELINE_VERSION,
            # Decided once: the class the document got when it first finished, else its type's.
            retentionClass=retention_class(claim, outcome.invoice, self._policy),
        )

    def _tag_raw(self, obj: ObjectInfo, decision: Decision, retention: RetentionClass) -> None:
        """Tag the raw object with the document's retention class, so lifecycle expires it with
        the item; once per upload (a retry of an upload already finished finds it tagged).
        """
        previous = decision.previous
        if previous is not None and previous.retentionClass == retention and same_upload(obj, previous):
            return
        if not self._buckets.tag_retention(obj.bucket, obj.key, retention):
            logger.info("raw object gone before it was tagged", extra={"key": obj.key})

    def _write_result(self, claim: DocumentItem, key: str, body: bytes, retention: RetentionClass) -> str | None:
        """Write result.json over the version the claim knew of; None when the claim is lost."""
        expected = claim.resultEtag
        for _ in range(FENCE_TRIES):
            try:
                return self._buckets.put_json(self._processed_bucket, key, body, replaces=expected, retention=retention)
            except S3ObjectChangedError:
                # Someone wrote result.json since our claim: a stale writer (whose finish will be
                # refused) or a claimant that took over from us. Only in the first case do we
                # still hold the claim, and may write over what it left.
                current = self._buckets.head(self._processed_bucket, key)
                if not self._still_held(claim):
                    logger.warning("claim lost before result.json was written", extra={"key": key})
                    return None
                expected = current.etag if current else None
        logger.warning("result.json kept changing under a held claim; left to the next run", extra={"key": key})
        return None

    def _still_held(self, claim: DocumentItem) -> bool:
        item = self._table.get(claim.userId, claim.documentId)
        return (
            item is not None
            and item.version == claim.version
            and item.leaseOwner == claim.leaseOwner
            and item.status == Status.PROCESSING
        )

    def _stale(self, raw: layout.RawKey, obj: ObjectInfo, decision: Decision, *, gone: bool) -> Future[DocumentResult]:
        """The claimed object was deleted or replaced after the event or listing we acted on."""
        claim, previous = decision.claim, decision.previous
        assert claim is not None
        now = self._clock()
        write: ConditionalWrite
        if gone and previous is None and self._table.erasure_marker(raw.user_id) is not None:
            # Erased (jobs.erasure) while its arrival waited: leave nothing of the user behind,
            # not even a tombstone naming the upload. Only this rare path reads the marker.
            write, status = release_delete(claim), None
            logger.info("raw object erased before it was processed", extra={"key": obj.key})
        else:
            if gone and (previous is None or previous.rawS3Uri == obj.uri):
                why = "raw object deleted before it was processed"
                item, status = tombstone(claim, now, why, _actor_of(claim), self._policy), Status.DELETED
            elif previous is not None:
                item, status = restored(previous, claim, now), None
            else:
                item, status = released(claim, now, refund=True), None
            logger.info("raw object changed since it was seen", extra={"key": obj.key, "deleted": gone})
            write = finish_put(item, claim.leaseOwner or "", claim.version)
        landed = self._finish(write)
        return _then(
            landed, lambda ok: DocumentResult(raw.user_id, raw.document_id, obj.key, status if ok else None, stale=True)
        )

    def _outcome(self, raw: layout.RawKey, obj: ObjectInfo) -> ExtractionOutcome:
        if obj.size > self._max_input_bytes:
            return failed(FailureCode.TOO_LARGE, f"{obj.size} bytes exceeds the {self._max_input_bytes}-byte limit")
        data = self._buckets.get_bytes(obj.bucket, obj.key, etag=obj.etag)
        if len(data) > self._max_input_bytes:  # an event's size is the uploader's word, not S3's
            return failed(FailureCode.TOO_LARGE, f"{len(data)} bytes exceeds the {self._max_input_bytes}-byte limit")
        outcome = self._extract_bytes(data, raw.filename)
        if self._textract is None:
            return outcome
        if outcome.validation.errorCode == FailureCode.NEEDS_OCR and outcome.format in _SCANS:
            return self._textract_outcome(obj, outcome.format)
        if wants_textract_fallback(outcome, enabled=self._textract_fallback):
            # A text layer that left header fields missing: Textract reads the page as well, and
            # its reading is kept only when it settles the document.
            read = self._textract_outcome(obj, outcome.format)
            return read if read.validation.status == Status.PROCESSED else outcome
        return outcome

    def _extract_bytes(self, data: bytes, filename: str) -> ExtractionOutcome:
        extraction = self._extract(data, filename)
        try:
            return extraction.result(timeout=self._extract_timeout)
        except TimeoutError:
            extraction.cancel()  # abandoned: never run again, and its worker is not waited for
            return failed(FailureCode.INTERNAL, f"extraction took longer than {self._extract_timeout:.0f}s")
        except Exception as exc:
            if self._stopping():
                raise RunStoppedError(f"extraction of {filename!r} cut off by the stop") from exc
            logger.exception("extraction worker failed", extra={"file": filename})
            return failed(FailureCode.INTERNAL, f"extraction worker failed: {type(exc).__name__}: {exc}")

    def _textract_outcome(self, obj: ObjectInfo, source_format: DocumentFormat) -> ExtractionOutcome:
        """Amazon Textract reads the S3 object itself; its response goes through the same normalizer."""
        assert self._textract is not None
        try:
            response = self._textract.analyze_s3_object(obj.bucket, obj.key, is_pdf=source_format == DocumentFormat.PDF)
        except TextractJobTimeoutError as exc:
            return failed(FailureCode.INTERNAL, str(exc), source_format)  # retried by a later run
        except (TextractJobFailedError, TextractDocumentRejectedError) as exc:
            return failed(FailureCode.NEEDS_OCR, str(exc), source_format)  # these bytes: a dead letter
        outcome = self._extract_bytes(json.dumps(response).encode(), "textract.json")
        return outcome.model_copy(update={"engine": TEXTRACT_ENGINE})


def _document_result(
    raw: layout.RawKey, obj: ObjectInfo, validation: ValidationResult, fmt: DocumentFormat, landed: bool
) -> DocumentResult:
    if not landed:
        # Our lease expired and another worker took the document over; its write wins.
        logger.warning("claim lost before finish", extra={"key": obj.key})
        return DocumentResult(raw.user_id, raw.document_id, obj.key, None)
    return DocumentResult(
        raw.user_id,
        raw.document_id,
        obj.key,
        validation.status,
        fmt,
        validation.errorCode.value if validation.errorCode else None,
        validation.errorMessage,
    )


def _resolved(value: T) -> Future[T]:
    future: Future[T] = Future()
    future.set_result(value)
    return future


def _then(future: Future[T], function: Callable[[T], U]) -> Future[U]:
    """A future of `function(result)`; an exception passes through."""
    chained: Future[U] = Future()

    def settle(done: Future[T]) -> None:
        error = done.exception()
        if error is not None:
            chained.set_exception(error)
            return
        try:
            chained.set_result(function(done.result()))
        except Exception as exc:
            chained.set_exception(exc)

    future.add_done_callback(settle)
    return chained


_SCANS = frozenset({DocumentFormat.PDF, DocumentFormat.IMAGE})
TEXTRACT_ENGINE = "textract"


def _actor_of(claim: DocumentItem) -> str:
    """The run that holds `claim` writes every later version of it under the claim's actor."""
    if claim.updatedBy is None:
        raise ValueError(f"claim of {claim.documentId} names no actor")
    return claim.updatedBy
