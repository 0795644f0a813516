"""Orchestration of one reconcile run: a plan → an engine's findings → (repair) → write-once report.

The run's plan (`plans`: live, files, nightly, Athena) sets the run up once: the engine with the
inputs it reads (`engines`, `inputs`), the checks beside it, the table state to commit. The run
asks the engine for its findings and renders them the same way whatever it was
(`findings.render`); repairs are conditional puts (`repair`); the report is written once
(`report`), and only summary.json says which engine ran. `ReconcileRun` holds the clients and
the reads the plans share; nothing of it changes while the engine runs.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING

import polars as pl

from jobs.contract import layout
from jobs.contract.actors import ActorKind, actor
from jobs.contract.metrics import CODE, SEVERITY, Datum, Job, Metric, RunMetrics, Unit
from jobs.errors import ExitCode
from jobs.reconcile import job as reconcile_job
from jobs.reconcile.chain import drill_age
from jobs.reconcile.chain.ledger import State, read_ledger
from jobs.reconcile.inputs.inventory import InventoryManifest, inventory_pair
from jobs.reconcile.inputs.live import live_snapshot
from jobs.reconcile.inputs.results import read_results
from jobs.reconcile.inputs.versions import VersionFacts
from jobs.reconcile.plans import AuditCheck, LivePlan, Plan, Setup
from jobs.reconcile.repair import Repairer
from jobs.reconcile.report.written import ReconcileSummary, RepairAction, load_history, report_prefix, write_report
from jobs.reconcile.rules import lifecycle
from jobs.reconcile.rules.findings import SORT_COLUMNS, EngineFindings, Severity, counts, render, worst_severity
from jobs.reconcile.rules.frames import ITEMS_SCHEMA, OBJECTS_SCHEMA, Snapshot, empty
from jobs.reconcile.rules.params import RuleParams
from jobs.runtime.context import RunContext
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets

if TYPE_CHECKING:
    from jobs.reconcile.chain.freshness import Tonight
    from jobs.reconcile.inputs.table_state import StateWriter, TableSource
    from jobs.store.athena import AthenaQueries
    from jobs.store.queue import ArrivalQueue
    from jobs.store.table_export import TableExports

logger = logging.getLogger(__name__)

EXIT_CLEAN = ExitCode.SUCCESS
EXIT_FINDINGS = ExitCode.FINDINGS


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


def exit_code(findings: pl.DataFrame, fail_on: Severity) -> int:
    worst = worst_severity(findings)
    return EXIT_FINDINGS if worst is not None and worst.rank >= fail_on.rank else EXIT_CLEAN


def metrics_of(
    summary: ReconcileSummary, ledger: pl.DataFrame | None = None, drill_days: float | None = None
) -> RunMetrics:
    """The night's metrics: findings open tonight by severity (every severity, zeros too: an alarm
    sees a clean night as 0, not as no data) and by code, the new ones among them (the ledger's
    state "new": first seen tonight, or back after it resolved) by severity and by code, the items
    judged, the duration. The findings alarms judge the new ones: an open error a person already
    knows about stays drawn (Findings) but cannot keep the alarm in ALARM, where CloudWatch would
    send nothing for the next error. Without a ledger (a report from before ledgers) every finding
    counts as new. `drill_days`: the restore drill's age (jobs.reconcile.chain.drill_age), when known.
    """
    new = _new_findings(summary, ledger)
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
    data += [
        Datum(metric=Metric.NEW_FINDINGS, value=new.get((SEVERITY, sev.value), 0), breakdown={SEVERITY: sev.value})
        for sev in Severity
    ]
    data += [
        Datum(metric=Metric.NEW_FINDINGS, value=new.get((CODE, code), 0), breakdown={CODE: code})
        for code in summary.counts
    ]
    data += drill_age.drill_age_datum(drill_days)
    return RunMetrics(job=Job.RECONCILE, data=tuple(data))


def _new_findings(summary: ReconcileSummary, ledger: pl.DataFrame | None) -> dict[tuple[str, str], int]:
    """Tonight's new findings counted by (Severity, value) and (Code, value)."""
    if ledger is None:
        return {(SEVERITY, k): v for k, v in summary.severities.items()} | {
            (CODE, k): v for k, v in summary.counts.items()
        }
    fresh = ledger.filter(pl.col("state") == State.NEW.value)
    by_severity = {(SEVERITY, str(k)): int(n) for k, n in fresh.group_by("severity").len().iter_rows()}
    by_code = {(CODE, str(k)): int(n) for k, n in fresh.group_by("code").len().iter_rows()}
    return by_severity | by_code


