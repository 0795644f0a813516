"""A GDPR erasure's records: the marker in the user's partition, the receipt, and the stack's
figures for what an erasure cannot reach.

The marker (`layout.erasure_key`) says an erasure of the user runs (RUNNING) or ran (DONE). It
lets a crashed run be resumed under its own id and counts, and it tells the ingest that a raw
object missing under a new claim was erased, not lost: the ingest then removes its claim
instead of writing a tombstone that would keep the user's id and filename. It holds nothing but
the user id and counts, and expires (TTL) once no message naming an erased upload can still be
in the arrival queue.

The receipt is written once into the reports bucket (`layout.erasure_receipt_key`): what was
deleted, what was kept under a legal hold (the item's, or one S3 alone records on versions), and
what still holds the user's data and until when (`DataHoldings`, the stack's own figures, carried
to the job in DOCUFLOW_HOLDINGS).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from jobs.contract import layout
from jobs.contract.actors import check_actor

RECEIPT_FORMAT = "docuflow-erasure-receipt/1"


class ErasureState(StrEnum):
    RUNNING = "RUNNING"
    DONE = "DONE"


class ErasureCounts(BaseModel):
    """What an erasure deleted for good (summed over its passes, and over a resumed run)."""

    model_config = ConfigDict(extra="forbid")

    items: int = 0
    documents: int = 0  # of the items, the documents' summary items
    versions: int = 0
    deleteMarkers: int = 0

    def plus(self, other: ErasureCounts) -> ErasureCounts:
        return ErasureCounts(**{k: getattr(self, k) + getattr(other, k) for k in ErasureCounts.model_fields})

    @property
    def empty(self) -> bool:
        return not any(getattr(self, k) for k in ErasureCounts.model_fields)


class ErasurePending(BaseModel):
    """The batch a run is about to delete, written into the marker before its request goes out:
    fingerprints of each version, delete marker, item and document item in it (jobs.erasure). A
    run killed before it could count the batch leaves it here; the run that resumes counts those
    no longer stored, so a batch is counted once whatever the kill hit.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    versions: list[str] = Field(default_factory=list)
    deleteMarkers: list[str] = Field(default_factory=list)
    items: list[str] = Field(default_factory=list)  # items that are not documents' summaries
    documents: list[str] = Field(default_factory=list)  # documents' summary items


class ErasureMarker(BaseModel):
    model_config = ConfigDict(extra="forbid")

    userId: str
    runId: str
    state: ErasureState
    startedAt: AwareDatetime
    finishedAt: AwareDatetime | None = None
    expiresAt: AwareDatetime | None = None  # set when DONE: the marker's own TTL
    counts: ErasureCounts = Field(default_factory=ErasureCounts)
    pending: ErasurePending | None = None  # the batch in flight, not in `counts` yet
    updatedBy: str
    version: int = 1

    def to_item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            **layout.erasure_key(self.userId),
            "entityType": layout.ENTITY_ERASURE,
            "userId": layout.validate_id(self.userId, "userId"),
            "runId": self.runId,
            "state": self.state.value,
            "startedAt": layout.format_ts(self.startedAt),
            "counts": self.counts.model_dump(),
            "updatedBy": check_actor(self.updatedBy),
            "version": self.version,
        }
        if self.finishedAt is not None:
            item["finishedAt"] = layout.format_ts(self.finishedAt)
        if self.expiresAt is not None:
            item[layout.TTL_ATTR] = layout.epoch_seconds(self.expiresAt)
        if self.pending is not None:
            item["pending"] = self.pending.model_dump()
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> ErasureMarker:
        ttl = item.get(layout.TTL_ATTR)
        return cls(
            userId=item["userId"],
            runId=item["runId"],
            state=item["state"],
            startedAt=layout.parse_ts(item["startedAt"]),
            finishedAt=layout.parse_ts(item["finishedAt"]) if item.get("finishedAt") else None,
            expiresAt=layout.from_epoch_seconds(ttl) if ttl is not None else None,
            counts=ErasureCounts(**{k: int(v) for k, v in item.get("counts", {}).items()}),
            pending=ErasurePending(**item["pending"]) if item.get("pending") else None,
            updatedBy=item["updatedBy"],
            version=int(item["version"]),
        )


