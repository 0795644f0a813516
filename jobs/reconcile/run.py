"""Orchestration of one reconcile run: inputs → an engine's findings → (repair) → write-once report.

The run builds the engine the options name (`engines`: polars over live reads or files, duckdb
over the same files, athena in a workgroup) with the inputs it reads (`inputs`), asks it for its
findings, and renders them the same way whatever it was (`findings.render`); repairs are
conditional puts (`repair`); the report is written once (`report`), and only summary.json says
which engine ran.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING

import polars as pl

from jobs.contract import layout
from jobs.contract.actors import ActorKind, actor
from jobs.contract.metrics import CODE, SEVERITY, Datum, Job, Metric, RunMetrics, Unit
from jobs.contract.retention import RetentionPolicy
from jobs.errors import ExitCode
from jobs.observability import CallMetrics, run_metrics
from jobs.reconcile import lifecycle
from jobs.reconcile.engines import NAMES, Engine
from jobs.reconcile.engines.polars import FileInputs, PolarsEngine
from jobs.reconcile.findings import SORT_COLUMNS, EngineFindings, Severity, counts, render, worst_severity
from jobs.reconcile.frames import ITEMS_SCHEMA, OBJECTS_SCHEMA, Snapshot, empty
from jobs.reconcile.inputs.inventory import InventoryManifest, inventory_pair
from jobs.reconcile.inputs.live import live_snapshot
from jobs.reconcile.inputs.results import read_results
from jobs.reconcile.inputs.versions import VersionFacts
from jobs.reconcile.params import RuleParams
from jobs.reconcile.repair import Repairer
from jobs.reconcile.report import ReconcileSummary, RepairAction, load_history, report_prefix, write_report
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets

if TYPE_CHECKING:
    from jobs.reconcile.inputs.table_state import StateWriter, TableSource
    from jobs.store.athena import AthenaQueries
    from jobs.store.queue import ArrivalQueue
    from jobs.store.table_export import TableExports

logger = logging.getLogger(__name__)

EXIT_CLEAN = ExitCode.SUCCESS
EXIT_FINDINGS = ExitCode.FINDINGS
MAX_SEGMENTS = 64
# For items written before their retention was recorded on them (no retainUntil).
DEFAULT_RETENTION = timedelta(days=RetentionPolicy().standard_days)
# The items the nightly lifecycle rules judge: held, or with a hard-delete date.
HELD_OR_HARD_DELETED = pl.col("legalHoldAt").is_not_null() | pl.col("hardDeleteAt").is_not_null()


@dataclass(frozen=True)
class ReconcileOptions:
    source: str = "live"  # live | files
    engine: str = "polars"  # polars | duckdb | athena
    dynamodb_export: str | None = None  # a full export; with table_state, an incremental one
    s3_inventories: tuple[str, ...] = ()
    table_state: str | None = None  # the table as an earlier run kept it (table_state module)
    write_table_state: str | None = None  # keep the table this run reads there, for the next run
    deep: bool = False
    repair: bool = False
    grace: timedelta = timedelta(minutes=15)
    stuck_after: timedelta = timedelta(hours=6)
    retention: timedelta = DEFAULT_RETENTION
    fail_on: Severity = Severity.ERROR
    segments: int | None = None  # None: one per I/O thread, 2 to 16
    write_report: bool = True
    nightly: bool = False  # the schedule's run: the kept state brought forward by tonight's exports
    audit_log: bool = False  # also check the change log's completeness (audit_rule)
    audit_window: timedelta | None = None  # only versions written since (None: the whole log)

    def __post_init__(self) -> None:
        if self.engine not in NAMES:
            raise ValueError(f"--engine {self.engine!r}: one of {', '.join(NAMES)}")
        if self.nightly:
            self._check_nightly()
        if self.engine == "duckdb" and self.source != "files":
            raise ValueError(
                "--engine duckdb reads export and inventory files: give --dynamodb-export and --s3-inventory"
            )
        if self.engine == "athena" and self.deep:
            raise ValueError(
                "--engine athena does not read result.json contents: run --deep with the polars or duckdb engine"
            )
        if self.engine == "athena":
            object.__setattr__(self, "source", "athena")
        elif self.source not in ("live", "files"):
            raise ValueError(f"--source {self.source!r}: live or files")
        if (self.table_state or self.write_table_state) and (self.engine != "polars" or self.source != "files"):
            raise ValueError(
                "--table-state and --write-table-state are read and written by the polars engine over files"
            )
        if (
            self.source == "files"
            and not self.nightly
            and (not (self.dynamodb_export or self.table_state) or not self.s3_inventories)
        ):
            raise ValueError(
                "--source files needs --dynamodb-export (or --table-state) and one --s3-inventory per bucket"
            )
        if (
            self.table_state
            and self.write_table_state
            and self.table_state.rstrip("/") == self.write_table_state.rstrip("/")
        ):
            raise ValueError("--write-table-state must be a new location, not the --table-state it reads")
        if self.source == "athena" and any(
            not x.startswith("s3://") for x in (self.dynamodb_export or "s3://", *self.s3_inventories)
        ):
            raise ValueError(
                "--engine athena reads the export and inventories where AWS wrote them: give s3:// locations"
            )
        if self.source == "live" and (self.dynamodb_export or self.s3_inventories):
            raise ValueError("--dynamodb-export/--s3-inventory are read only with --source files")
        for name in ("grace", "stuck_after", "retention"):
            if getattr(self, name) < timedelta(0):
                raise ValueError(f"{name} must not be negative")
        if self.audit_log and self.engine == "athena":
            raise ValueError(
                "--audit-log reads the table as the polars or duckdb engine does: not with --engine athena"
            )
        if self.audit_window is not None and (not self.audit_log or self.audit_window <= timedelta(0)):
            raise ValueError("--audit-window is a positive duration, given with --audit-log")
        if self.segments is not None and not 1 <= self.segments <= MAX_SEGMENTS:
            # One thread per segment: thousands would exhaust the task, not speed the Scan up.
            raise ValueError(f"--segments {self.segments}: give 1 to {MAX_SEGMENTS} (one Scan thread each)")

    def _check_nightly(self) -> None:
        """--nightly finds its own inputs (the kept state, tonight's exports, the newest inventories)."""
        if self.engine == "duckdb":
            raise ValueError("--nightly runs the polars or the athena engine")
        given = ("dynamodb_export", "s3_inventories", "table_state", "write_table_state")
        if any(getattr(self, name) for name in given):
            raise ValueError(
                "--nightly finds its own inputs: no --dynamodb-export, --s3-inventory, --table-state "
                "or --write-table-state"
            )
        object.__setattr__(self, "source", "files")

    def as_json(self) -> dict[str, object]:
        data = asdict(self)
        for name in ("grace", "stuck_after", "retention"):
            data[name] = getattr(self, name).total_seconds()
        data["s3_inventories"] = list(self.s3_inventories)
        data["audit_window"] = self.audit_window.total_seconds() if self.audit_window else None
        data["fail_on"] = self.fail_on.value
        return data


@dataclass
class Judged:
    """What an engine found, with what it read."""

    findings: pl.DataFrame  # rendered (FINDINGS_SCHEMA)
    taken_at: dict[str, datetime]
    inputs: dict[str, str]
    sizes: dict[str, int]  # rows read per input: table, raw, processed
    stats: dict[str, object] = field(default_factory=dict)  # engine figures (bytes scanned, query ids)

    @classmethod
    def of(cls, found: EngineFindings) -> Judged:
        return cls(render(found.wide), found.taken_at, found.inputs, found.sizes, found.stats)

    @property
    def as_of(self) -> datetime:
        return min(self.taken_at.values())


@dataclass
class ReconcileOutcome:
    summary: ReconcileSummary
    findings: pl.DataFrame
    exit_code: int
    timings: dict[str, float] = field(default_factory=dict)


def new_run_id() -> str:
    return f"{layout.utc_now():%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def exit_code(findings: pl.DataFrame, fail_on: Severity) -> int:
    worst = worst_severity(findings)
    return EXIT_FINDINGS if worst is not None and worst.rank >= fail_on.rank else EXIT_CLEAN


def metrics_of(summary: ReconcileSummary) -> RunMetrics:
    """The night's metrics: findings by severity (every severity, zeros too: an alarm on errors
    sees a clean night as 0, not as no data) and by code, the items judged, the duration.
    """
    data = [
        Datum(metric=Metric.HEARTBEAT, value=1),
        Datum(metric=Metric.ITEMS_JUDGED, value=summary.itemCount),
        Datum(
            metric=Metric.DURATION,
            value=(summary.finishedAt - summary.startedAt).total_seconds(),
            unit=Unit.SECONDS,
        ),
    ]
    data += [
        Datum(metric=Metric.FINDINGS, value=summary.severities.get(sev.value, 0), breakdown={SEVERITY: sev.value})
        for sev in Severity
    ]
    data += [Datum(metric=Metric.FINDINGS, value=n, breakdown={CODE: code}) for code, n in summary.counts.items()]
    return RunMetrics(job=Job.RECONCILE, data=tuple(data))


class ReconcileRun:
    def __init__(
        self,
        settings: JobSettings,
        options: ReconcileOptions,
        *,
        metrics: CallMetrics | None = None,
        run_id: str | None = None,
    ) -> None:
        self.settings = settings
        self.options = options
        self.metrics = metrics or CallMetrics()
        self.run_id = run_id or new_run_id()
        # The table state this run keeps (committed after the report), and the night's chain.
        self.keep: StateWriter | None = None
        self.night: dict[str, object] | None = None
        self.live: Snapshot | None = None  # a live run's snapshot (kept for --audit-log)
        self.files_table: TableSource | None = None  # a files run's table (read again for --audit-log)
        self.lifecycle_items: list[pl.DataFrame] = []  # a nightly polars run's HELD_OR_HARD_DELETED items

    # Clients are built on first use: a files run over local paths needs no AWS at all.
    @cached_property
    def buckets(self) -> Buckets:
        return Buckets(s3_client(self.settings), self.metrics)

    @cached_property
    def table(self) -> DocumentTable:
        s = self.settings
        return DocumentTable(dynamodb_client(s), s.table_name, s.index_name, self.metrics)

    @cached_property
    def arrivals(self) -> ArrivalQueue | None:
        if not self.settings.arrivals_queue_url:
            return None
        from jobs.store.clients import sqs_client
        from jobs.store.queue import ArrivalQueue

        return ArrivalQueue(sqs_client(self.settings), self.settings.arrivals_queue_url, self.metrics)

    @cached_property
    def athena_queries(self) -> AthenaQueries:
        from jobs.store.athena import AthenaQueries
        from jobs.store.clients import athena_client

        s = self.settings
        return AthenaQueries(athena_client(s), s.athena_workgroup, s.glue_database, self.metrics)

    @cached_property
    def table_exports(self) -> TableExports:
        """DynamoDB's table exports; on the local stack, its stand-in answers the export calls."""
        from jobs.store.table_export import TableExports

        s = self.settings
        client = dynamodb_client(s)
        if s.table_exports == "standin":
            from jobs.local.standins.exports import attach

            attach(client, s.export_bucket, s.export_prefix)
        return TableExports(client, self.metrics)

    @property
    def scan_segments(self) -> int:
        """Parallel Scan segments of a live run: one per I/O thread, 2 to 16."""
        return self.options.segments or max(2, min(16, self.settings.io_threads))

    def snapshot(self) -> Snapshot:
        """The live table and listings, in memory (files runs stream instead: `engines.partitions`)."""
        s, o = self.settings, self.options
        return live_snapshot(self.table, self.buckets, s.raw_bucket, s.processed_bucket, self.scan_segments, o.deep)

    def params(self, as_of: datetime) -> RuleParams:
        s, o = self.settings, self.options
        return RuleParams(
            raw_bucket=s.raw_bucket,
            processed_bucket=s.processed_bucket,
            as_of=as_of,
            grace=o.grace,
            stuck_after=o.stuck_after,
            retention=o.retention,
            deep=o.deep,
            retention_days=(s.retention.standard_days, s.retention.compliance_days),
        )

    def read_results(self, keys: list[str]) -> pl.DataFrame:
        """--deep: result.json contents are not in an inventory, so they are read from S3 either way."""
        return read_results(self.buckets, self.settings.processed_bucket, keys, self.settings.io_threads)

    def engine(self) -> Engine:
        """The engine the options name, built with what it reads."""
        o = self.options
        read = self.read_results if o.deep else None  # --deep's result.json reads
        if o.engine == "athena":
            from jobs.reconcile.engines.athena import AthenaEngine, AthenaInputs

            inputs = AthenaInputs(self.run_id, self.report_prefix, o.dynamodb_export, o.s3_inventories, o.nightly)
            return AthenaEngine(self.settings, self.buckets, self.athena_queries, self.table_exports, inputs)
        if o.engine == "duckdb":
            from jobs.reconcile.engines.duckdb import DuckdbEngine

            assert o.dynamodb_export is not None
            return DuckdbEngine(o.dynamodb_export, *self.inventories(), self.file_buckets, read)
        if o.nightly:
            return PolarsEngine(self.nightly_inputs(), read)
        if o.source == "files":
            return PolarsEngine(self.file_inputs(), read)
        return PolarsEngine(self.kept_snapshot, read, self.lifecycle_findings)

    def kept_snapshot(self) -> Snapshot:
        """The live snapshot, kept: --audit-log reads its items again."""
        self.live = self.snapshot()
        return self.live

    def lifecycle_findings(self, snapshot: Snapshot, params: RuleParams) -> pl.DataFrame:
        """The live run's version-level rules (jobs.reconcile.lifecycle) over its candidates."""
        s = self.settings
        facts = VersionFacts(self.buckets, s.raw_bucket, s.processed_bucket, s.io_threads)
        return lifecycle.find_wide(facts.gather(lifecycle.candidates(snapshot, params)))

    def nightly_inputs(self) -> FileInputs:
        """The schedule's polars run: the kept state brought forward by tonight's exports (or a
        full export), the newest inventories, and the state to keep (`nightly`).
        """
        from jobs.reconcile.inputs.table_state import gathering
        from jobs.reconcile.nightly import polars_night

        night = polars_night(self.settings, self.buckets, self.table_exports)
        self.keep, self.night, self.files_table = night.keep, night.stats(), night.table
        table = gathering(night.table, HELD_OR_HARD_DELETED, self.lifecycle_items)
        return FileInputs(table, night.raw_inventory, night.processed_inventory, keep=night.keep)

    def judge(self) -> Judged:
        """Run the chosen engine; its findings rendered the same way whatever it was."""
        return Judged.of(self.engine().find(self.params))

    def inventories(self) -> tuple[InventoryManifest, InventoryManifest]:
        """The raw and the processed bucket's inventory manifests among the --s3-inventory ones."""
        s = self.settings
        return inventory_pair(list(self.options.s3_inventories), self.file_buckets, s.raw_bucket, s.processed_bucket)

    def file_inputs(self) -> FileInputs:
        """A files run's table and inventories, and the table state to write if one is asked for."""
        from jobs.reconcile.inputs.table_state import StateWriter
        from jobs.reconcile.nightly import files_kept_for

        o = self.options
        keep_for = files_kept_for(self.settings)
        self.keep = StateWriter(o.write_table_state, self.file_buckets, keep_for) if o.write_table_state else None
        self.files_table = self.table_source(deep=o.deep or self.keep is not None)
        return FileInputs(self.files_table, *self.inventories(), keep=self.keep)

    def audit_log(self, as_of: datetime) -> pl.DataFrame:
        """The change log's completeness findings (rendered) for the table this run read."""
        from jobs.reconcile.audit_rule import ITEM_COLUMNS, audit_findings

        if self.live is not None:
            items = self.live.items
        else:  # a files run streamed its items: read them once more for the rule
            assert self.files_table is not None
            tables = [f.select(list(ITEM_COLUMNS)) for f in self.files_table.frames()]
            items = pl.concat(tables) if tables else empty({c: ITEMS_SCHEMA[c] for c in ITEM_COLUMNS})
        o = self.options
        return render(audit_findings(self.buckets, self.settings, items, as_of, o.grace, o.audit_window))

    def nightly_lifecycle(self, as_of: datetime) -> pl.DataFrame:
        """The lifecycle's version rules (LEGAL_HOLD_MISSING, NOT_HARD_DELETED) on a nightly
        polars run, as a live run has them: its held items and those with a hard-delete date,
        gathered while the engine read the table (`nightly_inputs`). The retention tags (--deep)
        stay with live runs: they need the raw objects' ETags.
        """
        parts = self.lifecycle_items
        items = pl.concat(parts) if parts else empty(ITEMS_SCHEMA)
        snapshot = Snapshot(items, empty(OBJECTS_SCHEMA), empty(OBJECTS_SCHEMA), {"table": as_of})
        return render(self.lifecycle_findings(snapshot, replace(self.params(as_of), deep=False)))

    def beside_the_engine(self, judged: Judged, timings: dict[str, float]) -> pl.DataFrame:
        """The engine's findings with the checks a run makes apart from it: the change log's
        (--audit-log) and, nightly on polars, the lifecycle's version rules.
        """
        found = [judged.findings]
        o = self.options
        if o.audit_log:
            clock = time.perf_counter()
            found.append(self.audit_log(judged.as_of))
            timings["auditLog"] = time.perf_counter() - clock
        if o.nightly and o.engine == "polars":
            clock = time.perf_counter()
            found.append(self.nightly_lifecycle(judged.as_of))
            timings["lifecycle"] = time.perf_counter() - clock
        return pl.concat(found).sort(SORT_COLUMNS, nulls_last=True) if len(found) > 1 else judged.findings

    def table_source(self, deep: bool) -> TableSource:
        """The table from files: a full export, or a kept state brought forward by an incremental one."""
        from jobs.reconcile.inputs.table_state import export_source, state_source

        o = self.options
        if o.table_state:
            return state_source(o.table_state, [o.dynamodb_export] if o.dynamodb_export else [], self.file_buckets)
        assert o.dynamodb_export is not None
        return export_source(o.dynamodb_export, self.file_buckets, deep)

    @property
    def file_buckets(self) -> Buckets | None:
        """The S3 adapter when an input or the table state to write is an s3:// location, else None (local files)."""
        o = self.options
        files = (o.dynamodb_export or "", o.table_state or "", o.write_table_state or "", *o.s3_inventories)
        return self.buckets if any(x.startswith("s3://") for x in files) else None

    @cached_property
    def started(self) -> datetime:
        return layout.utc_now()

    @property
    def report_prefix(self) -> str:
        return report_prefix(self.started, self.run_id)

    def execute(self) -> ReconcileOutcome:
        """Judge, repair, report, and only then commit the table state this run keeps: a run that
        fails anywhere leaves the previous state the newest.
        """
        try:
            outcome = self._judge_and_report()
            if self.keep is not None:
                clock = time.perf_counter()
                table = self.keep.commit()
                outcome.timings["tableState"] = time.perf_counter() - clock
                logger.info("table state kept", extra={"runId": self.run_id, "tableState": table})
            return outcome
        finally:
            if self.keep is not None:
                self.keep.close()

    def _repairs(self, findings: pl.DataFrame) -> list[RepairAction]:
        if not self.options.repair:
            return []
        return Repairer(
            self.table,
            self.buckets,
            self.settings.processed_bucket,
            actor=actor(ActorKind.REPAIR, self.run_id),
            policy=self.settings.retention,
            arrivals=self.arrivals,
        ).run(findings)

    def _judge_and_report(self) -> ReconcileOutcome:
        started = self.started
        timings: dict[str, float] = {}
        clock = time.perf_counter()
        judged = self.judge()
        timings["find"] = time.perf_counter() - clock
        findings = self.beside_the_engine(judged, timings)
        repairs = self._repairs(findings)
        per_code = counts(findings)
        severities = {sev.value: int(findings.filter(pl.col("severity") == sev.value).height) for sev in Severity}
        stats = {**judged.stats, **({"night": self.night} if self.night is not None else {})}
        summary = ReconcileSummary(
            runId=self.run_id,
            startedAt=started,
            finishedAt=layout.utc_now(),
            source=self.options.source,
            engine=self.options.engine,
            engineStats=stats,
            options=self.options.as_json(),
            inputs=judged.inputs,
            snapshotTimes=judged.taken_at,
            asOf=judged.as_of,
            itemCount=judged.sizes["table"],
            rawObjectCount=judged.sizes["raw"],
            processedObjectCount=judged.sizes["processed"],
            counts=per_code,
            severities=severities,
            totalFindings=findings.height,
            repairs=repairs,
            reportPrefix=self.report_prefix,
            scope={
                "table": self.settings.table_name,
                "rawBucket": self.settings.raw_bucket,
                "processedBucket": self.settings.processed_bucket,
            },
        )
        if self.options.write_report:
            clock = time.perf_counter()
            history = load_history(self.buckets, self.settings.reports_bucket)
            summary = write_report(self.buckets, self.settings, summary, findings, history)
            timings["report"] = time.perf_counter() - clock
            # Only a run that writes its report is a night: an ad-hoc --no-report run is no heartbeat.
            run_metrics.publish(self.settings, metrics_of(summary), summary.finishedAt)
        logger.info(
            "reconcile finished",
            extra={"runId": self.run_id, "findings": findings.height, "counts": per_code, "timings": timings},
        )
        return ReconcileOutcome(summary, findings, exit_code(findings, self.options.fail_on), timings)
