"""The life of findings across nights: a stable id per finding, when it was first seen, how many
nights it has been open, whether a person acknowledged it, and what resolved it.

A finding's id is a hash of its code and identity (user, document, bucket, key, table keys), not
of its evidence: the same problem keeps its id while its evidence moves (a new ETag, a later
attempt). Each report writes its ledger (`ledger.parquet`, beside the findings): tonight's findings
with their life, the ones resolved since the night before, and the ones tonight did not check.
The next report reads only that file of the previous report (never a scan of older ones), so a
life is carried night to night.

A finding is resolved only by a run that judged it (`coverage.Coverage`: the codes and scope
the run looked at) and did not find it. One the run did not check (a night that judged nothing,
a deep-only code after a nightly run, an inventory code after a live run) is carried unchanged:
same first-seen, same nights open, same acknowledgement, state `unchecked`, until a run that
checks it finds it again (open) or not (resolved).

A finding's life runs from its first night to its resolution: once resolved, a recurrence is a
new life (new first-seen, nights counted from 1). An acknowledgement is a person's write-once
record (`python -m jobs reconcile acknowledge`) of one life of one finding, under
`reconciliation/acknowledgements/<findingId>/<firstSeen>/<at>.json`, with the caller's AWS identity
beside the name they typed and an optional expiry: the reports list the finding as acknowledged
while that life lasts and the expiry has not passed; a recurrence arrives unacknowledged. Pure
except `Acknowledgements`, which reads and writes through `jobs.store.s3.Buckets`.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

import polars as pl
from pydantic import BaseModel, ConfigDict

from jobs.contract import layout
from jobs.errors import S3ObjectMissingError
from jobs.reconcile.rules.findings import FINDINGS_SCHEMA
from jobs.reconcile.rules.frames import empty

if TYPE_CHECKING:
    from jobs.reconcile.chain.coverage import Coverage
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
    RESOLVED = "resolved"  # found the night before, checked and not found tonight
    UNCHECKED = "unchecked"  # open before, not looked for tonight: carried as it was


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
    "acknowledgedCaller": pl.String(),  # the AWS identity (ARN) that recorded it
    "acknowledgedUntil": pl.Datetime("ms", "UTC"),
}
_CARRIED = ("findingId", "firstSeen", "nightsOpen")
_ACK_COLUMNS = ("acknowledgedBy", "acknowledgedReason", "acknowledgedCaller", "acknowledgedUntil")


class CallerIdentity(BaseModel):
    """Who called AWS (STS GetCallerIdentity): the identity behind a typed name."""

    model_config = ConfigDict(frozen=True)

    arn: str
    account: str
    userId: str


class Acknowledgement(BaseModel):
    """A person accepted one life of a finding: written once, never replaced."""

    model_config = ConfigDict(frozen=True)

    findingId: str
    code: str
    userId: str | None
    documentId: str | None
    by: str
    reason: str
    at: datetime
    # The life accepted: the finding's first-seen time then (None: a record from before lives,
    # which applies to the life that was open when it was made: first seen before `at`).
    firstSeen: datetime | None = None
    expiresAt: datetime | None = None  # no longer applies from this time
    caller: CallerIdentity | None = None

    def applies(self, first_seen: datetime, now: datetime) -> bool:
        """Whether it covers the life that began at `first_seen`, tonight (`now`)."""
        if self.expiresAt is not None and now >= self.expiresAt:
            return False
        if self.firstSeen is not None:
            return _ms(self.firstSeen) == _ms(first_seen)
        # A record from before lives covers the life open when it was made; one dated after
        # tonight would cover every life begun before that date, so it is none (yet).
        return first_seen <= self.at <= now

    @property
    def key(self) -> str:
        """`<findingId>.json` (a record from before lives), else `<findingId>/<life>/<at>.json`:
        a lapsed acknowledgement of a life may be followed by another, never replaced.
        """
        if self.firstSeen is None:
            return f"{ACKNOWLEDGEMENTS_PREFIX}{self.findingId}.json"
        return f"{ACKNOWLEDGEMENTS_PREFIX}{self.findingId}/{_stamp(self.firstSeen)}/{_stamp(self.at)}.json"


def _stamp(moment: datetime) -> str:
    return f"{_ms(moment):%Y%m%dT%H%M%S.%f}"[:-3] + "Z"


def _ms(moment: datetime) -> datetime:
    """The ledger keeps times to the millisecond: compare lives at that precision."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def conformed(ledger: pl.DataFrame) -> pl.DataFrame:
    """A stored ledger in today's schema (a ledger from before a column has it as null)."""
    missing = [pl.lit(None, dtype).alias(name) for name, dtype in LEDGER_SCHEMA.items() if name not in ledger.columns]
    return ledger.with_columns(missing).select(pl.col(n).cast(t) for n, t in LEDGER_SCHEMA.items())


def finding_id(code: str, *identity: str | None) -> str:
    joined = "\x1f".join([code, *("" if part is None else part for part in identity)])
    return hashlib.sha256(joined.encode()).hexdigest()[:ID_LENGTH]


def with_ids(findings: pl.DataFrame) -> pl.DataFrame:
    """The findings with their `findingId` (sha256 per row: stable across polars versions, unlike
    polars' own hash; 100k rows in ~0.1 s).
    """
    ids = [finding_id(*row) for row in findings.select(IDENTITY).iter_rows()]
    return findings.with_columns(pl.Series("findingId", ids, pl.String))


