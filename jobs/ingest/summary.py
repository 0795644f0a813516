"""The run summary: counts per status and format, dead letters, failures, timings, AWS call stats,
the Textract pages spent and the documents deferred for the page cap, and the night's estimated
cost (jobs.ingest.costs); and what of it the night's CloudWatch metrics carry (`run_metrics`).
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, Field

from jobs.contract.metrics import MIN_DOCUMENTS_FOR_RATIO, Datum, Job, Metric, RunMetrics, Unit
from jobs.contract.status import Status
from jobs.ingest.costs import CostEstimate, estimate
from jobs.ingest.plan import Action
from jobs.ingest.results import DocumentResult

MAX_LISTED = 1000  # keep the summary bounded however large the backlog


class ListedDocument(BaseModel):
    key: str
    reason: str


class RunSummary(BaseModel):
    runId: str
    mode: str  # drain (the arrival queue) | backfill (a sweep of raw/)
    shard: str
    dryRun: bool
    startedAt: datetime
    finishedAt: datetime | None = None
    outcome: str = "running"  # completed | aborted
    # A completed drain that ended at a bound rather than an empty queue: "deadline" (--max-minutes,
    # the scheduled drain's stop in time for the reconcile) or "max-docs"; its rest stays queued.
    stoppedFor: str | None = None
    # Started after its deadline (a schedule's late retry): it took nothing, so it is no night's
    # drain and publishes no heartbeat; the heartbeat alarm hears of a night no task drained.
    startedPastDeadline: bool = False
    # A scheduled run's intended start (unset for a manual run) and the bound it drains to.
    scheduledAt: datetime | None = None
    deadline: datetime | None = None
    error: str | None = None
    seconds: float = 0.0
    listed: int = 0
    inShard: int = 0
    decisions: dict[str, int] = Field(default_factory=dict)
    statuses: dict[str, int] = Field(default_factory=dict)
    formats: dict[str, int] = Field(default_factory=dict)
    lostClaims: int = 0
    releasedClaims: int = 0  # handed back when the run aborted, claimable at once
    leasedClaims: int = 0  # could not be handed back: they wait for their lease to expire
    processed: int = 0
    documentsPerSecond: float = 0.0
    invalidKeys: list[ListedDocument] = Field(default_factory=list)
    invalidKeyCount: int = 0
    deadLetters: list[ListedDocument] = Field(default_factory=list)
    deadLetterCount: int = 0
    superseded: list[ListedDocument] = Field(default_factory=list)  # older files under a documentId
    failures: list[ListedDocument] = Field(default_factory=list)
    # Documents sent to review as duplicates of another of their user's (the reasons name it).
    duplicates: list[ListedDocument] = Field(default_factory=list)
    duplicateCount: int = 0
    staleObjects: int = 0  # changed or deleted between the event/listing and the read
    rejectedItems: int = 0  # DynamoDB refused the finished item: handed back, the attempt counted
    messages: dict[str, int] = Field(default_factory=dict)  # the arrival queue: received, deleted, …
    notices: dict[str, int] = Field(default_factory=dict)  # test events and other non-arrivals
    malformedMessages: list[ListedDocument] = Field(default_factory=list)
    queueWaiting: int | None = None  # left in the queue at the end (the next run's backlog)
    queueInFlight: int | None = None
    deadLetterQueue: int | None = None  # messages that kept failing, waiting for a person
    calls: dict[str, Any] = Field(default_factory=dict)
    textractPages: int = 0  # the pages reserved for Textract calls (what it bills)
    textractPageCap: int | None = None  # the night's, shared by every run of it
    textractNight: date | None = None  # the night whose cap this run spent from
    textractNightPages: int | None = None  # that night's pages after this run's last reservation (every run's)
    # Claimed, then handed back unread: their pages would have passed the cap. Their messages
    # stay in the queue for the next night; neither failed nor an attempt.
    deferredForPageCap: int = 0
    deferredForPageCapDocuments: list[ListedDocument] = Field(default_factory=list)
    estimatedCost: CostEstimate | None = None

    def failed_ratio(self) -> float | None:
        """FAILED documents over those the run finished; None below MIN_DOCUMENTS_FOR_RATIO."""
        if self.processed < MIN_DOCUMENTS_FOR_RATIO:
            return None
        return self.statuses.get(Status.FAILED.value, 0) / self.processed

    def failed_ratio_breached(self, threshold: float) -> bool:
        ratio = self.failed_ratio()
        return ratio is not None and ratio > threshold

    def run_metrics(self) -> RunMetrics:
        skipped = sum(n for action, n in self.decisions.items() if action.startswith("SKIP_"))
        counts = {
            Metric.RECEIVED: sum(self.decisions.values()),
            Metric.PROCESSED: self.statuses.get(Status.PROCESSED.value, 0),
            Metric.SENT_TO_REVIEW: self.statuses.get(Status.REVIEW_REQUIRED.value, 0),
            Metric.FAILED: self.statuses.get(Status.FAILED.value, 0),
            Metric.DEAD_LETTERED: self.deadLetterCount,
            Metric.SKIPPED: skipped,
            Metric.TEXTRACT_PAGES: self.textractPages,
        }
        data = [Datum(metric=metric, value=value) for metric, value in counts.items()]
        if self.estimatedCost is not None:  # USD at list prices: no CloudWatch unit says dollars
            cost = float(self.estimatedCost.usd["total"])
            data.append(Datum(metric=Metric.ESTIMATED_COST, value=cost, unit=Unit.NONE))
        if self.outcome == "completed" and not self.startedPastDeadline:  # an aborted or empty night is none
            data.append(Datum(metric=Metric.HEARTBEAT, value=1))
        data.append(Datum(metric=Metric.DURATION, value=self.seconds, unit=Unit.SECONDS))
        if (ratio := self.failed_ratio()) is not None:
            data.append(Datum(metric=Metric.FAILED_RATIO, value=ratio, unit=Unit.NONE))
        if self.queueWaiting is not None:  # a backfill reads no queue
            data.append(Datum(metric=Metric.QUEUE_DEPTH, value=self.queueWaiting))
        if self.deadLetterQueue is not None:
            data.append(Datum(metric=Metric.DEAD_LETTER_DEPTH, value=self.deadLetterQueue))
        return RunMetrics(job=Job.INGEST, data=tuple(data))


class SummaryRecorder:
    """Collects outcomes from many worker threads into one RunSummary."""

    def __init__(self, summary: RunSummary) -> None:
        self.summary = summary
        self._lock = threading.Lock()
        self._decisions: Counter[str] = Counter()
        self._statuses: Counter[str] = Counter()
        self._formats: Counter[str] = Counter()
        self._messages: Counter[str] = Counter()
        self._notices: Counter[str] = Counter()

    def listed(self, count: int, in_shard: int) -> None:
        with self._lock:
            self.summary.listed += count
            self.summary.inShard += in_shard

    def invalid_key(self, key: str, reason: str) -> None:
        with self._lock:
            self.summary.invalidKeyCount += 1
            if len(self.summary.invalidKeys) < MAX_LISTED:
                self.summary.invalidKeys.append(ListedDocument(key=key, reason=f"INVALID_KEY: {reason}"))

    def decision(self, action: Action, key: str, reason: str = "") -> None:
        with self._lock:
            self._decisions[action.value] += 1
            if action == Action.DEAD_LETTER:
                self.summary.deadLetterCount += 1
                if len(self.summary.deadLetters) < MAX_LISTED:
                    self.summary.deadLetters.append(ListedDocument(key=key, reason=reason))
            elif action == Action.SKIP_SUPERSEDED and len(self.summary.superseded) < MAX_LISTED:
                self.summary.superseded.append(
                    ListedDocument(key=key, reason=reason or "a newer upload is the document")
                )

    def message_received(self, receive_count: int) -> None:
        with self._lock:
            self._messages["received"] += 1
            if receive_count > 1:
                self._messages["redelivered"] += 1

    def message_received_again(self) -> None:
        """A message this run holds came back (its visibility lapsed): not handed out twice."""
        with self._lock:
            self._messages["receivedAgain"] += 1

    def message_malformed(self, message_id: str, reason: str) -> None:
        with self._lock:
            self._messages["malformed"] += 1
            if len(self.summary.malformedMessages) < MAX_LISTED:
                self.summary.malformedMessages.append(ListedDocument(key=message_id, reason=reason))

    def notice(self, kind: str, detail: str) -> None:
        with self._lock:
            self._notices[kind] += 1

    def messages_settled(self, how: str, done: int, failed: int) -> None:
        with self._lock:
            self._messages[how.lower()] += done
            if failed:
                self._messages[f"{how.lower()}Failed"] += failed

    def rejected(self, key: str, reason: str) -> None:
        with self._lock:
            self.summary.rejectedItems += 1
            if len(self.summary.failures) < MAX_LISTED:
                self.summary.failures.append(ListedDocument(key=key, reason=f"REJECTED: {reason}"))

    def queue_depths(self, waiting: int, in_flight: int, dead_letters: int | None) -> None:
        with self._lock:
            self.summary.queueWaiting = waiting
            self.summary.queueInFlight = in_flight
            self.summary.deadLetterQueue = dead_letters

    def document(self, result: DocumentResult) -> None:
        with self._lock:
            if result.stale:
                self.summary.staleObjects += 1
            if result.status is None:
                if not result.stale:
                    self.summary.lostClaims += 1
                return
            self.summary.processed += 1
            self._statuses[result.status.value] += 1
            if result.format is not None:
                self._formats[result.format.value] += 1
            if result.duplicate_of:
                self.summary.duplicateCount += 1
                if len(self.summary.duplicates) < MAX_LISTED:
                    self.summary.duplicates.append(ListedDocument(key=result.key, reason=" ".join(result.duplicate_of)))
            if result.failure_code and len(self.summary.failures) < MAX_LISTED:
                self.summary.failures.append(
                    ListedDocument(key=result.key, reason=f"{result.failure_code}: {result.failure_message or ''}")
                )

    def deferred_for_page_cap(self, key: str, reason: str) -> None:
        with self._lock:
            self.summary.deferredForPageCap += 1
            if len(self.summary.deferredForPageCapDocuments) < MAX_LISTED:
                self.summary.deferredForPageCapDocuments.append(ListedDocument(key=key, reason=reason))

    def textract_pages(
        self, spent: int, cap: int | None, night: date | None = None, night_spent: int | None = None
    ) -> None:
        with self._lock:
            self.summary.textractPages = spent
            self.summary.textractPageCap = cap
            self.summary.textractNight = night
            self.summary.textractNightPages = night_spent

    def stopped_for(self, bound: str) -> None:
        with self._lock:
            self.summary.stoppedFor = self.summary.stoppedFor or bound

    def started_past_deadline(self) -> None:
        self.stopped_for("deadline")
        with self._lock:
            self.summary.startedPastDeadline = True

    def released(self, released: int, leased: int) -> None:
        with self._lock:
            self.summary.releasedClaims = released
            self.summary.leasedClaims = leased

    def finish(
        self, finished_at: datetime, outcome: str, calls: dict[str, Any], error: str | None = None
    ) -> RunSummary:
        with self._lock:
            s = self.summary
            s.finishedAt = finished_at
            s.outcome = outcome
            s.error = error
            s.seconds = round((finished_at - s.startedAt).total_seconds(), 3)
            s.documentsPerSecond = round(s.processed / s.seconds, 2) if s.seconds else 0.0
            s.decisions = dict(sorted(self._decisions.items()))
            s.statuses = dict(sorted(self._statuses.items()))
            s.formats = dict(sorted(self._formats.items()))
            s.messages = dict(sorted(self._messages.items()))
            s.notices = dict(sorted(self._notices.items()))
            s.calls = calls
            s.estimatedCost = estimate(
                calls,
                decided=sum(self._decisions.values()),
                claimed=self._decisions[Action.CLAIM.value],
                textract_pages=s.textractPages,
                seconds=s.seconds,
            )
            return s
