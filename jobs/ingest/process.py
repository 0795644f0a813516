"""One claimed document through the pipeline: read → extract → result.json → finish.

result.json is written before the summary item, and the item only under the condition that our
claim still holds, so DynamoDB never points at a missing result and a taken-over document is
never written twice. Bad documents end FAILED with a reason; infrastructure errors propagate.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from botocore.exceptions import ClientError

from jobs.contract import (
    DocumentFormat,
    DocumentItem,
    ExtractionOutcome,
    FailureCode,
    ResultDocument,
    SourceObject,
    Status,
    finished_item,
    layout,
)
from jobs.contract.objects import ObjectInfo
from jobs.errors import TextractJobFailedError, TextractJobTimeoutError
from jobs.store.dynamo import ConditionalPut, finish_put
from jobs.store.s3 import Buckets
from jobs.store.textract import TextractOcr

logger = logging.getLogger(__name__)

PIPELINE_VERSION = "docuflow-ingest/1"
T = TypeVar("T")
U = TypeVar("U")

# Submits one extraction (bytes, filename) to the process pool.
Extractor = Callable[[bytes, str], "Future[ExtractionOutcome]"]


@dataclass(frozen=True)
class DocumentResult:
    user_id: str
    document_id: str
    key: str
    status: Status | None  # None: the claim was lost to another worker
    format: DocumentFormat | None = None
    failure_code: str | None = None
    failure_message: str | None = None


def failed(code: FailureCode, message: str, fmt: DocumentFormat = DocumentFormat.UNKNOWN) -> ExtractionOutcome:
    """A document the ingest itself gave up on (too large, worker died, raw object changed)."""
    return ExtractionOutcome.failure(code, message, fmt, engine="ingest")


class DocumentProcessor:
    def __init__(
        self,
        buckets: Buckets,
        processed_bucket: str,
        extract: Extractor,
        finish: Callable[[ConditionalPut], Future[bool]],
        max_input_bytes: int,
        extract_timeout: float,
        textract: TextractOcr | None = None,
        clock: Callable[[], datetime] = layout.utc_now,
    ) -> None:
        """`textract`: when set, scans and image-only PDFs that need OCR go to Amazon Textract."""
        self._buckets = buckets
        self._processed_bucket = processed_bucket
        self._extract = extract
        self._finish = finish
        self._textract = textract
        self._max_input_bytes = max_input_bytes
        self._extract_timeout = extract_timeout
        self._clock = clock

    def run(self, raw: layout.RawKey, obj: ObjectInfo, claim: DocumentItem) -> Future[DocumentResult]:
        """Process a document whose claim is held. The finish is queued, not awaited: the calling
        thread moves on, and the returned future completes once the finish was sent."""
        outcome = self._outcome(raw, obj)
        now = self._clock()
        result = ResultDocument(
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
        )
        key = layout.result_key(raw.user_id, raw.document_id)
        etag = self._buckets.put_json(self._processed_bucket, key, result.to_json_bytes())
        final = finished_item(claim, result, layout.s3_uri(self._processed_bucket, key), etag, now)
        landed = self._finish(finish_put(final, claim.leaseOwner or "", claim.version))
        return _then(landed, lambda ok: _document_result(raw, obj, outcome, ok))

    def _outcome(self, raw: layout.RawKey, obj: ObjectInfo) -> ExtractionOutcome:
        if obj.size > self._max_input_bytes:
            return failed(FailureCode.TOO_LARGE, f"{obj.size} bytes exceeds the {self._max_input_bytes}-byte limit")
        try:
            data = self._buckets.get_bytes(obj.bucket, obj.key, etag=obj.etag)
        except ClientError as exc:
            code = exc.response["Error"]["Code"]
            if code not in ("PreconditionFailed", "NoSuchKey"):
                raise
            # Replaced or deleted since the listing: fail this claim retryably; a new upload
            # carries a new ETag and is claimed afresh by the next run.
            return failed(FailureCode.INTERNAL, f"raw object changed during the run ({code})")
        outcome = self._extract_bytes(data, raw.filename)
        needs_ocr = outcome.validation.errorCode == FailureCode.NEEDS_OCR
        if self._textract is None or not needs_ocr or outcome.format not in _SCANS:
            return outcome
        return self._textract_outcome(obj, outcome.format)

    def _extract_bytes(self, data: bytes, filename: str) -> ExtractionOutcome:
        extraction = self._extract(data, filename)
        try:
            return extraction.result(timeout=self._extract_timeout)
        except TimeoutError:
            extraction.cancel()  # abandoned: never run again, and its worker is not waited for
            return failed(FailureCode.INTERNAL, f"extraction took longer than {self._extract_timeout:.0f}s")
        except Exception as exc:  # noqa: BLE001 - a dead worker process fails this document only
            logger.exception("extraction worker failed", extra={"file": filename})
            return failed(FailureCode.INTERNAL, f"extraction worker failed: {type(exc).__name__}: {exc}")

    def _textract_outcome(self, obj: ObjectInfo, source_format: DocumentFormat) -> ExtractionOutcome:
        """Amazon Textract reads the S3 object itself; its response goes through the same normalizer."""
        assert self._textract is not None
        try:
            response = self._textract.analyze_s3_object(obj.bucket, obj.key, is_pdf=source_format == DocumentFormat.PDF)
        except TextractJobTimeoutError as exc:
            return failed(FailureCode.INTERNAL, str(exc), source_format)  # retried by a later run
        except TextractJobFailedError as exc:
            return failed(FailureCode.NEEDS_OCR, str(exc), source_format)
        outcome = self._extract_bytes(json.dumps(response).encode(), "textract.json")
        return outcome.model_copy(update={"engine": TEXTRACT_ENGINE})


def _document_result(raw: layout.RawKey, obj: ObjectInfo, outcome: ExtractionOutcome, landed: bool) -> DocumentResult:
    if not landed:
        # Our lease expired and another worker took the document over; its write wins.
        logger.warning("claim lost before finish", extra={"key": obj.key})
        return DocumentResult(raw.user_id, raw.document_id, obj.key, None)
    validation = outcome.validation
    return DocumentResult(
        raw.user_id,
        raw.document_id,
        obj.key,
        validation.status,
        outcome.format,
        validation.errorCode.value if validation.errorCode else None,
        validation.errorMessage,
    )


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
        except Exception as exc:  # noqa: BLE001 - handed to whoever waits on the chained future
            chained.set_exception(exc)

    future.add_done_callback(settle)
    return chained


_SCANS = frozenset({DocumentFormat.PDF, DocumentFormat.IMAGE})
TEXTRACT_ENGINE = "textract"