def _acknowledged(rows: pl.DataFrame, acks: Iterable[Acknowledgement], now: datetime) -> pl.DataFrame:
    """`rows` (findingId, firstSeen) with the acknowledgement columns: each life's, if one
    applies. Only the rows of acknowledged findings are looked at one by one.
    """
    by_finding: dict[str, list[Acknowledgement]] = {}
    for each in sorted(acks, key=lambda a: a.at):
        by_finding.setdefault(each.findingId, []).append(each)
    values: dict[str, list[object]] = {name: [] for name in ("findingId", *_ACK_COLUMNS)}
    candidates = rows.filter(pl.col("findingId").is_in(list(by_finding))).select("findingId", "firstSeen")
    for finding, first_seen in candidates.unique("findingId").iter_rows():
        ack = next((a for a in by_finding[finding] if a.applies(first_seen, now)), None)
        if ack is None:
            continue
        values["findingId"].append(finding)
        values["acknowledgedBy"].append(ack.by)
        values["acknowledgedReason"].append(ack.reason)
        values["acknowledgedCaller"].append(None if ack.caller is None else ack.caller.arn)
        values["acknowledgedUntil"].append(ack.expiresAt)
    schema = {"findingId": pl.String(), **{name: LEDGER_SCHEMA[name] for name in _ACK_COLUMNS}}
    found = pl.DataFrame(values, schema=schema)
    return rows.join(found, on="findingId", how="left", maintain_order="left")


def _gone(
    before: pl.DataFrame, tonight: pl.DataFrame, judged: pl.Expr, previous_repairs: list[RepairAction]
) -> pl.DataFrame:
    """The previous ledger's findings not found tonight: resolved where tonight judged them (with
    the repair that acted on them the night before, if one did), else carried unchanged.
    """
    repaired = {
        (r.code, r.userId, r.documentId): f"repaired: {r.action}" + (f" ({r.detail})" if r.detail else "")
        for r in previous_repairs
        if r.outcome == "applied"
    }
    gone = before.filter(~pl.col("findingId").is_in(tonight.get_column("findingId").implode()))
    checked, unchecked = gone.filter(judged), gone.filter(~judged)
    resolutions = [
        repaired.get((code, user, doc), "no longer found")
        for code, user, doc in checked.select("code", "userId", "documentId").iter_rows()
    ]
    resolved = checked.with_columns(
        pl.lit(State.RESOLVED.value).alias("state"), pl.Series("resolution", resolutions, pl.String)
    )
    return pl.concat([resolved, unchecked.with_columns(pl.lit(State.UNCHECKED.value).alias("state"))])


def carry(
    identified: pl.DataFrame,
    previous: pl.DataFrame | None,
    acks: Iterable[Acknowledgement],
    now: datetime,
    previous_repairs: list[RepairAction],
    judged: Coverage | None = None,
    previous_table: str | None = None,
) -> pl.DataFrame:
    """Tonight's ledger from tonight's findings (`with_ids`): each finding's life carried from the
    previous ledger, the acknowledgements of each life applied, and the previous night's findings
    not found tonight resolved where tonight judged them (`judged`: None, everything), carried
    unchanged (state `unchecked`) where it did not.
    """
    tonight = identified.unique("findingId", keep="first", maintain_order=True)
    before = empty(LEDGER_SCHEMA) if previous is None else conformed(previous)
    before = before.filter(pl.col("state") != State.RESOLVED.value)
    carried = tonight.join(before.select(_CARRIED), on="findingId", how="left")
    alive = carried.with_columns(
        pl.col("firstSeen").fill_null(pl.lit(now, pl.Datetime("ms", "UTC"))),
        (pl.col("nightsOpen") + 1).fill_null(1).cast(pl.Int32),
        pl.when(pl.col("nightsOpen").is_not_null())
        .then(pl.lit(State.OPEN.value))
        .otherwise(pl.lit(State.NEW.value))
        .alias("state"),
        pl.lit(None, pl.String).alias("resolution"),
    )
    alive = _acknowledged(alive, acks, now)
    alive = alive.with_columns(
        pl.when(pl.col("acknowledgedBy").is_not_null())
        .then(pl.lit(State.ACKNOWLEDGED.value))
        .otherwise(pl.col("state"))
        .alias("state")
    )
    expr = pl.lit(True) if judged is None else judged.judged(previous_table)
    gone = _gone(before, tonight, expr, previous_repairs)
    return pl.concat([part.select(pl.col(n).cast(t) for n, t in LEDGER_SCHEMA.items()) for part in (alive, gone)])


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

    def records(self) -> list[Acknowledgement]:
        """Every acknowledgement recorded, of every life (in key order)."""
        return [
            Acknowledgement.model_validate_json(self._buckets.get_bytes(self._bucket, obj.key))
            for page in self._buckets.list_pages(self._bucket, ACKNOWLEDGEMENTS_PREFIX)
            for obj in page
        ]

    def record(self, ack: Acknowledgement) -> str:
        """Put it once; S3ObjectExistsError if that life of the finding was acknowledged already."""
        self._buckets.put_once(self._bucket, ack.key, ack.model_dump_json(indent=2).encode(), "application/json")
        return ack.key
