"""One restore drill: restore the table into a new drill table, prove it, report once.

Resolve the source (reads only: a refusal creates nothing) → restore into the drill table (timed)
→ read its newest change → reconcile it against the buckets with the reconcile package's live run
on the drill table's name (timed; its findings are the drill's) → optionally drop the drill table
→ write the report once under runs/drill/. The live table is only ever read: its PITR window, its
ARN, and PITR reading it for a restore; every write goes to the drill table, whose name must carry
the drill prefix (IAM on AWS allows the drill role no other table).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING

from jobs.contract import layout
from jobs.observability import CallMetrics
from jobs.reconcile.findings import Severity
from jobs.recovery.plan import RestorePlan, Source
from jobs.recovery.report import FINDINGS_SHOWN, DrillReport, Findings, rpo_seconds
from jobs.recovery.restore import Restore, RestoreRequest
from jobs.settings import JobSettings
from jobs.store.clients import backup_client, dynamodb_client, s3_client
from jobs.store.restore import TableRestores
from jobs.store.s3 import Buckets

if TYPE_CHECKING:
    from jobs.reconcile import ReconcileOutcome

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DrillOptions:
    source: Source = Source.PITR
    as_of: datetime | None = None  # None: restore the newest the source holds
    target: str | None = None  # None: layout.drill_table_name(stage, run id)
    exports: str | None = None  # None: the stack's export location (JobSettings.export_bucket/prefix)
    backup_role_arn: str | None = None
    grace: timedelta = timedelta(minutes=15)
    fail_on: Severity = Severity.ERROR
    drop_after: bool = False
    write_report: bool = True


@dataclass
class DrillOutcome:
    report: DrillReport
    exit_code: int
    timings: dict[str, float] = field(default_factory=dict)


def new_run_id() -> str:
    return f"{layout.utc_now():%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


class DrillRun:
    def __init__(self, settings: JobSettings, options: DrillOptions, *, run_id: str | None = None) -> None:
        self.settings = settings
        self.options = options
        self.metrics = CallMetrics()
        self.run_id = run_id or new_run_id()
        self.target = options.target or layout.drill_table_name(settings.stage, self.run_id)

    @cached_property
    def buckets(self) -> Buckets:
        return Buckets(s3_client(self.settings), self.metrics)

    @cached_property
    def restores(self) -> TableRestores:
        backup = backup_client(self.settings) if self.options.source == Source.BACKUP else None
        return TableRestores(dynamodb_client(self.settings), self.metrics, backup=backup)

    @property
    def exports(self) -> str:
        s = self.settings
        return self.options.exports or layout.s3_uri(s.export_bucket, s.export_prefix)

    def execute(self) -> DrillOutcome:
        o, s = self.options, self.settings
        started = layout.utc_now()
        restore = Restore(s, self.restores, self.buckets)
        request = RestoreRequest(o.source, self.target, o.as_of, self.exports, o.backup_role_arn)
        chosen = restore.resolve(request, started)
        logger.info("drill restoring", extra={"target": self.target, "source": chosen.source, "from": chosen.reference})
        timings: dict[str, float] = {}
        clock = time.perf_counter()
        try:
            restore.execute(chosen, o.backup_role_arn)
        except Exception:
            if restore.created:
                self._drop_quietly()  # a half-restored drill table is of no use to anyone
            raise
        timings["restore"] = time.perf_counter() - clock
        clock = time.perf_counter()
        newest = self.restores.newest_change(self.target, max(2, min(16, s.io_threads)))
        timings["newestChange"] = time.perf_counter() - clock
        clock = time.perf_counter()
        checked = self._reconcile()
        timings["reconcile"] = time.perf_counter() - clock
        if o.drop_after:
            self.restores.delete_table(self.target)
        report = self._report(started, chosen, newest, checked, timings)
        if o.write_report:
            self.buckets.put_once(s.reports_bucket, report.key, report.dump(), "application/json")
        logger.info("drill finished", extra={"runId": self.run_id, "timings": timings, "calls": self.metrics.summary()})
        return DrillOutcome(report, checked.exit_code, timings)

    def _report(
        self,
        started: datetime,
        chosen: RestorePlan,
        newest: datetime | None,
        checked: ReconcileOutcome,
        timings: dict[str, float],
    ) -> DrillReport:
        as_of = self.options.as_of or started
        summary = checked.summary
        return DrillReport(
            runId=self.run_id,
            startedAt=started,
            finishedAt=layout.utc_now(),
            liveTable=self.settings.table_name,
            restoredTable=self.target,
            source=chosen.source.value,
            restoredFrom=chosen.reference,
            asOf=as_of,
            restorePoint=chosen.restore_point,
            newestChange=newest,
            rpoSeconds=rpo_seconds(as_of, newest),
            itemCount=summary.itemCount,
            rawObjectCount=summary.rawObjectCount,
            processedObjectCount=summary.processedObjectCount,
            restoreSeconds=round(timings["restore"], 3),
            newestChangeSeconds=round(timings["newestChange"], 3),
            reconcileSeconds=round(timings["reconcile"], 3),
            rtoSeconds=round(timings["restore"] + timings["reconcile"], 3),
            findings=Findings(
                total=summary.totalFindings,
                counts={k: v for k, v in summary.counts.items() if v},
                severities=summary.severities,
                first=checked.findings.head(FINDINGS_SHOWN).to_dicts(),
            ),
            outcome="clean" if summary.totalFindings == 0 else "findings",
            restoredTableDropped=self.options.drop_after,
        )

    def _reconcile(self) -> ReconcileOutcome:
        """The reconcile's live run against the drill table: its public entry, on another table name."""
        from jobs.reconcile import ReconcileOptions, ReconcileRun

        o = self.options
        options = ReconcileOptions(source="live", grace=o.grace, fail_on=o.fail_on, write_report=False)
        return ReconcileRun(self.settings.model_copy(update={"table_name": self.target}), options).execute()

    def _drop_quietly(self) -> None:
        try:
            if self.restores.describe(self.target) is not None:
                self.restores.delete_table(self.target)
        except Exception:  # the restore's own error is the one to report
            logger.warning("could not drop the half-restored drill table", extra={"target": self.target}, exc_info=True)
