"""Orchestration of one ingest run: take work from a source, decide, claim, process in pools.

The nightly run drains the arrival queue (its cost follows the night's uploads); a backfill
sweeps the whole raw/ prefix instead (sources.py); the plan says which (plans.py). Either way
each batch is decided from one batched item read, claimed 25 to a transaction on a small pool of
its own, and processed with S3/DynamoDB I/O on a thread pool and extraction on a process pool
sized to the cores (rebuilt if a worker dies). The number of documents in flight is bounded, so memory stays flat.

A run told to stop (SIGTERM from ECS, SIGINT, an outage) claims nothing more, lets the documents
in flight finish for a grace period, then cuts the rest off and hands their claims and messages
back, so the next run takes them at once.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from multiprocessing import get_context
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from jobs.contract import DocumentItem, ObjectInfo, layout
from jobs.contract.actors import ActorKind, actor
from jobs.errors import (
    DocuFlowError,
    DynamoItemRejectedError,
    InfrastructureError,
    RunStoppedError,
    SettingsError,
    StoreError,
    TextractPagesCapError,
)
from jobs.extract import ExtractionSettings, OcrEngine, extract_document
from jobs.ingest import job as ingest_job
from jobs.ingest.batcher import WriteBatcher
from jobs.ingest.claims import Claims
from jobs.ingest.ledger import Settle
from jobs.ingest.pages import PageBudget, night_of
from jobs.ingest.plan import Action, Admission, Decision, NewestSeen, decide, drain_deadline
from jobs.ingest.plans import BackfillPlan, DrainPlan, RunPlan, Shard
from jobs.ingest.process import DocumentProcessor
from jobs.ingest.results import DocumentResult
from jobs.ingest.sources import DrainLimits, QueueSource, SweepSource, Work, WorkSource
from jobs.ingest.summary import RunSummary, SummaryRecorder
from jobs.ingest.workers import RestartingPool
from jobs.observability import CallMetrics
from jobs.runtime.context import RunContext
from jobs.runtime.stores import arrivals, buckets, document_table
from jobs.settings import JobSettings
from jobs.store.clients import textract_client
from jobs.store.dynamo import TRANSACT_CHUNK, DocumentTable
from jobs.store.textract import TextractOcr

if TYPE_CHECKING:
    from jobs.store.clients import DynamoDBClient, S3Client, SQSClient, TextractClient

logger = logging.getLogger(__name__)

EXTRACT_TIMEOUT_SECONDS = 120.0
CLAIM_THREADS = 4
CLAIM_SLOTS = CLAIM_THREADS * 2  # claim chunks queued or in flight at once
FIRST_PAGE_SIZE = 100  # the first documents start while the rest of the prefix is listed
STOP_GRACE_SECONDS = 20.0  # inside the tasks' stopTimeout (120 s; 30 s on ECS by default), leaving time to hand back
T = TypeVar("T")


class IngestRun:
    def __init__(
        self,
        settings: JobSettings,
        plan: RunPlan,
        *,
        context: RunContext | None = None,
        metrics: CallMetrics | None = None,
        on_document: Callable[[DocumentResult | None], None] | None = None,
        s3: S3Client | None = None,
        dynamodb: DynamoDBClient | None = None,
        sqs: SQSClient | None = None,
        textract: TextractClient | None = None,
    ) -> None:
        """`context`: the run's (jobs.runtime: its id, its stop on signals, the metrics it publishes);
        a plain one otherwise. `s3`/`dynamodb`/`sqs`/`textract`: injected boto3 clients (tests);
        built from settings otherwise.
        """
        settings.check_endpoints()
        if isinstance(plan, DrainPlan) and not settings.store.arrivals_queue_url:
            raise SettingsError(
                "no arrival queue configured (DOCUFLOW_ARRIVALS_QUEUE_URL); use `ingest backfill` to sweep raw/"
            )
        self.settings = settings
        self.plan = plan
        self.shard = _shard(plan, settings)
        self.context = context or RunContext.of(settings, ingest_job.JOB)
        self.metrics = metrics or self.context.calls
        self.run_id = self.context.run_id
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{self.run_id}"
        self.actor = actor(ActorKind.INGEST, self.run_id)
        self._on_document = on_document or (lambda _result: None)
        self._table = document_table(settings, self.metrics, client=dynamodb)
        self._buckets = buckets(settings, self.metrics, client=s3)
        self._arrivals = None if isinstance(plan, BackfillPlan) else arrivals(settings, self.metrics, client=sqs)
        self._extraction = ExtractionSettings(
            confidence_threshold=settings.extraction.confidence_threshold, ocr_engine=settings.extraction.ocr_engine
        )
        self._extraction = ExtractionSettings.of(settings.extraction)
        self._textract = (
            TextractOcr(
                textract or textract_client(settings), max_tps=settings.extraction.textract_tps, metrics=self.metrics
            )
            if settings.extraction.ocr_engine == OcrEngine.TEXTRACT
            else None
        )
        self._pages = _page_budget(settings, self._table)
        self._deadline: datetime | None = None  # set when the run starts (drain_deadline)
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._claims = Claims(self._table)
        self._newest_seen = NewestSeen()
        self._source: WorkSource | None = None
        self._in_flight = 0
        self._in_flight_changed = threading.Condition()
        self.context.stop.on_stop(self.stop)  # SIGTERM/SIGINT: claim nothing more, hand back

    # --- the run ------------------------------------------------------------------------------
    def execute(self) -> RunSummary:
        started = layout.utc_now()
        self._deadline = drain_deadline(started, self.settings.run.scheduled_time, self.plan.max_seconds)
        recorder = SummaryRecorder(
            RunSummary(
                runId=self.run_id,
                mode=self.plan.mode,
                shard=str(self.shard),
                dryRun=self.plan.dry_run,
                startedAt=started,
                scheduledAt=self.settings.run.scheduled_time,
                deadline=self._deadline,
            )
        )
        logger.info("ingest started", extra={"runId": self.run_id, "mode": self.plan.mode})
        try:
            if self._deadline is not None and self._deadline <= started:
                # Started past its deadline (a late schedule): take nothing, leave the queue as it is.
                recorder.started_past_deadline()
            else:
                self._source = self._open_source(recorder)
                self._run(self._source, recorder)
        except (StoreError, InfrastructureError) as exc:
            self._fail(exc)
        finally:
            if self._source is not None:
                self._source.close()
        recorder.released(*self._claims.release_all())
        recorder.textract_pages(self._pages.spent, self._pages.cap, self._pages.night, self._pages.night_spent)
        self._queue_depths(recorder)
        summary = recorder.finish(
            layout.utc_now(),
            "aborted" if self._error else "completed",
            self.metrics.summary(),
            f"{type(self._error).__name__}: {self._error}" if self._error else None,
        )
        if not self.plan.dry_run:
            self._write_summary(summary)
            self.context.publish(summary.run_metrics())
        if isinstance(self._error, RunStoppedError | SettingsError):
            raise self._error  # a stop, or a configuration to fix (a table or queue that is not there)
        if self._error is not None:
            raise InfrastructureError(f"ingest aborted: {summary.error}") from self._error
        return summary

    def stop(self, reason: str) -> None:
        """Stop claiming and hand back what cannot finish in the grace period (signal handlers)."""
        self._fail(RunStoppedError(reason))

    def _fail(self, error: BaseException) -> None:
        if self._error is None:
            self._error = error
            if isinstance(error, DocuFlowError):  # our own errors say what happened: no trace needed
                if not isinstance(error, RunStoppedError):
                    logger.error("stopping the run", extra={"error": f"{type(error).__name__}: {error}"})
            else:
                logger.error("unexpected error, stopping the run", exc_info=error)
        self._stop.set()
        if self._source is not None:
            self._source.stop()

    def _open_source(self, recorder: SummaryRecorder) -> WorkSource:
        if self._arrivals is None:
            pages = _prefetch(
                self._buckets.list_pages(self.settings.store.raw_bucket, layout.RAW_PREFIX, FIRST_PAGE_SIZE)
            )
            return SweepSource(pages, recorder, self.shard.index, self.shard.count)
        visibility = self._arrivals.visibility_timeout()
        if visibility < 1:
            raise SettingsError(
                f"the arrival queue's VisibilityTimeout is {visibility} s: a drain needs the messages it"
                " works on hidden from other receivers (the stack sets it from the contract's QueueSpec)"
            )
        assert isinstance(self.plan, DrainPlan)  # a queue is opened for a drain only
        limits = DrainLimits(
            idle_seconds=self.plan.idle_seconds,
            defer_seconds=self.settings.ingest.lease_seconds,
            visibility_seconds=visibility,
        )
        return QueueSource(self._arrivals, self.settings.store.raw_bucket, recorder, limits, dry_run=self.plan.dry_run)

    def _run(self, source: WorkSource, recorder: SummaryRecorder) -> None:
        """Decide → claim → process, each stage overlapping the next.

        The main thread takes batches from the source and decides; claim transactions run on
        their own small pool so processing never waits for the next claim; the number of claimed
        but unfinished documents is bounded, which bounds memory and how long a lease waits.
        """
        s = self.settings
        context = get_context("forkserver")  # no fork of a process that already runs threads
        context.set_forkserver_preload([extract_document.__module__])  # workers fork with it imported
        finishes = WriteBatcher(self._table, "dynamodb.TransactWrite.finish")
        try:
            with (
                RestartingPool(extract_document, s.ingest.workers, context) as pool,
                ThreadPoolExecutor(s.store.io_threads, thread_name_prefix="io") as io,
                ThreadPoolExecutor(CLAIM_THREADS, thread_name_prefix="claim") as claimers,
            ):
                processor = DocumentProcessor(
                    self._buckets,
                    self._table,
                    s.store.processed_bucket,
                    lambda data, name: pool.submit(data, name, self._extraction),
                    finishes.submit,
                    self._extraction.max_input_bytes,
                    EXTRACT_TIMEOUT_SECONDS,
                    s.store.retention,
                    self._textract,
                    stopping=self._stop.is_set,
                    textract_fallback=s.extraction.textract_fallback,
                    follow_up=io.submit,
                    pages=self._pages,
                )
                claim_slots = threading.BoundedSemaphore(CLAIM_SLOTS)
                self._feed(source, recorder, processor, io, claimers, claim_slots)
                if not self._stop.is_set():
                    self._wait_settled(claim_slots)
                if self._stop.is_set():
                    self._cut_off(pool)
        finally:
            finishes.close()

    def _feed(
        self,
        source: WorkSource,
        recorder: SummaryRecorder,
        processor: DocumentProcessor,
        io: ThreadPoolExecutor,
        claimers: ThreadPoolExecutor,
        claim_slots: threading.BoundedSemaphore,
    ) -> None:
        """Take batches from the source, decide them, and hand the claims to the claim pool."""
        budget = self.plan.max_docs
        deadline = time.monotonic() + (self._deadline - layout.utc_now()).total_seconds() if self._deadline else None
        in_flight = threading.BoundedSemaphore(self.settings.store.io_threads * 2)

        def claim_and_dispatch(chunk: list[tuple[Work, Decision]]) -> None:
            landed = self._claims.claim([(d.claim, d.expected_version) for _, d in chunk if d.claim])
            for (work, decision), ok in zip(chunk, landed, strict=True):
                if not ok:
                    recorder.document(DocumentResult(work.raw.user_id, work.raw.document_id, work.obj.key, None))
                    work.settle(Settle.DEFER)
                    continue
                in_flight.acquire()
                self._entered()
                future = io.submit(self._process, processor, work, decision)
                future.add_done_callback(
                    functools.partial(self._processed, work=work, in_flight=in_flight, recorder=recorder)
                )

        for batch in source.batches():
            if self._stop.is_set() or budget == 0 or (deadline and time.monotonic() > deadline):
                if not self._stop.is_set():  # a bound, not a stop: what it holds finishes
                    recorder.stopped_for("max-docs" if budget == 0 else "deadline")
                _release(batch)
                source.stop()
                continue
            claims = self._decide(batch, recorder, budget)
            if budget is not None:
                budget -= len(claims)
            if self.plan.dry_run:
                _release([work for work, _ in claims])
                continue
            for chunk in _chunks(claims, TRANSACT_CHUNK):
                claim_slots.acquire()
                if self._stop.is_set():
                    claim_slots.release()
                    _release([work for work, _ in chunk])
                    continue
                future = claimers.submit(claim_and_dispatch, chunk)
                future.add_done_callback(functools.partial(self._claimed, chunk=chunk, slots=claim_slots))

    def _wait_settled(self, claim_slots: threading.BoundedSemaphore) -> None:
        """The source is done: wait for the claims still being sent, then for every claimed
        document to settle. A document may wait for its finish, or for a second round on the I/O
        pool (a duplicate), which must still be open for it. A stop cuts the wait short.
        """
        for _ in range(CLAIM_SLOTS):
            while not claim_slots.acquire(timeout=0.5):
                if self._stop.is_set():
                    return
        with self._in_flight_changed:
            while self._in_flight and not self._stop.is_set():
                self._in_flight_changed.wait(timeout=0.5)

    def _cut_off(self, pool: RestartingPool[Any]) -> None:
        """Stopping: documents in flight get STOP_GRACE_SECONDS to finish; then extraction is
        killed and what is left is handed back (the io pool's exit waits only for quick S3 and
        DynamoDB calls after that).
        """
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        with self._in_flight_changed:
            while self._in_flight and time.monotonic() < deadline:
                self._in_flight_changed.wait(timeout=max(0.0, deadline - time.monotonic()))
            if not self._in_flight:
                return
        logger.warning("stopping: cutting off the documents still in flight", extra={"documents": self._in_flight})
        pool.terminate()

    def _decide(self, batch: list[Work], recorder: SummaryRecorder, budget: int | None) -> list[tuple[Work, Decision]]:
        """What to do with one batch of objects (≤ 100), from one batched read of their items."""
        existing = self._table.get_many((w.raw.user_id, w.raw.document_id) for w in batch)
        now = layout.utc_now()
        claims: list[tuple[Work, Decision]] = []
        for work in batch:
            if budget is not None and len(claims) >= budget:
                work.settle(Settle.RELEASE)
                continue
            ident = (work.raw.user_id, work.raw.document_id)
            admission = self._newest_seen.admit(ident, work.obj)
            if admission == Admission.SUPERSEDED:
                recorder.decision(Action.SKIP_SUPERSEDED, work.obj.key, "a newer upload of the document came first")
                work.settle(Settle.DONE)
                continue
            if admission == Admission.DUPLICATE and self.plan.dry_run:
                # Another message for an upload this dry run already reported: a real run's
                # first claim would make it a skip (reported once; handed back like the rest).
                work.settle(Settle.DONE)
                continue
            previous = existing.get(ident)
            decision = decide(
                work.raw,
                work.obj,
                previous,
                now=now,
                owner=self.owner,
                actor=self.actor,
                lease=timedelta(seconds=self.settings.ingest.lease_seconds),
                max_attempts=self.settings.ingest.max_attempts,
            )
            # The reason is only worth a string for the few dead letters, not every skipped document.
            recorder.decision(decision.action, work.obj.key, _reason(decision.action, previous))
            if decision.action == Action.CLAIM:
                claims.append((work, decision))
            else:
                work.settle(Settle.DEFER if decision.action == Action.SKIP_LEASED else Settle.DONE)
        return claims

    def _process(self, processor: DocumentProcessor, work: Work, decision: Decision) -> Future[DocumentResult] | None:
        if self._stop.is_set():
            return None  # never started: handed back with its attempt refunded
        return processor.run(work.raw, work.obj, decision)

    # --- settling one document ----------------------------------------------------------------
    def _processed(
        self,
        future: Future[Future[DocumentResult] | None],
        work: Work,
        in_flight: threading.BoundedSemaphore,
        recorder: SummaryRecorder,
    ) -> None:
        """An I/O thread is done with a document; its finish may still wait in the batcher, and
        the document counts as in flight until the finish was sent.
        """
        # A cancelled future (cut off by the stop) was never processed: settled as handed back.
        finish = None if future.cancelled() or future.exception() else future.result()
        if finish is None:
            self._settled(future, work, in_flight, recorder)
            return
        finish.add_done_callback(lambda f: self._settled(f, work, in_flight, recorder))

    def _settled(
        self, future: Future[Any], work: Work, in_flight: threading.BoundedSemaphore, recorder: SummaryRecorder
    ) -> None:
        """The document is finished, lost, failed, or was never started (stopped): the claim
        stays held for a hand-back in the last two cases only.
        """
        raw = work.raw
        # Read before the try only what cannot raise: a cancelled future's exception() raises, and
        # a settle that raised would keep its in-flight slot, and the stop would wait for it forever.
        cancelled = future.cancelled()
        error = None if cancelled else future.exception()
        try:
            if (
                cancelled
                or isinstance(error, RunStoppedError | DynamoItemRejectedError | TextractPagesCapError)
                or (error is None and future.result() is None)
            ):
                if isinstance(error, DynamoItemRejectedError):
                    self._claims.failed(raw.user_id, raw.document_id)  # its own value: the attempt counts
                    recorder.rejected(work.obj.key, str(error))
                if isinstance(error, TextractPagesCapError):
                    recorder.deferred_for_page_cap(work.obj.key, str(error))  # handed back, refunded
                work.settle(Settle.RELEASE)
                return
            if error is not None:
                self._claims.failed(raw.user_id, raw.document_id)
                work.settle(Settle.RELEASE)
                self._fail(error)
                return
            result: DocumentResult = future.result()
            self._claims.drop(raw.user_id, raw.document_id)
            recorder.document(result)
            self._on_document(result)
            lost = result.status is None and not result.stale
            work.settle(Settle.DEFER if lost else Settle.DONE)
        finally:
            in_flight.release()
            self._left()

    def _claimed(
        self, future: Future[None], chunk: list[tuple[Work, Decision]], slots: threading.BoundedSemaphore
    ) -> None:
        """A claim transaction is done: its slot is free again, and a failed one hands its work back."""
        slots.release()
        error = future.exception()
        if error is not None:
            _release([work for work, _ in chunk])
            self._fail(error)

    def _entered(self) -> None:
        with self._in_flight_changed:
            self._in_flight += 1

    def _left(self) -> None:
        with self._in_flight_changed:
            self._in_flight -= 1
            self._in_flight_changed.notify_all()

    # --- reporting ----------------------------------------------------------------------------
    def _queue_depths(self, recorder: SummaryRecorder) -> None:
        if self._arrivals is None:
            return
        try:
            waiting, in_flight = self._arrivals.depth()
            recorder.queue_depths(waiting, in_flight, self._arrivals.dead_letter_depth())
        except StoreError as exc:
            logger.warning("could not read the queue depths", extra={"error": str(exc)})

    def _write_summary(self, summary: RunSummary) -> None:
        key = layout.ingest_run_key(f"{summary.startedAt:%Y-%m-%d}", summary.runId)
        try:
            self._buckets.put_once(
                self.settings.store.reports_bucket, key, summary.model_dump_json(indent=2).encode(), "application/json"
            )
        except StoreError as exc:
            logger.error("could not write the run summary", extra={"key": key, "error": str(exc)})


def _shard(plan: RunPlan, settings: JobSettings) -> Shard:
    """A backfill's shard: its plan's, else the task's SHARD_INDEX/SHARD_COUNT; a drain has one."""
    if not isinstance(plan, BackfillPlan):
        return Shard()
    if plan.shard is not None:
        return plan.shard
    try:
        return Shard(index=settings.ingest.shard_index, count=settings.ingest.shard_count)
    except ValidationError as exc:
        ingest = settings.ingest
        raise SettingsError(
            f"SHARD_INDEX {ingest.shard_index} / SHARD_COUNT {ingest.shard_count}: need 0 <= index < count"
        ) from exc