class DataHoldings(BaseModel):
    """The stack's figures for the copies an erasure cannot reach (each expires on its own)."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    point_in_time_recovery_days: int = Field(default=35, ge=1, le=35)
    backup_retention_days: int = Field(default=365, ge=1)  # the longest AWS Backup recovery point
    replica_region: str | None = None  # the second region's replicas (S3, the table)
    audit_data_retention_days: int = Field(default=14, ge=1)
    access_log_retention_days: int = Field(default=365, ge=1)
    log_retention_days: int = Field(default=365, ge=1)
    queue_retention_days: int = Field(default=14, ge=1)
    report_lock_days: int = Field(default=365, ge=1)
    audit_trail_days: int = Field(default=730, ge=1)  # the change log and the access trail (Object Lock)

    def to_env(self) -> str:
        return self.model_dump_json(by_alias=True)

    @classmethod
    def from_env(cls, text: str) -> DataHoldings:
        return cls.model_validate_json(text)


# DynamoDB Streams keeps a change record 24 hours (fixed by AWS).
STREAM_RETENTION = timedelta(hours=24)


class Holding(BaseModel):
    """One place that may still hold the user's data after the erasure, and until when."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    what: str
    until: AwareDatetime | None  # None: kept until removed on purpose (stated in `why`)
    why: str


# A copy the erasure cannot reach: what, how long after the erasure it may still hold the
# user's data (None: kept on purpose), and why.
Copy = tuple[str, timedelta | None, str]


def _backups_and_queues(f: DataHoldings) -> list[Copy]:
    return [
        (
            "the table's point-in-time backups (items as they were before the erasure)",
            timedelta(days=f.point_in_time_recovery_days),
            "DynamoDB continuous backups keep every state of the recovery window",
        ),
        (
            "AWS Backup recovery points of the table (and their copies in the second region)",
            timedelta(days=f.backup_retention_days),
            "daily and monthly backups in a locked vault, kept their retention",
        ),
        (
            "the table's stream and the status-event queue (change records with the items)",
            STREAM_RETENTION + timedelta(days=f.queue_retention_days),
            "stream records live 24 hours; the status-event queue keeps undelivered ones its retention",
        ),
        (
            "table exports, S3 inventories and table states kept in the audit-data bucket",
            timedelta(days=f.audit_data_retention_days),
            "regenerated daily; every object there expires after the audit-data retention",
        ),
        (
            "the arrival queue (object keys of the user's uploads)",
            timedelta(days=f.queue_retention_days),
            "messages expire after the queue's retention",
        ),
    ]


def _logs_and_records(f: DataHoldings) -> list[Copy]:
    return [
        (
            "S3 server access logs and the jobs' logs (object keys, user and document ids)",
            timedelta(days=max(f.access_log_retention_days, f.log_retention_days)),
            "access logs and CloudWatch log groups expire after their retention",
        ),
        (
            "the audit trail: the change log (every version of the user's items) and the access trail",
            timedelta(days=f.audit_trail_days),
            "audit records kept under a legal obligation: write-once, under Object Lock, then expired",
        ),
        (
            "reconciliation reports and run summaries naming the user's documents",
            None,
            f"audit records kept under a legal obligation: write-once, locked {f.report_lock_days} days",
        ),
        (
            "this receipt and the erasure marker (the user id and counts only)",
            None,
            "proof of the erasure; the marker expires after the arrival queue's retention",
        ),
    ]


def holdings(figures: DataHoldings, erased_at: datetime) -> list[Holding]:
    """What still holds the user's data once the erasure is done, from the stack's figures."""
    f = figures
    copies = _backups_and_queues(f) + _logs_and_records(f)
    if f.replica_region:
        # The table's replica follows (a global table replicates deletes); S3 replication never
        # replicates the deletion of a version, and this job does not reach the replica buckets.
        copies.append(
            (
                f"the raw and processed replicas in {f.replica_region} (every version)",
                None,
                "S3 replication does not replicate version deletions: erase them there too, by hand",
            )
        )
    return [Holding(what=w, until=None if d is None else erased_at + d, why=y) for w, d, y in copies]


class KeptDocument(BaseModel):
    """A document the erasure left, and why: a legal hold on its item, or on its versions only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    documentId: str
    # None: S3 holds its versions but the item records no hold (a hold that did not finish, or
    # one placed in S3 directly); S3 refused their deletion, so they and the item stay.
    legalHoldAt: AwareDatetime | None = None
    legalHoldBy: str | None = None
    versions: int
    itemKept: bool = True  # False: versions alone, no item was left to keep


class ErasureReceipt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = RECEIPT_FORMAT
    userId: str
    runId: str
    startedAt: AwareDatetime
    finishedAt: AwareDatetime
    # Every item of the user's partition and every version and delete marker under their raw/
    # and processed prefixes, deleted for good, except the documents kept under a legal hold.
    erased: list[str]
    deleted: ErasureCounts
    kept: list[KeptDocument]
    passes: int
    requests: dict[str, int]
    stillHolding: list[Holding]

    def to_json_bytes(self) -> bytes:
        return self.model_dump_json(indent=2).encode()
