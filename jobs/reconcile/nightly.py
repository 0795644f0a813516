"""The nightly reconcile's chain as the schedule runs it (`python -m jobs reconcile nightly`): the
newest kept table state, the latest time DynamoDB can export, tonight's exports started and
awaited, and the table they give, with the new state to keep.

What to export is decided by `chain.plan_night` (bring the state forward, catch up missed nights,
or re-anchor with a full export); this module does the I/O around it, the same for both engines.
For the polars engine the state is Parquet under `layout.table_state_root("polars")` of the
state bucket: the newest `table-state.json` there is the newest committed state (a run writes it
last, after its report, so a failed run leaves the previous one newest). The Athena engine keeps
its state in an Iceberg table (`engines.athena`) and takes its decisions from here too. The
inventories are the newest S3 Inventory reports of the two buckets, when `freshness` finds them
fit to judge.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from jobs.contract import layout
from jobs.errors import ReconcileInputError
from jobs.reconcile.chain.exports import ChainPolicy, KeptState, NightPlan, plan_night
from jobs.reconcile.inputs.inventory import InventoryManifest, inventory_manifest
from jobs.reconcile.inputs.table_state import (
    TABLE_STATE,
    StateWriter,
    TableSource,
    export_source,
    read_state,
    state_source,
)

if TYPE_CHECKING:
    from jobs.settings import JobSettings
    from jobs.store.s3 import Buckets
    from jobs.store.table_export import TableExports

logger = logging.getLogger(__name__)

POLARS_STATES = "polars"


def chain_policy(settings: JobSettings) -> ChainPolicy:
    return ChainPolicy(
        reanchor_after=timedelta(days=settings.reconcile.reconcile_reanchor_days),
        catch_up_limit=timedelta(days=settings.reconcile.reconcile_catch_up_days),
    )


def files_kept_for(settings: JobSettings) -> timedelta:
    """How long after it was written a state's data file may be kept by a later state: while a
    state can be brought forward (the catch-up limit), every file it lists must outlive it by a
    day within the states' expiry (table_state.py; none kept when the two leave no room).
    """
    return max(
        timedelta(0),
        timedelta(days=settings.reconcile.table_state_days - settings.reconcile.reconcile_catch_up_days - 1),
    )


def newest_state(buckets: Buckets, bucket: str, engine: str, expiry: timedelta | None = None) -> KeptState | None:
    """The newest committed table state of `engine`'s chain (the greatest key: keys sort in time
    order), or None when none is kept. A state whose table-state.json cannot be read is a broken
    chain: the night re-anchors rather than fail every night on it; so is one that lists a data
    file within a day of the states' `expiry` (kept under settings since shortened).
    """
    keys = [
        obj.key
        for page in buckets.list_pages(bucket, layout.table_state_root(engine))
        for obj in page
        if obj.key.endswith("/" + TABLE_STATE)
    ]
    if not keys:
        return None
    where = layout.s3_uri(bucket, max(keys).removesuffix("/" + TABLE_STATE))
    try:
        manifest, _ = read_state(where, buckets)
    except ReconcileInputError as exc:
        logger.warning("newest table state unreadable: re-anchoring", extra={"state": where, "reason": str(exc)})
        return None
    oldest = min((f.writtenAt for f in manifest.files), default=None)
    if expiry is not None and oldest is not None and layout.utc_now() - oldest >= expiry - timedelta(days=1):
        logger.warning(
            "newest table state lists a data file about to expire: re-anchoring",
            extra={"state": where, "oldestFile": oldest.isoformat()},
        )
        return None
    return KeptState(where, manifest.asOf, manifest.anchoredAt, manifest.tableArn)


def plan_tonight(exports: TableExports, settings: JobSettings, state: KeptState | None) -> NightPlan:
    """Tonight's plan, from the latest time DynamoDB can export (read, never assumed)."""
    if not settings.store.table_arn:
        raise ReconcileInputError("--nightly exports the table: DOCUFLOW_TABLE_ARN is not set")
    plan = plan_night(
        state, exports.latest_restorable(settings.store.table_arn), settings.store.table_arn, chain_policy(settings)
    )
    logger.info(
        "nightly chain planned",
        extra={
            "reason": plan.reason,
            "state": state.where if state else None,
            "anchorAt": plan.anchor_at.isoformat() if plan.anchor_at else None,
            "windows": [[a.isoformat(), b.isoformat()] for a, b in plan.windows],
        },
    )
    return plan


@dataclass(frozen=True)
class NightExports:
    anchor: str | None  # the full export's location (s3://…/AWSDynamoDB/<id>/), when re-anchoring
    changes: tuple[str, ...]  # the incremental exports' locations, in order


def night_exports(exports: TableExports, settings: JobSettings, plan: NightPlan) -> NightExports:
    """Start tonight's exports (all at once: DynamoDB runs them side by side), then await each."""
    s = settings
    if plan.anchor_at is not None:
        arn = exports.start(s.store.table_arn, plan.anchor_at, s.reconcile.export_bucket, s.reconcile.export_prefix)
        return NightExports(exports.wait(arn).directory, ())
    arns = [
        exports.start_incremental(s.store.table_arn, a, b, s.reconcile.export_bucket, s.reconcile.export_prefix)
        for a, b in plan.windows
    ]
    return NightExports(None, tuple(exports.wait(arn).directory for arn in arns))


@dataclass(frozen=True)
class PolarsNight:
    """Tonight's inputs for the polars engine, and the state to keep (None: nothing new)."""

    plan: NightPlan
    exports: NightExports
    table: TableSource
    raw_inventory: InventoryManifest
    processed_inventory: InventoryManifest
    keep: StateWriter | None

    def stats(self) -> dict[str, object]:
        return {
            "reason": self.plan.reason,
            "state": self.plan.state.where if self.plan.state else None,
            "anchor": self.exports.anchor,
            "changes": list(self.exports.changes),
            "tableAsOf": self.plan.end.isoformat(),
            "tableState": self.keep.base.text if self.keep else None,
        }


def polars_night(
    settings: JobSettings, buckets: Buckets, exports: TableExports, manifests: tuple[str, str]
) -> PolarsNight:
    """The newest Parquet state brought forward (or a full export), tonight's inventories (the raw
    and the processed bucket's `manifests`, found fresh by `freshness`), and a writer of tonight's
    state at its time (write-once; committed by the run after its report).
    """
    s = settings
    state = newest_state(buckets, s.reconcile.state_bucket, POLARS_STATES, timedelta(days=s.reconcile.table_state_days))
    plan = plan_tonight(exports, s, state)
    got = night_exports(exports, s, plan)
    if got.anchor is not None:
        table = export_source(got.anchor, buckets, deep=True)  # a state keeps every column
    else:
        assert plan.state is not None
        table = state_source(plan.state.where, got.changes, buckets)
    raw, processed = (inventory_manifest(manifest, buckets) for manifest in manifests)
    keep = None
    if plan.moves:
        location = layout.s3_uri(s.reconcile.state_bucket, layout.table_state_prefix(POLARS_STATES, plan.end))
        keep = StateWriter(location, buckets, files_kept_for(s))
    return PolarsNight(plan, got, table, raw, processed, keep)