def _page_budget(settings: JobSettings, table: DocumentTable) -> PageBudget:
    """One budget per night across every task (a counter in the table), the night being the
    schedule's, so a retry or a manual backfill of that night spends from the same cap.
    """
    night = night_of(settings.run.scheduled_time or layout.utc_now(), settings.run.schedule_timezone)
    return PageBudget(settings.extraction.textract_max_pages, night=night, counter=table)


def _release(works: list[Work]) -> None:
    for work in works:
        work.settle(Settle.RELEASE)


def _prefetch(pages: Iterator[list[ObjectInfo]]) -> Iterator[list[ObjectInfo]]:
    """List the next page while the current one is decided and claimed (listings are slow)."""
    ahead: queue.Queue[tuple[list[ObjectInfo] | None, BaseException | None]] = queue.Queue(maxsize=1)

    def fill() -> None:
        try:
            for page in pages:
                ahead.put((page, None))
            ahead.put((None, None))
        except BaseException as exc:
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


def _reason(action: Action, item: DocumentItem | None) -> str:
    """Worth a string only for the few dead letters and superseded files, not every skip."""
    if item is None:
        return ""
    if action == Action.DEAD_LETTER:
        failure = f"{item.failureCode or ''} {item.failureMessage or ''}"
        return f"{item.status} after {item.attempts} attempt(s): {failure}".strip()
    if action == Action.SKIP_SUPERSEDED:
        return f"superseded by {item.rawS3Uri}"
    return ""
