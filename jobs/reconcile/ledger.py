"""The life of findings across nights: a stable id per finding, when it was first seen, how many
nights it has been open, whether a person acknowledged it, and what resolved it.

A finding's id is a hash of its code and identity (user, document, bucket, key, table keys), not
of its evidence: the same problem keeps its id while its evidence moves (a new ETag, a later
attempt). Each report writes its ledger (`ledger.parquet`, beside the findings): tonight's findings
with their life, plus the ones resolved since the night before. The next report reads only that
file of the previous report (never a scan of older ones), so a life is carried night to night.

An acknowledgement is a person's write-once record (`python -m jobs reconcile acknowledge`) under
`reconciliation/acknowledgements/<findingId>.json`: the reports list the finding as acknowledged,
with who and why, for as long as it is found. Pure except `Acknowledgements`, which reads and
writes through `jobs.store.s3.Buckets`.
"""

from __future__ import annotations

import hashlib
import io
import logging
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

import polars as pl
from pydantic import BaseModel, ConfigDict

from jobs.contract import layout
from jobs.errors import S3ObjectMissingError
from jobs.reconcile.findings import FINDINGS_SCHEMA
from jobs.reconcile.frames import empty

if TYPE_CHECKING:
    from jobs.reconcile.summary import RepairAction
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

LEDGER_FILE = "ledger.parquet"
ACKNOWLEDGEMENTS_PREFIX = f"{layout.RECONCILIATION_PREFIX}acknowledgements/"
IDENTITY = ("code", "userId", "documentId", "bucket", "key", "pk", "sk")
ID_LENGTH = 20  # hex digits of sha256: 80 bits, no collision among a night's findings in practice


class State(StrEnum):
    NEW = "new"
    OPEN = "open"  # found the night before too
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"  # found the night before, not tonight


# A finding's identity columns are the findings' own; the evidence stays in findings.parquet.
LEDGER_SCHEMA: dict[str, pl.DataType] = {
    "findingId": pl.String(),
    "state": pl.String(),
    **{name: dtype for name, dtype in FINDINGS_SCHEMA.items() if name != "evidence"},
    "firstSeen": pl.Datetime("ms", "UTC"),
    "nightsOpen": pl.Int32(),
    "acknowledgedBy": pl.String(),
    "acknowledgedReason": pl.String(),
    "resolution": pl.String(),
}
_CARRIED = ("findingId", "firstSeen", "nightsOpen")


class Acknowledgement(BaseModel):
    """A person accepted a finding: written once, never replaced."""

    model_config = ConfigDict(frozen=True)

    findingId: str
    code: str
    userId: str | None
    documentId: str | None
    by: str
    reason: str
    at: datetime


def finding_id(code: str, *identity: str | None) -> str:
    joined = "\x1f".join([code, *("" if part is None else part for part in identity)])
    return hashlib.sha256(joined.encode()).hexdigest()[:ID_LENGTH]


def with_ids(findings: pl.DataFrame) -> pl.DataFrame:
    """The findings with their `findingId` (sha256 per row: stable across polars versions, unlike
    polars' own hash; 100k rows in ~0.1 s).
    """
    ids = [finding_id(*row) for row in findings.select(IDENTITY).iter_rows()]
    return findings.with_columns(pl.Series("findingId", ids, pl.String))


def carry(
    identified: pl.DataFrame,
    previous: pl.DataFrame | None,
    acks: dict[str, Acknowledgement],
    now: datetime,
    previous_repairs: list[RepairAction],
) -> pl.DataFrame:
    """Tonight's ledger from tonight's findings (`with_ids`): each finding's life carried from the
    previous ledger, acknowledgements applied, and the previous night's findings not found
    tonight as resolved (with the repair that acted on them the night before, if one did).
    """
    tonight = identified.unique("findingId", keep="first", maintain_order=True)
    before = empty(LEDGER_SCHEMA) if previous is None else previous.filter(pl.col("state") != State.RESOLVED.value)
    carried = tonight.join(before.select(_CARRIED), on="findingId", how="left")
    ack_ids = list(acks)
    ledger = carried.with_columns(
        pl.col("firstSeen").fill_null(pl.lit(now, pl.Datetime("ms", "UTC"))),
        (pl.col("nightsOpen") + 1).fill_null(1).cast(pl.Int32),
        pl.when(pl.col("findingId").is_in(ack_ids))
        .then(pl.lit(State.ACKNOWLEDGED.value))
        .when(pl.col("nightsOpen").is_not_null())
        .then(pl.lit(State.OPEN.value))
        .otherwise(pl.lit(State.NEW.value))
        .alias("state"),
        pl.col("findingId")
        .replace_strict({k: a.by for k, a in acks.items()}, default=None, return_dtype=pl.String)
        .alias("acknowledgedBy"),
        pl.col("findingId")
        .replace_strict({k: a.reason for k, a in acks.items()}, default=None, return_dtype=pl.String)
        .alias("acknowledgedReason"),
        pl.lit(None, pl.String).alias("resolution"),
    )
    repaired = {
        (r.code, r.userId, r.documentId): f"repaired: {r.action}" + (f" ({r.detail})" if r.detail else "")
        for r in previous_repairs
        if r.outcome == "applied"
    }
    gone = before.filter(~pl.col("findingId").is_in(tonight.get_column("findingId").implode()))
    resolutions = [
        repaired.get((code, user, doc), "no longer found")
        for code, user, doc in gone.select("code", "userId", "documentId").iter_rows()
    ]
    resolved = gone.with_columns(
        pl.lit(State.RESOLVED.value).alias("state"), pl.Series("resolution", resolutions, pl.String)
    )
    return pl.concat([part.select(pl.col(n).cast(t) for n, t in LEDGER_SCHEMA.items()) for part in (ledger, resolved)])


def ledger_parquet(ledger: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    ledger.write_parquet(buffer, compression="zstd", statistics=False)
    return buffer.getvalue()


def read_ledger(buckets: Buckets, bucket: str, prefix: str) -> pl.DataFrame | None:
    """The ledger a report wrote, or None for a report from before ledgers."""
    try:
        return pl.read_parquet(io.BytesIO(buckets.get_bytes(bucket, prefix + LEDGER_FILE)))
    except S3ObjectMissingError:
        return None


class Acknowledgements:
    """The write-once acknowledgements in the reports bucket."""

    def __init__(self, buckets: Buckets, bucket: str) -> None:
        self._buckets = buckets
        self._bucket = bucket

    def all(self) -> dict[str, Acknowledgement]:
        found: dict[str, Acknowledgement] = {}
        for page in self._buckets.list_pages(self._bucket, ACKNOWLEDGEMENTS_PREFIX):
            for obj in page:
                ack = Acknowledgement.model_validate_json(self._buckets.get_bytes(self._bucket, obj.key))
                found[ack.findingId] = ack
        return found

    def record(self, ack: Acknowledgement) -> str:
        """Put it once; S3ObjectExistsError if that finding was acknowledged already."""
        key = f"{ACKNOWLEDGEMENTS_PREFIX}{ack.findingId}.json"
        self._buckets.put_once(self._bucket, key, ack.model_dump_json(indent=2).encode(), "application/json")
        return key
