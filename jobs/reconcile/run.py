"""Orchestration of one reconcile run: snapshot → rules → (repair) → write-once audit report.

The snapshot comes from live reads or from export/inventory files (`sources`); the rules are pure
(`rules`); repairs are conditional puts (`repair`); the report is written once (`report`).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING

import polars as pl

from jobs.contract import layout
from jobs.contract.schema import LifecycleSpec
from jobs.observability import CallMetrics
from jobs.reconcile import rules
from jobs.reconcile.repair import Repairer
from jobs.reconcile.report import ReconcileSummary, RepairAction, load_history, report_prefix, write_report
from jobs.reconcile.rules import Inputs, RuleParams, Severity
from jobs.reconcile.sources import Snapshot, files_snapshot, live_snapshot, read_results
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client
from jobs.store.translate import TranslatedBuckets, TranslatedTable

if TYPE_CHECKING:
    from jobs.store.dynamo import DocumentTable
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_FAILED = 2
MAX_SEGMENTS = 64
DEFAULT_RETENTION = timedelta(days=LifecycleSpec().standard_retention_days)


@dataclass(frozen=True)
class ReconcileOptions:
    source: str = "live"  # live | files
    dynamodb_export: str | None = None
    s3_inventories: tuple[str, ...] = ()
    deep: bool = False
    repair: bool = False
    grace: timedelta = timedelta(minutes=15)
    stuck_after: timedelta = timedelta(hours=6)
    retention: timedelta = DEFAULT_RETENTION
    fail_on: Severity = Severity.ERROR
    segments: int | None = None  # None: one per I/O thread, 2 to 16
    write_report: bool = True

    def __post_init__(self) -> None:
        if self.source not in ("live", "files"):
            raise ValueError(f"--source {self.source!r}: live or files")
        if self.source == "files" and (not self.dynamodb_export or not self.s3_inventories):
            raise ValueError("--source files needs --dynamodb-export and one --s3-inventory per bucket")
        if self.source == "live" and (self.dynamodb_export or self.s3_inventories):
            raise ValueError("--dynamodb-export/--s3-inventory are read only with --source files")
        for name in ("grace", "stuck_after", "retention"):
            if getattr(self, name) < timedelta(0):
                raise ValueError(f"{name} must not be negative")
        if self.segments is not None and not 1 <= self.segments <= MAX_SEGMENTS:
            # One thread per segment: thousands would exhaust the task, not speed the Scan up.
            raise ValueError(f"--segments {self.segments}: give 1 to {MAX_SEGMENTS} (one Scan thread each)")

    def as_json(self) -> dict[str, object]:
        data = asdict(self)
        for name in ("grace", "stuck_after", "retention"):
            data[name] = getattr(self, name).total_seconds()
        data["s3_inventories"] = list(self.s3_inventories)
        data["fail_on"] = self.fail_on.value
        return data


@dataclass
class ReconcileOutcome:
    summary: ReconcileSummary
    findings: pl.DataFrame
    exit_code: int
    timings: dict[str, float] = field(default_factory=dict)


def new_run_id() -> str:
    return f"{layout.utc_now():%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def exit_code(findings: pl.DataFrame, fail_on: Severity) -> int:
    worst = rules.worst_severity(findings)
    return EXIT_FINDINGS if worst is not None and worst.rank >= fail_on.rank else EXIT_CLEAN


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

    # Clients are built on first use: a files run over local paths needs no AWS at all.
    @cached_property
    def buckets(self) -> Buckets:
        return TranslatedBuckets(s3_client(self.settings), self.metrics)

    @cached_property
    def table(self) -> DocumentTable:
        s = self.settings
        return TranslatedTable(dynamodb_client(s), s.table_name, s.index_name, self.metrics)

    @property
    def scan_segments(self) -> int:
        """Parallel Scan segments of a live run: one per I/O thread, 2 to 16."""
        return self.options.segments or max(2, min(16, self.settings.io_threads))

    def snapshot(self) -> Snapshot:
        s, o = self.settings, self.options
        if o.source == "live":
            return live_snapshot(self.table, self.buckets, s.raw_bucket, s.processed_bucket, self.scan_segments, o.deep)
        assert o.dynamodb_export is not None
        remote = any(x.startswith("s3://") for x in (o.dynamodb_export, *o.s3_inventories))
        return files_snapshot(
            o.dynamodb_export,
            list(o.s3_inventories),
            self.buckets if remote else None,
            s.raw_bucket,
            s.processed_bucket,
            o.deep,
        )

    def find(self, snapshot: Snapshot) -> pl.DataFrame:
        s, o = self.settings, self.options
        results = None
        if o.deep:
            # result.json contents are not in an inventory: --deep reads them from S3 either way.
            pattern = rules.classify_keys(snapshot.processed_objects.lazy(), "result")
            keys = pattern.filter(~pl.col("badKey")).select("key").collect().get_column("key").sort().to_list()
            results = read_results(self.buckets, s.processed_bucket, keys, s.io_threads).lazy()
        params = RuleParams(
            raw_bucket=s.raw_bucket,
            processed_bucket=s.processed_bucket,
            as_of=snapshot.as_of,
            grace=o.grace,
            stuck_after=o.stuck_after,
            retention=o.retention,
            deep=o.deep,
        )
        inputs = Inputs(snapshot.items.lazy(), snapshot.raw_objects.lazy(), snapshot.processed_objects.lazy(), results)
        return rules.find(inputs, params)

    def execute(self) -> ReconcileOutcome:
        started = layout.utc_now()
        timings: dict[str, float] = {}
        clock = time.perf_counter()
        snapshot = self.snapshot()
        timings["read"] = time.perf_counter() - clock
        clock = time.perf_counter()
        findings = self.find(snapshot)
        timings["rules"] = time.perf_counter() - clock
        repairs: list[RepairAction] = []
        if self.options.repair:
            repairs = Repairer(self.table, self.buckets, self.settings.processed_bucket).run(findings)
        counts = rules.counts(findings)
        severities = {sev.value: int(findings.filter(pl.col("severity") == sev.value).height) for sev in Severity}
        summary = ReconcileSummary(
            runId=self.run_id,
            startedAt=started,
            finishedAt=layout.utc_now(),
            source=self.options.source,
            options=self.options.as_json(),
            inputs=snapshot.inputs,
            snapshotTimes=snapshot.taken_at,
            asOf=snapshot.as_of,
            itemCount=snapshot.items.height,
            rawObjectCount=snapshot.raw_objects.height,
            processedObjectCount=snapshot.processed_objects.height,
            counts=counts,
            severities=severities,
            totalFindings=findings.height,
            repairs=repairs,
            reportPrefix=report_prefix(started, self.run_id),
        )
        if self.options.write_report:
            clock = time.perf_counter()
            history = load_history(self.buckets, self.settings.reports_bucket)
            summary = write_report(self.buckets, self.settings.reports_bucket, summary, findings, history)
            timings["report"] = time.perf_counter() - clock
        logger.info(
            "reconcile finished",
            extra={"runId": self.run_id, "findings": findings.height, "counts": counts, "timings": timings},
        )
        return ReconcileOutcome(summary, findings, exit_code(findings, self.options.fail_on), timings)