class ReconcileRun:
    def __init__(
        self,
        settings: JobSettings,
        plan: Plan,
        *,
        context: RunContext | None = None,
        run_id: str | None = None,
        clock: Callable[[], datetime] = layout.utc_now,
    ) -> None:
        """`context`: the job's (jobs.runtime: its run id, calls, stop flag, the metrics it publishes
        when the job ends); a run built without one makes its own and publishes its metrics itself.
        `clock`: the time the restore drill's age is measured at (a test moves it a quarter on
        rather than waiting one).
        """
        self.clock = clock
        self.settings = settings
        self.plan = plan
        self._own_context = context is None
        self.context = context or RunContext.of(settings, reconcile_job.JOB, run_id or "")
        self.metrics = self.context.calls
        self.run_id = self.context.run_id

    # Clients are built on first use: a files run over local paths needs no AWS at all.
    @cached_property
    def buckets(self) -> Buckets:
        return self.context.buckets

    @cached_property
    def table(self) -> DocumentTable:
        return self.context.table()

    @property
    def arrivals(self) -> ArrivalQueue | None:
        return self.context.arrivals

    @cached_property
    def athena_queries(self) -> AthenaQueries:
        from jobs.store.athena import AthenaQueries
        from jobs.store.clients import athena_client

        s = self.settings
        return AthenaQueries(athena_client(s), s.reconcile.athena_workgroup, s.reconcile.glue_database, self.metrics)

    @cached_property
    def table_exports(self) -> TableExports:
        """DynamoDB's table exports (on the local stack its stand-in, which botocore's client
        plugins attach to every client: jobs/local, not here).
        """
        from jobs.store.table_export import TableExports

        return TableExports(dynamodb_client(self.settings), self.metrics)

    @property
    def scan_segments(self) -> int:
        """Parallel Scan segments of a live run: as its plan says, else one per I/O thread, 2 to 16."""
        segments = self.plan.segments if isinstance(self.plan, LivePlan) else None
        return segments or max(2, min(16, self.settings.store.io_threads))

    def snapshot(self, deep: bool) -> Snapshot:
        """The live table and listings, in memory (files runs stream instead: `engines.partitions`)."""
        s = self.settings
        return live_snapshot(
            self.table, self.buckets, s.store.raw_bucket, s.store.processed_bucket, self.scan_segments, deep
        )

    def params(self, as_of: datetime) -> RuleParams:
        s, p = self.settings, self.plan
        return RuleParams(
            raw_bucket=s.store.raw_bucket,
            processed_bucket=s.store.processed_bucket,
            as_of=as_of,
            grace=p.grace,
            stuck_after=p.stuck_after,
            retention=p.retention,
            deep=p.reads_results,
            retention_days=(s.store.retention.standard_days, s.store.retention.compliance_days),
        )

    def read_results(self, keys: list[str]) -> pl.DataFrame:
        """--deep: result.json contents are not in an inventory, so they are read from S3 either way."""
        return read_results(self.buckets, self.settings.store.processed_bucket, keys, self.settings.store.io_threads)

    def lifecycle_findings(self, snapshot: Snapshot, params: RuleParams) -> pl.DataFrame:
        """The version-level rules (jobs.reconcile.rules.lifecycle) over a snapshot's candidates."""
        s = self.settings
        facts = VersionFacts(self.buckets, s.store.raw_bucket, s.store.processed_bucket, s.store.io_threads)
        return lifecycle.find_wide(facts.gather(lifecycle.candidates(snapshot, params)))

    def nightly_lifecycle(self, held: list[pl.DataFrame], as_of: datetime) -> pl.DataFrame:
        """The lifecycle's version rules (LEGAL_HOLD_MISSING, NOT_HARD_DELETED) on a nightly
        polars run, as a live run has them: over the held items and those with a hard-delete date
        the engine gathered as it read the table. The retention tags (--deep) stay with live
        runs: they need the raw objects' ETags.
        """
        items = pl.concat(held) if held else empty(ITEMS_SCHEMA)
        snapshot = Snapshot(items, empty(OBJECTS_SCHEMA), empty(OBJECTS_SCHEMA), {"table": as_of})
        return render(self.lifecycle_findings(snapshot, replace(self.params(as_of), deep=False)))

    def audit_log(self, items: pl.DataFrame, as_of: datetime, check: AuditCheck) -> pl.DataFrame:
        """The change log's completeness findings (rendered) for the table's `items`."""
        from jobs.reconcile.rules.audit_rule import audit_findings

        return render(audit_findings(self.buckets, self.settings, items, as_of, self.plan.grace, check.window))

    @staticmethod
    def items_of(table: TableSource) -> pl.DataFrame:
        """The item columns the change-log rule reads, of a table a files run streamed."""
        from jobs.reconcile.rules.audit_rule import ITEM_COLUMNS

        frames = [f.select(list(ITEM_COLUMNS)) for f in table.frames()]
        return pl.concat(frames) if frames else empty({c: ITEMS_SCHEMA[c] for c in ITEM_COLUMNS})

    def file_buckets(self, locations: tuple[str, ...]) -> Buckets | None:
        """The S3 adapter when an input or the table state to write is an s3:// location, else None (local files)."""
        return self.buckets if any(x.startswith("s3://") for x in locations) else None

    def state_writer(self, location: str, buckets: Buckets | None) -> StateWriter:
        """The table state a files run keeps at `location` (write-once: refused when taken)."""
        from jobs.reconcile.inputs.table_state import StateWriter
        from jobs.reconcile.nightly import files_kept_for

        return StateWriter(location, buckets, files_kept_for(self.settings))

    def table_source(self, export: str | None, state: str | None, buckets: Buckets | None, deep: bool) -> TableSource:
        """The table from files: a full export, or a kept state brought forward by an incremental one."""
        from jobs.reconcile.inputs.table_state import export_source, state_source

        if state:
            return state_source(state, [export] if export else [], buckets)
        assert export is not None
        return export_source(export, buckets, deep)

    def inventories(
        self, manifests: tuple[str, ...], buckets: Buckets | None
    ) -> tuple[InventoryManifest, InventoryManifest]:
        """The raw and the processed bucket's inventory manifests among `manifests`."""
        s = self.settings
        return inventory_pair(list(manifests), buckets, s.store.raw_bucket, s.store.processed_bucket)

    def inventories_tonight(self) -> Tonight:
        """Whether the newest inventories may be judged tonight (`freshness`); the earlier reports
        are read only when a bucket has none.
        """
        from jobs.reconcile.chain.freshness import tonight

        history = functools.cache(lambda: load_history(self.buckets, self.settings.store.reports_bucket))
        return tonight(self.settings, self.buckets, self.started, history)

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
        clock = time.perf_counter()
        setup = self.plan.setup(self)
        try:
            self.context.stop.check("before the engine ran")
            outcome = self._judge_and_report(setup, clock)
            if setup.keep is not None:
                clock = time.perf_counter()
                table = setup.keep.commit()
                outcome.timings["tableState"] = time.perf_counter() - clock
                logger.info("table state kept", extra={"runId": self.run_id, "tableState": table})
            return outcome
        finally:
            if setup.keep is not None:
                setup.keep.close()

    def drill_days(self) -> float | None:
        """Days since the newest drill report under runs/drill/, or before the first since the
        oldest reconcile report (listing pages are in key order: its first object is the oldest
        night's). Listed, never read: the reconcile role lists both prefixes.
        """
        bucket = self.settings.store.reports_bucket
        last = drill_age.newest(o for page in self.buckets.list_pages(bucket, layout.DRILL_RUNS_PREFIX) for o in page)
        first = None
        if last is None:
            oldest = next(iter(self.buckets.list_pages(bucket, layout.RECONCILIATION_PREFIX, first_page_size=1)), [])
            first = oldest[0].last_modified if oldest else None
        return drill_age.drill_age(last, first, self.clock())

    def _repairs(self, findings: pl.DataFrame) -> list[RepairAction]:
        if not self.plan.repair:
            return []
        return Repairer(
            self.table,
            self.buckets,
            self.settings.store.processed_bucket,
            actor=actor(ActorKind.REPAIR, self.run_id),
            policy=self.settings.store.retention,
            arrivals=self.arrivals,
        ).run(findings)

    def _findings(self, setup: Setup, clock: float, timings: dict[str, float]) -> tuple[Judged, pl.DataFrame]:
        """The engine's findings (its setup timed with it), then the checks made beside it."""
        # The engine takes the stop between its partitions, chunks and queries: a long stage
        # cannot outlast the task's stop timeout.
        judged = Judged.of(setup.engine.find(self.params, self.context.stop.check))
        timings["find"] = time.perf_counter() - clock
        found = [judged.findings]
        for check in setup.checks:
            clock = time.perf_counter()
            found.append(check.find(judged.as_of))
            timings[check.name] = time.perf_counter() - clock
        findings = pl.concat(found).sort(SORT_COLUMNS, nulls_last=True) if len(found) > 1 else judged.findings
        return judged, findings

    def _judge_and_report(self, setup: Setup, clock: float) -> ReconcileOutcome:
        started = self.started
        timings: dict[str, float] = {}
        judged, findings = self._findings(setup, clock, timings)
        # Nothing is written before here: a stop leaves no report and no state. Past it, the
        # repairs (conditional puts) and the report that records them finish (seconds, within
        # ECS's stop timeout).
        self.context.stop.check("before repairs and the report")
        repairs = self._repairs(findings)
        per_code = counts(findings)
        severities = {sev.value: int(findings.filter(pl.col("severity") == sev.value).height) for sev in Severity}
        summary = ReconcileSummary(
            runId=self.run_id,
            startedAt=started,
            finishedAt=layout.utc_now(),
            source=self.plan.source,
            engine=self.plan.engine_name,
            engineStats={**judged.stats, **setup.stats},
            options=self.plan.record(),
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
                "table": self.settings.store.table_name,
                "rawBucket": self.settings.store.raw_bucket,
                "processedBucket": self.settings.store.processed_bucket,
            },
            notJudged=setup.not_judged,
        )
        if self.plan.write_report:
            clock = time.perf_counter()
            history = load_history(self.buckets, self.settings.store.reports_bucket)
            summary = write_report(self.buckets, self.settings, summary, findings, history)
            timings["report"] = time.perf_counter() - clock
            # Only a run that writes its report is a night: an ad-hoc --no-report run is no heartbeat.
            ledger = read_ledger(self.buckets, self.settings.store.reports_bucket, summary.reportPrefix)
            self.context.publish(metrics_of(summary, ledger, self.drill_days()))
            if self._own_context:
                self.context.flush()
        logger.info(
            "reconcile finished",
            extra={"runId": self.run_id, "findings": findings.height, "counts": per_code, "timings": timings},
        )
        return ReconcileOutcome(summary, findings, exit_code(findings, self.plan.fail_on), timings)
