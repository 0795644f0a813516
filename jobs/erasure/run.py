"""One erasure run: passes over the user's partition and prefixes until one finds nothing to delete.

A pass reads the whole partition (Query, consistent), lists the versions under `raw/U/` and the
processed prefix (kept in memory: one user's, some hundred bytes each), deletes them in
DeleteObjects requests of 1,000 versions and markers each (ceil(n / 1,000) per bucket), then deletes
the items it read, each only if it is still the version read (TransactWriteItems of up to 100
conditional writes): each document first gets a last version naming the run (`erasure:<runId>`),
so the change log's REMOVE record says who removed it, then goes. Objects go before items, so a
crash leaves items that still point at what is left, and the marker (RUNNING) lets the next run
resume under the same id and counts. Before each DeleteObjects request or item transaction the
marker names the batch about to go (jobs.erasure.journal) and adds the count of the batch before
it (one marker write a batch); a resumed run first counts what of a batch left pending is no
longer stored. So the receipt counts everything deleted across all runs, whatever request or
pass a kill hit, each version, marker and item once.

A version S3 refuses to delete is asked for its legal hold (GetObjectLegalHold, only on a
refusal): a held one is kept, with its document's item and markers, and listed in the receipt
(a hold that set its versions' holds and did not finish recording it on the item), instead of
being tried pass after pass; the run remembers it for its later passes.

An upload of the user arriving during the erasure ends erased or intact, never half:
- its raw object listed by a pass is deleted with the rest; the ingest that later takes its
  message finds it gone and, seeing the marker, removes its claim instead of writing a tombstone;
- a claim (PROCESSING) a pass deletes may still write result.json until its lease ends: the next
  pass waits out the latest lease it saw and finds (and deletes) what the writer left;
- an upload no pass listed arrived after the last one: it is processed into a whole document.
The run ends with a pass that found nothing (held documents aside), after the waits; a user
whose data keeps changing is refused after MAX_PASSES (the run can be started again).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from jobs.contract import layout, queue_spec
from jobs.contract.actors import ActorKind, actor
from jobs.contract.erasure import (
    ErasureCounts,
    ErasureMarker,
    ErasurePending,
    ErasureReceipt,
    ErasureState,
    holdings,
)
from jobs.contract.objects import ObjectVersion
from jobs.erasure.journal import items_pending, landed, stored_prints, versions_pending
from jobs.erasure.selection import ItemToDelete, Partition, document_of, kept_by, kept_documents
from jobs.errors import ErasureNotSettledError, ErasureUnknownUserError, S3ObjectExistsError
from jobs.observability import CallMetrics
from jobs.runtime.ids import new_run_id
from jobs.runtime.signals import StopFlag
from jobs.settings import JobSettings
from jobs.store.dynamo import TRANSACT_LIMIT, DocumentTable
from jobs.store.s3 import DELETE_BATCH, Buckets, Refused
from jobs.store.table_writes import ConditionalDelete, delete_if_version, erasure_put, version_put

logger = logging.getLogger(__name__)

RESUMABLE = "(what it deleted stays deleted and is counted in its marker: run the erasure again to resume)"

MAX_PASSES = 6
LEASE_MARGIN = timedelta(seconds=5)  # past a lease, for the writer's last request to land


@dataclass
class PassOutcome:
    deleted: ErasureCounts = field(default_factory=ErasureCounts)
    refused: int = 0  # versions S3 would not delete (a hold placed meanwhile): the next pass looks again
    kept_versions: Counter[str] = field(default_factory=Counter)
    held_versions: set[str] = field(default_factory=set)  # documents with a version S3 holds, their item not
    partition: Partition = field(default_factory=Partition)
    leases_until: datetime | None = None

    @property
    def settled(self) -> bool:
        return self.deleted.empty and not self.refused and self.leases_until is None


@dataclass
class Progress:
    """What a run carries from batch to batch and pass to pass."""

    marker: ErasureMarker | None  # None: a dry run, which deletes and saves nothing
    # Versions S3 refused to delete under a legal hold: (bucket, key, version id) -> documentId.
    held: dict[tuple[str, str, str], str] = field(default_factory=dict)
    # What landed since the marker's last write (its batch is the marker's pending one).
    unsaved: ErasureCounts = field(default_factory=ErasureCounts)

    def counts(self) -> ErasureCounts:
        """Everything the erasure deleted so far, over all its runs."""
        assert self.marker is not None
        return self.marker.counts.plus(self.unsaved)

    @property
    def by(self) -> str | None:
        return self.marker.updatedBy if self.marker else None


@dataclass(frozen=True)
class ErasureResult:
    """The run's answer: the receipt it wrote, a dry run's count, or nothing to erase."""

    outcome: str  # "erased", "dry-run", "nothing"
    message: str
    receipt: ErasureReceipt | None = None
    receipt_uri: str | None = None
    would_delete: ErasureCounts | None = None


class ErasureRun:
    def __init__(
        self,
        settings: JobSettings,
        table: DocumentTable,
        buckets: Buckets,
        metrics: CallMetrics,
        *,
        clock: Callable[[], datetime] = layout.utc_now,
        sleep: Callable[[float], None] = time.sleep,
        between_passes: Callable[[int], None] = lambda _n: None,
        stop: StopFlag | None = None,
    ) -> None:
        """`between_passes(n)`: called after pass n (tests interleave uploads and runs there).
        `stop`: the run's (jobs.runtime); a stop is taken between delete batches and passes, where
        what was deleted is counted in the marker, which stays RUNNING for a rerun to resume.
        """
        self._settings = settings
        self._table = table
        self._buckets = buckets
        self._metrics = metrics
        self._clock = clock
        self._sleep = sleep
        self._between_passes = between_passes
        self._stop = stop or StopFlag()

    def execute(self, user_id: str, *, dry_run: bool = False) -> ErasureResult:
        layout.validate_id(user_id, "userId")
        marker = self._table.erasure_marker(user_id)
        if dry_run:
            outcome = self._pass(user_id, Progress(None))
            held = [d.documentId for d in outcome.partition.held]
            return ErasureResult(
                "dry-run",
                f"would erase {outcome.deleted}; kept under a legal hold: {held}",
                None,
                None,
                outcome.deleted,
            )
        resuming = marker is not None and marker.state == ErasureState.RUNNING
        if not resuming and not self._anything_left(user_id):
            return _nothing(user_id, marker)
        started = self._clock()
        if resuming and marker is not None and marker.pending is not None:
            marker = self._settle(marker)
        if marker is None or not resuming:
            run_id = new_run_id(started)
            marker = self._mark(
                ErasureMarker(
                    userId=user_id,
                    runId=run_id,
                    state=ErasureState.RUNNING,
                    startedAt=started,
                    updatedBy=actor(ActorKind.ERASURE, run_id),
                    version=(marker.version + 1) if marker else 1,
                ),
                marker.version if marker else None,
            )
        return self._erase(marker)

    # --- the passes ------------------------------------------------------------------------
    def _erase(self, marker: ErasureMarker) -> ErasureResult:
        user_id = marker.userId
        last = PassOutcome()
        progress = Progress(marker)
        for number in range(1, MAX_PASSES + 1):
            last = self._pass(user_id, progress)
            logger.info(
                "erasure pass",
                extra={"userId": user_id, "runId": marker.runId, "pass": number, "deleted": last.deleted.model_dump()},
            )
            self._between_passes(number)
            self._check_stop(progress)
            if last.settled:
                return self._finish(progress, last, number)
            if last.leases_until is not None:
                self._sleep(max(0.0, (last.leases_until + LEASE_MARGIN - self._clock()).total_seconds()))
        raise ErasureNotSettledError(
            f"user {user_id}'s data kept changing over {MAX_PASSES} passes (last: {last.deleted}, "
            f"{last.refused} version(s) S3 refused): run the erasure again"
        )

    def _pass(self, user_id: str, progress: Progress) -> PassOutcome:
        """Read the partition, delete the versions outside held documents, then the items, as the
        run's marker names it (a dry run, without one, deletes nothing).
        """
        items = [item for page in self._table.partition_pages(user_id) for item in page]
        outcome = PassOutcome(partition=Partition.of(items))
        outcome.leases_until = outcome.partition.leases_until(self._clock())
        kept_prefixes = outcome.partition.kept_prefixes()
        s = self._settings
        for bucket, prefix in zip(
            (s.store.raw_bucket, s.store.processed_bucket), layout.user_prefixes(user_id), strict=True
        ):
            # The whole listing first, then the deletes: a listing resumed after its own page was
            # deleted is S3's to position, and moto's server loses its place there.
            doomed: list[ObjectVersion] = []
            for page in self._buckets.version_pages(bucket, prefix):
                for version in page:
                    held_by = kept_by(version, kept_prefixes)
                    s3_held = progress.held.get((bucket, version.key, version.version_id))
                    if held_by is None and s3_held is not None:
                        held_by = s3_held
                        outcome.held_versions.add(s3_held)
                    if held_by is not None:
                        outcome.kept_versions[held_by] += 1
                    else:
                        doomed.append(version)
            for start in range(0, len(doomed), DELETE_BATCH):
                self._check_stop(progress)
                self._delete_versions(bucket, prefix, doomed[start : start + DELETE_BATCH], outcome, progress)
        self._delete_items(outcome, progress)
        return outcome

    def _delete_versions(
        self, bucket: str, prefix: str, versions: list[ObjectVersion], outcome: PassOutcome, progress: Progress
    ) -> None:
        refused: list[Refused] = []
        if progress.marker is not None:
            self._intend(progress, versions_pending(versions))
            refused = self._buckets.delete_versions(bucket, versions)
        held = self._held_among(versions, refused)
        for version in held:
            document = document_of(version.key, prefix)
            progress.held[(bucket, version.key, version.version_id)] = document
            outcome.kept_versions[document] += 1
            outcome.held_versions.add(document)
        # Any other refusal: the next pass relists (moto names only the key of a refused version).
        outcome.refused += len(refused) - len(held)
        markers = sum(v.delete_marker for v in versions)
        self._landed(
            outcome,
            progress,
            ErasureCounts(versions=max(0, len(versions) - markers - len(refused)), deleteMarkers=markers),
        )

    def _held_among(self, versions: list[ObjectVersion], refused: list[Refused]) -> list[ObjectVersion]:
        """The versions S3 refused to delete that are under a legal hold."""
        named = {(r.key, r.version_id) for r in refused}
        keys_only = {r.key for r in refused if r.version_id is None}  # moto's server names the key alone
        return [
            v
            for v in versions
            if not v.delete_marker
            and ((v.key, v.version_id) in named or v.key in keys_only)
            and self._buckets.legal_hold(v)
        ]

    def _delete_items(self, outcome: PassOutcome, progress: Progress) -> None:
        todo = outcome.partition.deletions(outcome.held_versions)
        for start in range(0, len(todo), TRANSACT_LIMIT):
            batch = todo[start : start + TRANSACT_LIMIT]
            gone = batch
            if progress.by is not None:
                self._intend(progress, items_pending(batch))
                gone = self._sign_and_delete(batch, progress.by)
            # An item that changed since it was read (a claim, a hold) is read again by the next pass.
            outcome.refused += len(batch) - len(gone)
            self._landed(outcome, progress, ErasureCounts(items=len(gone), documents=sum(t.document for t in gone)))

    def _intend(self, progress: Progress, batch: ErasurePending) -> None:
        """Before a batch's request: the marker names the batch and counts the one before it."""
        marker = progress.marker
        assert marker is not None
        progress.marker = self._mark(
            marker.model_copy(update={"counts": progress.counts(), "pending": batch, "version": marker.version + 1}),
            marker.version,
        )
        progress.unsaved = ErasureCounts()

    def _check_stop(self, progress: Progress) -> None:
        """A stop between batches: the marker counts the last batch first (nothing is pending)."""
        marker = progress.marker
        if self._stop.stopping and marker is not None and (marker.pending is not None or not progress.unsaved.empty):
            progress.marker = self._mark(
                marker.model_copy(update={"counts": progress.counts(), "pending": None, "version": marker.version + 1}),
                marker.version,
            )
            progress.unsaved = ErasureCounts()
        self._stop.check(RESUMABLE)

    def _landed(self, outcome: PassOutcome, progress: Progress, gone: ErasureCounts) -> None:
        """Count what a batch deleted, in the pass and (a real run) towards the marker's next write."""
        outcome.deleted = outcome.deleted.plus(gone)
        if progress.marker is not None:
            progress.unsaved = progress.unsaved.plus(gone)

    def _settle(self, marker: ErasureMarker) -> ErasureMarker:
        """Count the batch a killed run left pending: what of it is no longer stored, it deleted.
        Before any new delete, so nothing this run deletes is mistaken for it.
        """
        assert marker.pending is not None
        s = self._settings
        versions = [
            v
            for bucket, prefix in zip(
                (s.store.raw_bucket, s.store.processed_bucket), layout.user_prefixes(marker.userId), strict=True
            )
            for page in self._buckets.version_pages(bucket, prefix)
            for v in page
        ]
        items = [item for page in self._table.partition_pages(marker.userId) for item in page]
        gone = landed(marker.pending, stored_prints(versions, items))
        logger.info(
            "erasure resumed", extra={"userId": marker.userId, "runId": marker.runId, "pending": gone.model_dump()}
        )
        return self._mark(
            marker.model_copy(
                update={"counts": marker.counts.plus(gone), "pending": None, "version": marker.version + 1}
            ),
            marker.version,
        )

    def _sign_and_delete(self, todo: list[ItemToDelete], by: str) -> list[ItemToDelete]:
        """Each document's last version names the erasure, then every item goes, each only if it
        is still the version read (or signed); returns those deleted. A DeleteItem carries no
        actor: the signed version is what the REMOVE record's old image shows, so the change log
        says who removed the document (jobs.contract.audit).
        """
        now = self._clock()
        documents = [(t, t.item) for t in todo if t.item is not None]
        signs = [
            version_put(d.evolve(version=d.version + 1, updatedAt=now, updatedBy=by), d.version) for _, d in documents
        ]
        signed = self._table.put_all(signs, "dynamodb.TransactWrite.erase", TRANSACT_LIMIT)
        lost = {id(t) for (t, _), ok in zip(documents, signed, strict=True) if not ok}
        sent = [t for t in todo if id(t) not in lost]
        deletes = [
            delete_if_version(t.key, t.version + 1 if t.document else t.version)
            if t.version is not None
            else ConditionalDelete(t.key, "attribute_exists(#pk)", {"#pk": layout.PK_ATTR}, {})
            for t in sent
        ]
        landed = self._table.put_all(deletes, "dynamodb.TransactWrite.erase", TRANSACT_LIMIT)
        return [t for t, ok in zip(sent, landed, strict=True) if ok]

    def _anything_left(self, user_id: str) -> bool:
        """Is anything of the user's stored that an erasure would delete? Usually the first
        Query page answers; without items, one small listing per bucket (all of it only where
        held documents' versions must be told apart).
        """
        partition = Partition.of([item for page in self._table.partition_pages(user_id) for item in page])
        if partition.deletions():
            return True
        kept_prefixes = partition.kept_prefixes()
        s = self._settings
        page_size = DELETE_BATCH if kept_prefixes else 1
        for bucket, prefix in zip(
            (s.store.raw_bucket, s.store.processed_bucket), layout.user_prefixes(user_id), strict=True
        ):
            for page in self._buckets.version_pages(bucket, prefix, page_size=page_size):
                if any(kept_by(v, kept_prefixes) is None for v in page):
                    return True
                if not kept_prefixes:
                    break
        return False

    # --- the records -----------------------------------------------------------------------
    def _mark(self, marker: ErasureMarker, expected_version: int | None) -> ErasureMarker:
        if not self._table.put_all([erasure_put(marker, expected_version)], "dynamodb.TransactWrite.erasure")[0]:
            raise ErasureNotSettledError(
                f"another erasure of user {marker.userId} is writing its marker: let it finish, then run again"
            )
        return marker

    def _finish(self, progress: Progress, last: PassOutcome, passes: int) -> ErasureResult:
        assert progress.marker is not None
        marker, counts = progress.marker, progress.counts()
        finished = self._clock()
        receipt = ErasureReceipt(
            userId=marker.userId,
            runId=marker.runId,
            startedAt=marker.startedAt,
            finishedAt=finished,
            erased=[
                f"items of {layout.user_pk(marker.userId)} in {self._table.table_name}",
                *(
                    f"s3://{b}/{p}"
                    for b, p in zip(self._buckets_of(), layout.user_prefixes(marker.userId), strict=True)
                ),
            ],
            deleted=counts,
            kept=kept_documents(last.partition, last.kept_versions, last.held_versions),
            passes=passes,
            requests={name: int(v["calls"]) for name, v in self._metrics.summary().items()},
            stillHolding=holdings(self._settings.store.holdings, finished),
        )
        key = layout.erasure_receipt_key(marker.userId, marker.runId)
        try:
            self._buckets.put_once(
                self._settings.store.reports_bucket, key, receipt.to_json_bytes(), "application/json"
            )
        except S3ObjectExistsError:
            logger.info("receipt already written by the run this one resumed", extra={"key": key})
        queue_days = queue_spec(self._settings.stage).retention_seconds / 86400
        self._mark(
            marker.model_copy(
                update={
                    "state": ErasureState.DONE,
                    "counts": counts,
                    "pending": None,
                    "finishedAt": finished,
                    "expiresAt": finished + timedelta(days=queue_days + 1),
                    "version": marker.version + 1,
                }
            ),
            marker.version,
        )
        uri = layout.s3_uri(self._settings.store.reports_bucket, key)
        return ErasureResult("erased", f"erased user {marker.userId}: {counts}; receipt {uri}", receipt, uri)

    def _buckets_of(self) -> tuple[str, str]:
        return self._settings.store.raw_bucket, self._settings.store.processed_bucket


def _nothing(user_id: str, marker: ErasureMarker | None) -> ErasureResult:
    if marker is None:
        raise ErasureUnknownUserError(
            f"nothing is stored for user {user_id}: an unknown user (or one erased long enough ago that "
            "the erasure's marker expired; its receipt is under erasure/)"
        )
    return ErasureResult(
        "nothing",
        f"nothing left to erase for user {user_id}: erased by run {marker.runId} "
        f"on {layout.format_ts(marker.finishedAt or marker.startedAt)}",
    )
