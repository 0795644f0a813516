"""A reconcile run's mode as a type: one frozen plan per mode, validated once, when it is built.

- `LivePlan`: the table scanned and both buckets listed now, judged in memory by polars, with the
  lifecycle's version rules (`reconcile live`);
- `FilesPlan`: a full table export (or a kept table state brought forward by an incremental
  export) against S3 Inventory reports, on polars or duckdb; only polars reads or writes table
  states (`reconcile files`);
- `NightlyPlan`: the schedule's chain on polars: the newest kept state brought forward by
  tonight's exports, the newest inventories, tonight's state kept (`reconcile nightly`);
- `AthenaPlan`: the rules' Trino SQL in an Athena workgroup, over a table export or, nightly,
  the kept Iceberg table (`reconcile athena [--nightly]`).

An option a mode does not read is no field of its plan and is refused (`extra="forbid"`): Athena
has no `deep` and no `audit`, only a files plan names an engine, only a live plan has Scan
segments; the window of the change-log check exists only inside that check (`AuditCheck`).

A plan does not change the run: `setup(run)` returns what the run needs (`Setup`: the engine
built with its inputs, the checks made beside it, the table state to commit after the report,
the figures the report records, or why nothing was judged). `record` is the plan as its report
records it (summary.json's `options`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, Protocol

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, model_validator

from jobs.contract.retention import RetentionPolicy
from jobs.reconcile.engines.polars import FileInputs, PolarsEngine
from jobs.reconcile.rules.findings import EngineFindings, Severity

if TYPE_CHECKING:
    from jobs.reconcile.chain.freshness import Tonight
    from jobs.reconcile.engines import Engine, ParamsFor, StopCheck
    from jobs.reconcile.inputs.inventory import InventoryManifest
    from jobs.reconcile.inputs.table_state import StateWriter, TableSource
    from jobs.reconcile.rules.frames import Snapshot
    from jobs.reconcile.rules.params import RuleParams
    from jobs.settings import JobSettings
    from jobs.store.athena import AthenaQueries
    from jobs.store.s3 import Buckets
    from jobs.store.table_export import TableExports

MAX_SEGMENTS = 64
# For items written before their retention was recorded on them (no retainUntil).
DEFAULT_RETENTION = timedelta(days=RetentionPolicy().standard_days)
NonNegative = Annotated[timedelta, Field(ge=timedelta(0))]
Positive = Annotated[timedelta, Field(gt=timedelta(0))]
# The items the nightly lifecycle rules judge: held, or with a hard-delete date.
HELD_OR_HARD_DELETED = pl.col("legalHoldAt").is_not_null() | pl.col("hardDeleteAt").is_not_null()
FilesEngine = Literal["polars", "duckdb"]


class ReconcileRun(Protocol):
    """What a plan sets a run up with: the run's clients and the reads the modes share
    (`run.ReconcileRun`; a protocol here, so the plans do not import the run that runs them).
    """

    settings: JobSettings
    run_id: str

    @property
    def started(self) -> datetime: ...
    @property
    def report_prefix(self) -> str: ...
    @property
    def buckets(self) -> Buckets: ...
    @property
    def table_exports(self) -> TableExports: ...
    @property
    def athena_queries(self) -> AthenaQueries: ...
    def snapshot(self, deep: bool) -> Snapshot: ...
    def read_results(self, keys: list[str]) -> pl.DataFrame: ...
    def lifecycle_findings(self, snapshot: Snapshot, params: RuleParams) -> pl.DataFrame: ...
    def nightly_lifecycle(self, held: list[pl.DataFrame], as_of: datetime) -> pl.DataFrame: ...
    def audit_log(self, items: pl.DataFrame, as_of: datetime, check: AuditCheck) -> pl.DataFrame: ...
    def items_of(self, table: TableSource) -> pl.DataFrame: ...
    def file_buckets(self, locations: tuple[str, ...]) -> Buckets | None: ...
    def state_writer(self, location: str, buckets: Buckets | None) -> StateWriter: ...
    def table_source(
        self, export: str | None, state: str | None, buckets: Buckets | None, deep: bool
    ) -> TableSource: ...
    def inventories(
        self, manifests: tuple[str, ...], buckets: Buckets | None
    ) -> tuple[InventoryManifest, InventoryManifest]: ...
    def inventories_tonight(self) -> Tonight: ...


@dataclass(frozen=True)
class Check:
    """A check made beside the engine: its name in the run's timings, and its rendered findings
    as of the inputs' time.
    """

    name: str
    find: Callable[[datetime], pl.DataFrame]


@dataclass(frozen=True)
class Setup:
    """What a plan gives the run."""

    engine: Engine
    checks: tuple[Check, ...] = ()
    keep: StateWriter | None = None  # the table state to commit after the report
    stats: dict[str, object] = field(default_factory=dict)  # beside the engine's, in engineStats
    not_judged: str | None = None  # why the night judged nothing (the report says so)


class _Frozen(BaseModel):
    # Durations are recorded in seconds, as reports always recorded them.
    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_timedelta="float")


class AuditCheck(_Frozen):
    """--audit-log: the change log holds every version of every item read (docs/audit.md)."""

    window: Positive | None = None  # only versions written since (None: the whole log)


class _Plan(_Frozen):
    """What every mode shares: how findings are judged, and what the run writes."""

    mode: ClassVar[str]  # the subcommand (`reconcile live|files|nightly|athena`)
    source: ClassVar[str]  # summary.json's `source`
    repair: bool = False
    grace: NonNegative = timedelta(minutes=15)
    stuck_after: NonNegative = timedelta(hours=6)
    retention: NonNegative = DEFAULT_RETENTION
    fail_on: Severity = Severity.ERROR
    write_report: bool = True

    @property
    def engine_name(self) -> str:
        return "polars"

    @property
    def reads_results(self) -> bool:
        """--deep: result.json contents are read and compared."""
        return False

    def record(self) -> dict[str, object]:
        """The plan as its report records it (summary.json's `options`): its mode and its own
        fields, durations in seconds. `coverage.Recorded` reads it back (and the flat record of
        the reports written before plans were recorded).
        """
        return {"mode": self.mode, **self.model_dump(mode="json")}


class LivePlan(_Plan):
    mode: ClassVar[str] = "live"
    source: ClassVar[str] = "live"
    deep: bool = False
    segments: int | None = Field(default=None, ge=1, le=MAX_SEGMENTS)  # one Scan thread each
    audit: AuditCheck | None = None

    @property
    def reads_results(self) -> bool:
        return self.deep

    def setup(self, run: ReconcileRun) -> Setup:
        # Taken once, when the engine asks; the change-log check reads the same items again.
        snapshot = functools.cache(lambda: run.snapshot(self.deep))
        engine = PolarsEngine(snapshot, run.read_results if self.deep else None, run.lifecycle_findings)
        checks: tuple[Check, ...] = ()
        if self.audit is not None:
            audit = self.audit
            checks = (Check("auditLog", lambda as_of: run.audit_log(snapshot().items, as_of, audit)),)
        return Setup(engine, checks)


class FilesPlan(_Plan):
    mode: ClassVar[str] = "files"
    source: ClassVar[str] = "files"
    engine: FilesEngine = "polars"
    dynamodb_export: str | None = None  # a full export; with table_state, an incremental one
    s3_inventories: tuple[str, ...] = ()
    table_state: str | None = None  # the table as an earlier run kept it (table_state module)
    write_table_state: str | None = None  # keep the table this run reads there, for the next run
    deep: bool = False
    audit: AuditCheck | None = None

    @model_validator(mode="after")
    def _readable(self) -> FilesPlan:
        if not (self.dynamodb_export or self.table_state) or not self.s3_inventories:
            raise ValueError(
                "reconcile files needs --dynamodb-export (or --table-state) and one --s3-inventory per bucket"
            )
        if (self.table_state or self.write_table_state) and self.engine != "polars":
            raise ValueError("--table-state and --write-table-state are read and written by the polars engine")
        if self.table_state and (self.table_state.rstrip("/") == (self.write_table_state or "").rstrip("/")):
            raise ValueError("--write-table-state must be a new location, not the --table-state it reads")
        return self

    @property
    def engine_name(self) -> str:
        return self.engine

    @property
    def reads_results(self) -> bool:
        return self.deep

    @property
    def locations(self) -> tuple[str, ...]:
        return tuple(x or "" for x in (self.dynamodb_export, self.table_state, self.write_table_state)) + (
            self.s3_inventories
        )

    def setup(self, run: ReconcileRun) -> Setup:
        read = run.read_results if self.deep else None
        buckets = run.file_buckets(self.locations)
        keep = run.state_writer(self.write_table_state, buckets) if self.write_table_state else None
        if self.engine == "duckdb":
            from jobs.reconcile.engines.duckdb import DuckdbEngine

            assert self.dynamodb_export is not None  # no table state on duckdb (validated)
            raw, processed = run.inventories(self.s3_inventories, buckets)
            engine: Engine = DuckdbEngine(self.dynamodb_export, raw, processed, buckets, read)
            table = functools.cache(lambda: run.table_source(self.dynamodb_export, None, buckets, deep=False))
        else:
            source = run.table_source(self.dynamodb_export, self.table_state, buckets, deep=self.deep or bool(keep))
            raw, processed = run.inventories(self.s3_inventories, buckets)
            engine = PolarsEngine(FileInputs(source, raw, processed, keep=keep), read)
            table = functools.cache(lambda: source)
        checks: tuple[Check, ...] = ()
        if self.audit is not None:
            audit = self.audit
            checks = (Check("auditLog", lambda as_of: run.audit_log(run.items_of(table()), as_of, audit)),)
        return Setup(engine, checks, keep=keep)


class NightlyPlan(_Plan):
    mode: ClassVar[str] = "nightly"
    source: ClassVar[str] = "files"
    deep: bool = False
    audit: AuditCheck | None = None

    @property
    def reads_results(self) -> bool:
        return self.deep

    def setup(self, run: ReconcileRun) -> Setup:
        """The kept state brought forward by tonight's exports and judged against the newest
        inventories, when they may be judged (`freshness`); the lifecycle's version rules over
        the held and hard-deleted items the engine gathers as it reads the table.
        """
        from jobs.reconcile.inputs.table_state import gathering
        from jobs.reconcile.nightly import polars_night

        tonight = run.inventories_tonight()
        if not tonight.judged:
            return not_judged(run, tonight)
        night = polars_night(run.settings, run.buckets, run.table_exports, tonight.manifests)
        held: list[pl.DataFrame] = []  # filled as the engine reads the table, read by the check after it
        table = gathering(night.table, HELD_OR_HARD_DELETED, held)
        files = FileInputs(table, night.raw_inventory, night.processed_inventory, keep=night.keep)
        engine = PolarsEngine(files, run.read_results if self.deep else None)
        checks = []
        if self.audit is not None:
            audit = self.audit
            checks.append(Check("auditLog", lambda as_of: run.audit_log(run.items_of(night.table), as_of, audit)))
        checks.append(Check("lifecycle", lambda as_of: run.nightly_lifecycle(held, as_of)))
        stats = {"night": night.stats(), **tonight_stats(tonight)}
        return Setup(engine, tuple(checks), keep=night.keep, stats=stats)


class AthenaPlan(_Plan):
    mode: ClassVar[str] = "athena"
    source: ClassVar[str] = "athena"
    nightly: bool = False  # the kept Iceberg table brought forward (engines.athena_state), not an export
    dynamodb_export: str | None = None  # a completed full export (s3://); None: the run starts one
    s3_inventories: tuple[str, ...] = ()  # none: the newest of each bucket

    @model_validator(mode="after")
    def _where_aws_wrote_them(self) -> AthenaPlan:
        if self.nightly and (self.dynamodb_export or self.s3_inventories):
            raise ValueError("reconcile athena --nightly finds its own inputs: no --dynamodb-export or --s3-inventory")
        if any(not x.startswith("s3://") for x in (self.dynamodb_export or "s3://", *self.s3_inventories)):
            raise ValueError("Athena reads the export and inventories where AWS wrote them: give s3:// locations")
        return self

    @property
    def engine_name(self) -> str:
        return "athena"

    def setup(self, run: ReconcileRun) -> Setup:
        from jobs.reconcile.engines.athena import AthenaEngine, AthenaInputs

        manifests, stats = self.s3_inventories, {}
        if self.nightly:
            tonight = run.inventories_tonight()
            if not tonight.judged:
                return not_judged(run, tonight)
            manifests, stats = tonight.manifests, tonight_stats(tonight)
        inputs = AthenaInputs(run.run_id, run.report_prefix, self.dynamodb_export, manifests, self.nightly)
        return Setup(
            AthenaEngine(run.settings, run.buckets, run.athena_queries, run.table_exports, inputs), stats=stats
        )


Plan = LivePlan | FilesPlan | NightlyPlan | AthenaPlan


def tonight_stats(tonight: Tonight) -> dict[str, object]:
    from jobs.reconcile.chain.freshness import STATS_KEY

    return {STATS_KEY: tonight.stats()}


@dataclass(frozen=True)
class NothingJudged:
    """The engine of a night whose inventories cannot be judged: only their findings, read now."""

    wide: pl.DataFrame
    at: datetime

    def find(self, params_for: ParamsFor, stop: StopCheck | None = None) -> EngineFindings:
        sizes = {"table": 0, "raw": 0, "processed": 0}
        return EngineFindings(self.wide, {"inventories": self.at}, {}, sizes)


def not_judged(run: ReconcileRun, tonight: Tonight) -> Setup:
    """A night that judges nothing: its report says why, its findings are the inventories' own."""
    now = run.started
    return Setup(
        NothingJudged(tonight.wide(now), now), stats=tonight_stats(tonight), not_judged=tonight.not_judged(run.settings)
    )
