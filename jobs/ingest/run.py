"""Orchestration of one ingest run: sweep page by page, decide with batched reads, process in pools.

I/O (S3, DynamoDB) runs on a thread pool; extraction on a process pool sized to the cores (rebuilt
if a worker dies). The number of documents in flight is bounded, so memory stays flat however many
objects raw/ holds.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from multiprocessing import get_context
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from jobs.contract import DocumentItem, layout
from jobs.contract.objects import ObjectInfo
from jobs.errors import InfrastructureError, InvalidKeyError
from jobs.extract import ExtractionSettings, OcrEngine, extract_document
from jobs.ingest.batcher import WriteBatcher
from jobs.ingest.leases import HeldClaims
from jobs.ingest.plan import Action, Decision, decide, shard_of
from jobs.ingest.process import DocumentProcessor, DocumentResult
from jobs.ingest.summary import RunSummary, SummaryRecorder
from jobs.ingest.workers import RestartingPool
from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client, textract_client
from jobs.store.dynamo import BATCH_GET_LIMIT, TRANSACT_CHUNK, DocumentTable, TransactionNotSettledError, claim_put
from jobs.store.s3 import Buckets, ObjectAlreadyExistsError
from jobs.store.textract import TextractOcr

logger = logging.getLogger(__name__)

EXTRACT_TIMEOUT_SECONDS = 120.0
CLAIM_THREADS = 4
FIRST_PAGE_SIZE = 100  # the first documents start while the rest of the prefix is listed
T = TypeVar("T")


@dataclass(frozen=True)
class IngestOptions:
    shard_index: int = 0
    shard_count: int = 1
    max_docs: int | None = None
    dry_run: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.shard_index < self.shard_count:
            raise ValueError(f"shard {self.shard_index}/{self.shard_count}: need 0 <= index < count")


def new_run_id() -> str:
    return f"{layout.utc_now():%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def _documents(pages: Iterator[list[ObjectInfo]], recorder: SummaryRecorder, options: IngestOptions) -> Iterator[list[tuple[layout.RawKey, ObjectInfo]]]:
    """Valid raw objects of this shard, a listing page at a time; anything else is reported."""
    for page in pages:
        chosen: dict[tuple[str, str], tuple[layout.RawKey, ObjectInfo]] = {}
        for obj in page:
            try:
                raw = layout.parse_raw_key(obj.key)
            except InvalidKeyError as exc:
                recorder.invalid_key(obj.key, str(exc))
                continue
            if shard_of(raw.user_id, raw.document_id, options.shard_count) != options.shard_index:
                continue
            ident = (raw.user_id, raw.document_id)
            previous = chosen.get(ident)
            if previous is not None:
                # Two files under one documentId: the newest upload is the document.
                older, newer = sorted((previous, (raw, obj)), key=lambda p: (p[1].last_modified, p[1].key))
                recorder.invalid_key(older[1].key, f"superseded by {newer[1].key} (one file per documentId)")
                chosen[ident] = newer
            else:
                chosen[ident] = (raw, obj)
        recorder.listed(len(page), len(chosen))
        yield list(chosen.values())


class IngestRun:
    def __init__(
        self,
        settings: JobSettings,
        options: IngestOptions,
        *,
        metrics: CallMetrics | None = None,
        on_document: Callable[[DocumentResult | None], None] | None = None,
        s3: Any = None,
        dynamodb: Any = None,
        textract: Any = None,
    ) -> None:
        """`s3`/`dynamodb`/`textract`: injected boto3 clients (tests); built from settings otherwise."""
        settings.check_endpoints()
        self.settings = settings
        self.options = options
        self.metrics = metrics or CallMetrics()
        self.run_id = new_run_id()
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{self.run_id}"
        self._on_document = on_document or (lambda _result: None)
        self._table = DocumentTable(
            dynamodb or dynamodb_client(settings), settings.table_name, settings.index_name, self.metrics
        )
        self._buckets = Buckets(s3 or s3_client(settings), self.metrics)
        self._extraction = ExtractionSettings(
            confidence_threshold=settings.confidence_threshold, ocr_engine=settings.ocr_engine
        )
        self._textract = (
            TextractOcr(textract or textract_client(settings), max_tps=settings.textract_tps)
            if settings.ocr_engine == OcrEngine.TEXTRACT
            else None
        )
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._held = HeldClaims()

    def execute(self) -> RunSummary:
        started = layout.utc_now()
        recorder = SummaryRecorder(
            RunSummary(
                runId=self.run_id,
                shard=f"{self.options.shard_index}/{self.options.shard_count}",
                dryRun=self.options.dry_run,
                startedAt=started,
            )
        )
        logger.info("ingest started", extra={"runId": self.run_id, "shard": recorder.summary.shard})
        try:
            self._sweep(recorder)
        except (BotoCoreError, ClientError, TransactionNotSettledError) as exc:
            self._error = exc
        if self._error is not None:
            recorder.released(*self._held.release_all(self._table))
        summary = recorder.finish(
            layout.utc_now(),
            "aborted" if self._error else "completed",
            self.metrics.summary(),
            f"{type(self._error).__name__}: {self._error}" if self._error else None,
        )
        if not self.options.dry_run:
            self._write_summary(summary)
        if self._error is not None:
            raise InfrastructureError(f"ingest aborted: {summary.error}") from self._error
        return summary

    def _sweep(self, recorder: SummaryRecorder) -> None:
        """List → decide → claim → process, each stage overlapping the next.

        The main thread lists (one page prefetched) and decides; claim transactions run on their
        own small pool so processing never waits for the next claim; the number of claimed but
        unfinished documents is bounded, which bounds memory and how long a lease waits in line.
        """
        s = self.settings
        budget = self.options.max_docs
        in_flight = threading.BoundedSemaphore(s.io_threads * 2)
        claim_slots = threading.BoundedSemaphore(CLAIM_THREADS * 2)
        context = get_context("forkserver")  # no fork of a process that already runs threads
        context.set_forkserver_preload([extract_document.__module__])  # workers fork with it imported
        finishes = WriteBatcher(self._table, "dynamodb.TransactWrite.finish")
        try:
            with (
                RestartingPool(extract_document, s.workers, context) as pool,
                ThreadPoolExecutor(s.io_threads, thread_name_prefix="io") as io,
                ThreadPoolExecutor(CLAIM_THREADS, thread_name_prefix="claim") as claimers,
            ):
                processor = DocumentProcessor(
                    self._buckets,
                    s.processed_bucket,
                    lambda data, name: pool.submit(data, name, self._extraction),
                    finishes.submit,
                    self._extraction.max_input_bytes,
                    EXTRACT_TIMEOUT_SECONDS,
                    self._textract,
                )

                def claim_and_dispatch(chunk: list[tuple[layout.RawKey, ObjectInfo, Decision]]) -> None:
                    puts = [claim_put(d.claim, d.expected_version) for _, _, d in chunk if d.claim]
                    landed = self._table.put_all(puts, "dynamodb.TransactWrite.claim")
                    for (raw, obj, decision), ok in zip(chunk, landed, strict=True):
                        if not ok:
                            recorder.document(DocumentResult(raw.user_id, raw.document_id, obj.key, None))
                            continue
                        self._held.hold(decision.claim)
                        in_flight.acquire()
                        future = io.submit(self._process, processor, raw, obj, decision.claim)
                        future.add_done_callback(lambda f, raw=raw: self._processed(f, raw, in_flight, recorder))

                pages = _prefetch(self._buckets.list_pages(s.raw_bucket, layout.RAW_PREFIX, FIRST_PAGE_SIZE))
                # Decided a batched read at a time, so claims start after one read, not a page's ten.
                batches = (b for page in _documents(pages, recorder, self.options) for b in _chunks(page, BATCH_GET_LIMIT))
                for batch in batches:
                    if self._stop.is_set() or budget == 0:
                        break
                    claims = self._decide(batch, recorder, budget)
                    if budget is not None:
                        budget -= len(claims)
                    if self.options.dry_run:
                        continue
                    for chunk in _chunks(claims, TRANSACT_CHUNK):
                        claim_slots.acquire()
                        if self._stop.is_set():
                            claim_slots.release()
                            break
                        future = claimers.submit(claim_and_dispatch, chunk)
                        future.add_done_callback(lambda f: (claim_slots.release(), self._done(f, recorder)))
        finally:
            finishes.close()

    def _decide(
        self, batch: list[tuple[layout.RawKey, ObjectInfo]], recorder: SummaryRecorder, budget: int | None
    ) -> list[tuple[layout.RawKey, ObjectInfo, Decision]]:
        """What to do with one batch of listed objects (≤ 100), from one batched read of their items."""
        existing = self._table.get_many((r.user_id, r.document_id) for r, _ in batch)
        now = layout.utc_now()
        claims = []
        for raw, obj in batch:
            if budget is not None and len(claims) >= budget:
                break
            previous = existing.get((raw.user_id, raw.document_id))
            decision = decide(
                raw,
                obj,
                previous,
                now=now,
                owner=self.owner,
                lease=timedelta(seconds=self.settings.lease_seconds),
                max_attempts=self.settings.max_attempts,
            )
            # The reason is only worth a string for the few dead letters, not every skipped document.
            dead = previous if decision.action == Action.DEAD_LETTER else None
            recorder.decision(decision.action, obj.key, _dead_letter_reason(dead) if dead else "")
            if decision.action == Action.CLAIM:
                claims.append((raw, obj, decision))
        return claims

    def _process(self, processor: DocumentProcessor, raw: layout.RawKey, obj: ObjectInfo, claim: DocumentItem | None) -> Future[DocumentResult] | None:
        if self._stop.is_set() or claim is None:
            return None
        return processor.run(raw, obj, claim)

    def _processed(self, future: Future[Future[DocumentResult] | None], raw: layout.RawKey, in_flight: threading.BoundedSemaphore, recorder: SummaryRecorder) -> None:
        """An I/O thread is done with a document; its finish may still wait in the batcher, and
        the document counts as in flight until the finish was sent."""
        finish = None if future.exception() else future.result()
        if finish is None:
            self._settled(future, raw, in_flight, recorder)
            return
        finish.add_done_callback(lambda f: self._settled(f, raw, in_flight, recorder))

    def _settled(self, future: Future[Any], raw: layout.RawKey, in_flight: threading.BoundedSemaphore, recorder: SummaryRecorder) -> None:
        """The document is finished, lost, failed, or was never started (stopped): the claim
        stays held for a hand-back in the last two cases only."""
        if future.exception() is not None:
            self._held.failed(raw.user_id, raw.document_id)
        elif future.result() is not None:
            self._held.drop(raw.user_id, raw.document_id)
        in_flight.release()
        self._done(future, recorder)

    def _done(self, future: Future[Any], recorder: SummaryRecorder) -> None:
        error = future.exception()
        if error is not None:
            if self._error is None:
                self._error = error
                logger.error("infrastructure error, stopping the run", exc_info=error)
            self._stop.set()
            return
        result = future.result()
        if isinstance(result, DocumentResult):
            recorder.document(result)
            self._on_document(result)

    def _write_summary(self, summary: RunSummary) -> None:
        key = layout.ingest_run_key(f"{summary.startedAt:%Y-%m-%d}", summary.runId)
        try:
            self._buckets.put_once(
                self.settings.reports_bucket, key, summary.model_dump_json(indent=2).encode(), "application/json"
            )
        except (BotoCoreError, ClientError, ObjectAlreadyExistsError) as exc:
            logger.error("could not write the run summary", extra={"key": key, "error": str(exc)})


def _prefetch(pages: Iterator[list[ObjectInfo]]) -> Iterator[list[ObjectInfo]]:
    """List the next page while the current one is decided and claimed (listings are slow)."""
    ahead: queue.Queue[tuple[list[ObjectInfo] | None, BaseException | None]] = queue.Queue(maxsize=1)

    def fill() -> None:
        try:
            for page in pages:
                ahead.put((page, None))
            ahead.put((None, None))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the consuming thread
            ahead.put((None, exc))

    threading.Thread(target=fill, name="list-prefetch", daemon=True).start()
    while True:
        page, error = ahead.get()
        if error is not None:
            raise error
        if page is None:
            return
        yield page


def _chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _dead_letter_reason(item: DocumentItem) -> str:
    return f"{item.status} after {item.attempts} attempt(s): {item.failureCode or ''} {item.failureMessage or ''}".strip()


