"""One claimed document through the pipeline: read → extract → result.json → finish.

Write order and fencing: result.json is written before the summary item, and only over the
result.json the claim knew of (S3 If-Match on the item's resultEtag, If-None-Match when there was
none). A writer whose claim was taken over meets a different ETag, checks whether it still holds
the claim, and gives up if not: its bytes never become the current result.json. The item is then
finished under the condition that the claim still holds and records the ETag it points at, so
result.json always belongs to the claim that finished the item.

The finish carries the duplicate markers the document takes or gives up (jobs.ingest.finishing),
so a duplicate of another document of its user is found in the same request; a duplicate of a
document this run finished is known, by one read, before result.json is first written.

A raw object that changed or disappeared after the event/listing that led to the claim is not a
failure of the document: a deleted object ends DELETED (tombstone); a replaced one restores the
item as it was (the newer upload has its own event) or hands the claim back.

A raw object in an archive storage class (GLACIER, DEEP_ARCHIVE: a re-processing years after the
upload) cannot be read until it is restored: the document ends FAILED with reason ARCHIVED, which
is retried without counting an attempt (jobs.ingest.plan), and the batch goes on. `python -m jobs
restore-archived` restores it and sends it to the next drain (docs/lifecycle.md, Archived objects).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime

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
    finished_item,
    layout,
    tombstone,
)
from jobs.contract.duplicates import CLAIMING, DuplicateKind, content_digest, identities, with_duplicates
from jobs.contract.item import retention_class
from jobs.errors import (
    RunStoppedError,
    S3ObjectArchivedError,
    S3ObjectChangedError,
    S3ObjectMissingError,
    TextractDocumentRejectedError,
    TextractJobFailedError,
    TextractJobTimeoutError,
    TextractPagesCapError,
)
from jobs.extract.fallback import second_opinion, wants_textract_fallback
from jobs.ingest.finishing import Finisher, Finishing, FollowUp, Submit, claim_actor, still_held
from jobs.ingest.futures import flattened, resolved, then
from jobs.ingest.pages import PageBudget, page_count
from jobs.ingest.plan import Decision, released, restored, same_upload
from jobs.ingest.results import DocumentResult
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from jobs.store.table_writes import GroupOutcome, Write, WriteGroup, finish_put, marker_release, release_delete
from jobs.store.textract import TextractOcr

__all__ = ["DocumentProcessor", "DocumentResult"]

logger = logging.getLogger(__name__)

PIPELINE_VERSION = "docuflow-ingest/1"

# Submits one extraction (bytes, filename) to the process pool.
Extractor = Callable[[bytes, str], "Future[ExtractionOutcome]"]


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
        finish: Submit,
        max_input_bytes: int,
        extract_timeout: float,
        policy: RetentionPolicy,
        textract: TextractOcr | None = None,
        clock: Callable[[], datetime] = layout.utc_now,
        stopping: Callable[[], bool] = lambda: False,
        textract_fallback: bool = False,
        follow_up: FollowUp | None = None,
        pages: PageBudget | None = None,
    ) -> None:
        """`textract`: when set, scans and image-only PDFs that need OCR go to Amazon Textract.
        `stopping`: true once the run is stopping; an extraction cut off then is handed back
        (RunStoppedError), not recorded as the document's failure. `textract_fallback`: text-layer
        PDFs whose reading left header fields missing go to Textract too (costs per page).
        `follow_up`: runs the I/O of a duplicate's second round off the batcher's thread (the
        run's I/O pool); without one it runs where the finish completed. `pages`: the run's
        Textract page budget (a document that would pass its cap raises TextractPagesCapError:
        handed back for the next night); without one, no cap.
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
        self._pages = pages or PageBudget(None)
        self._finisher = Finisher(table, buckets, processed_bucket, finish, follow_up or _inline, clock, policy)

    def run(self, raw: layout.RawKey, obj: ObjectInfo, decision: Decision) -> Future[DocumentResult]:
        """Process a document whose claim is held. The finish is queued, not awaited: the calling
        thread moves on, and the returned future completes once the document is settled.
        """
        claim = decision.claim
        assert claim is not None
        try:
            outcome, content = self._outcome(raw, obj)
        except (S3ObjectMissingError, S3ObjectChangedError) as exc:
            return self._stale(raw, obj, decision, gone=isinstance(exc, S3ObjectMissingError))
        key = layout.result_key(raw.user_id, raw.document_id)
        result = self._storable(raw, obj, claim, outcome, layout.s3_uri(self._processed_bucket, key))
        digests = identities(content, result.invoice)
        known: dict[DuplicateKind, str] = {}
        if result.validation.status in CLAIMING:
            known = self._finisher.known_duplicates(raw.user_id, raw.document_id, digests)
        if known:
            result = result.model_copy(update={"validation": with_duplicates(result.validation, known)})
        retention = result.retentionClass
        assert retention is not None  # _result decides it
        etag = self._buckets.put_fenced(
            self._processed_bucket,
            key,
            result.to_json_bytes(),
            replaces=claim.resultEtag,
            retention=retention,
            still_held=lambda: still_held(self._table, claim),
            legal_hold=claim.held,
        )
        if etag is None:
            return resolved(DocumentResult(raw.user_id, raw.document_id, obj.key, None))
        self._tag_raw(obj, decision, retention)
        uri = layout.s3_uri(self._processed_bucket, key)
        return self._finisher.finish(Finishing(raw, obj, claim, result, uri, etag, digests, duplicates=known))

    def _storable(
        self, raw: layout.RawKey, obj: ObjectInfo, claim: DocumentItem, outcome: ExtractionOutcome, uri: str
    ) -> ResultDocument:
        """result.json of the outcome; a value the item cannot store (a total DynamoDB cannot
        hold, say) fails this document MALFORMED instead of its whole batch.
        """
        now = self._clock()
        result = self._result(raw, obj, claim, outcome, now)
        try:
            finished_item(claim, result, uri, None, now, claim_actor(claim), self._policy)
        except ValueError as exc:
            problem = "; ".join(str(exc).splitlines()[1:3]) or str(exc)
            outcome = failed(FailureCode.MALFORMED, f"a value cannot be stored: {problem}", outcome.format)
            result = self._result(raw, obj, claim, outcome, now)
        return result

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

    def _stale(self, raw: layout.RawKey, obj: ObjectInfo, decision: Decision, *, gone: bool) -> Future[DocumentResult]:
        """The claimed object was deleted or replaced after the event or listing we acted on."""
        claim, previous = decision.claim, decision.previous
        assert claim is not None
        now = self._clock()
        if gone and previous is None and self._table.erasure_marker(raw.user_id) is not None:
            # Erased (jobs.erasure) while its arrival waited: leave nothing of the user behind,
            # not even a tombstone naming the upload. Only this rare path reads the marker. (A
            # claim of a new document holds no duplicate marker to give up.)
            logger.info("raw object erased before it was processed", extra={"key": obj.key})
            return self._settle_stale(raw, obj, WriteGroup((release_delete(claim),)), None)
        releases: tuple[Write, ...] = ()
        if gone and (previous is None or previous.rawS3Uri == obj.uri):
            why = "raw object deleted before it was processed"
            item = tombstone(claim, now, why, claim_actor(claim), self._policy)
            status: Status | None = Status.DELETED
            # A tombstone is no document any more: the identities it held are free again.
            releases = tuple(
                marker_release(claim.userId, kind, digest, claim.documentId)
                for kind, digest in claim.held_markers.items()
            )
        elif previous is not None:
            item, status = restored(previous, claim, now), None
        else:
            item, status = released(claim, now, refund=True), None
        logger.info("raw object changed since it was seen", extra={"key": obj.key, "deleted": gone})
        return self._settle_stale(
            raw, obj, WriteGroup((finish_put(item, claim.leaseOwner or "", claim.version), *releases)), status
        )

    def _settle_stale(
        self, raw: layout.RawKey, obj: ObjectInfo, group: WriteGroup, status: Status | None
    ) -> Future[DocumentResult]:
        def settled(outcome: GroupOutcome) -> Future[DocumentResult]:
            if outcome.landed or 0 in outcome.lost:
                ok = outcome.landed
                return resolved(
                    DocumentResult(raw.user_id, raw.document_id, obj.key, status if ok else None, stale=True)
                )
            # A marker another document holds now is not ours to give up: send the rest.
            kept = tuple(w for i, w in enumerate(group.writes) if i not in outcome.lost)
            return self._settle_stale(raw, obj, WriteGroup(kept), status)

        return flattened(then(self._finish(group), settled))

    def _outcome(self, raw: layout.RawKey, obj: ObjectInfo) -> tuple[ExtractionOutcome, str | None]:
        """The extraction, and the digest of the bytes it read (None when none were read)."""
        if obj.size > self._max_input_bytes:
            too_large = f"{obj.size} bytes exceeds the {self._max_input_bytes}-byte limit"
            return failed(FailureCode.TOO_LARGE, too_large), None
        try:
            data = self._buckets.get_bytes(obj.bucket, obj.key, etag=obj.etag)
        except S3ObjectArchivedError as exc:
            return failed(FailureCode.ARCHIVED, str(exc).removeprefix(f"{exc.reason}: ")), None
        if len(data) > self._max_input_bytes:  # an event's size is the uploader's word, not S3's
            too_large = f"{len(data)} bytes exceeds the {self._max_input_bytes}-byte limit"
            return failed(FailureCode.TOO_LARGE, too_large), None
        return self._read(data, raw, obj), content_digest(data)

    def _read(self, data: bytes, raw: layout.RawKey, obj: ObjectInfo) -> ExtractionOutcome:
        outcome = self._extract_bytes(data, raw.filename)
        if self._textract is None:
            return outcome
        if outcome.validation.errorCode == FailureCode.NEEDS_OCR and outcome.format in _SCANS:
            return self._textract_outcome(obj, outcome.format, data)
        if wants_textract_fallback(outcome, enabled=self._textract_fallback):
            # A text layer whose reading would go to review: Textract reads the page as well, its
            # pages from the night's cap, and its reading is kept only when it is clean; past the
            # cap the text layer's stands (it has a reading; a person settles it). result.json's
            # extraction.SecondOpinion says which reading won and why.
            try:
                read = self._textract_outcome(obj, outcome.format, data)
            except TextractPagesCapError as exc:
                return second_opinion(outcome, None, not_asked=str(exc))
            return second_opinion(outcome, read)
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

    def _textract_outcome(self, obj: ObjectInfo, source_format: DocumentFormat, data: bytes) -> ExtractionOutcome:
        """Amazon Textract reads the S3 object itself; its response goes through the same normalizer.
        Its pages are reserved first: past the run's cap, the document waits for the next night.
        """
        assert self._textract is not None
        pages = page_count(data, source_format)
        if not self._pages.reserve(pages):
            raise TextractPagesCapError(
                f"{obj.uri}: its {pages} Textract page(s) would pass the night's cap of {self._pages.cap}"
            )
        try:
            response = self._textract.analyze_s3_object(obj.bucket, obj.key, is_pdf=source_format == DocumentFormat.PDF)
        except TextractJobTimeoutError as exc:
            return failed(FailureCode.INTERNAL, str(exc), source_format)  # retried by a later run
        except (TextractJobFailedError, TextractDocumentRejectedError) as exc:
            return failed(FailureCode.NEEDS_OCR, str(exc), source_format)  # these bytes: a dead letter
        outcome = self._extract_bytes(json.dumps(response).encode(), "textract.json")
        return outcome.model_copy(update={"engine": TEXTRACT_ENGINE})


_SCANS = frozenset({DocumentFormat.PDF, DocumentFormat.IMAGE})
TEXTRACT_ENGINE = "textract"


def _inline(step: Callable[[], Future[DocumentResult]]) -> Future[Future[DocumentResult]]:
    """Without an I/O pool (a processor driven by hand): run the follow-up where it is asked for."""
    return resolved(step())
