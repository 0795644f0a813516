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
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING

from jobs.contract import layout
from jobs.contract.metrics import Datum, Job, Metric, Unit
from jobs.reconcile.rules import Severity
from jobs.recovery.job import DRILL
from jobs.recovery.plan import RestorePlan, Source
from jobs.recovery.report import FINDINGS_SHOWN, DrillReport, Findings, rpo_seconds
from jobs.recovery.restore import Restore, RestoreRequest
from jobs.runtime import stores
from jobs.runtime.context import RunContext
from jobs.settings import JobSettings
from jobs.store.clients import backup_client, dynamodb_client
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
    exports: str | None = None  # None: the stack's export location (JobSettings.reconcile.export_bucket/prefix)
    backup_role_arn: str | None = None
    grace: timedelta = timedelta(minutes=15)
    fail_on: Severity = Severity.ERROR
    drop_after: bool = False
    write_report: bool = True
    # The targets the drill is judged by (docs/recovery.md: RTO 2 hours). The RPO it measures is
    # the newest change's age at the restored moment, a bound that a quiet table makes large, so
    # it is judged only against a target given (--rpo-target) for a window with steady writes.
    rto_target: timedelta = timedelta(hours=2)
    rpo_target: timedelta | None = None


@dataclass
class DrillOutcome:
    report: DrillReport
    exit_code: int
    timings: dict[str, float] = field(default_factory=dict)


def drill_metrics(report: DrillReport | None, missed: bool) -> list[Datum]:
    """RPO and RTO (when the drill got that far) and whether it failed or missed a target."""
    data = [Datum(metric=Metric.TARGETS_MISSED, value=int(missed))]
    if report is not None:
        data.append(Datum(metric=Metric.RTO, value=report.rtoSeconds, unit=Unit.SECONDS))
        if report.rpoSeconds is not None:
            data.append(Datum(metric=Metric.RPO, value=report.rpoSeconds, unit=Unit.SECONDS))
    return data


class DrillRun:
    def __init__(
        self,
        settings: JobSettings,
        options: DrillOptions,
        *,
        context: RunContext | None = None,
        run_id: str | None = None,
    ) -> None:
        """`context`: the job's (jobs.runtime: run id, calls, the stop, the metrics it publishes);
        without one, a plain context (with `run_id` if given).
        """
        self.settings = settings
        self.options = options
        self.context = context or RunContext.of(settings, DRILL, run_id or "")
        self.metrics = self.context.calls
        self.run_id = self.context.run_id
        self.target = options.target or layout.drill_table_name(settings.stage, self.run_id)

    @cached_property
    def buckets(self) -> Buckets:
        return stores.buckets(self.settings, self.metrics)

    @cached_property
    def restores(self) -> TableRestores:
        backup = backup_client(self.settings) if self.options.source == Source.BACKUP else None
        return TableRestores(dynamodb_client(self.settings), self.metrics, backup=backup)

    @property
    def exports(self) -> str:
        s = self.settings
        return self.options.exports or layout.s3_uri(s.reconcile.export_bucket, s.reconcile.export_prefix)

    def execute(self) -> DrillOutcome:
        """The drill, its metrics handed to the context whatever the outcome (a failed drill is a
        missed target); a stop between its steps drops the drill table it made.
        """
        try:
            outcome = self._drill()
        except BaseException:
            self.context.record(Job.DRILL, drill_metrics(None, missed=True), completed=False)
            raise
        self.context.record(Job.DRILL, drill_metrics(outcome.report, self.missed(outcome)))
        return outcome

    def missed(self, outcome: DrillOutcome) -> bool:
        """Findings at --fail-on, an RTO over its target, or an RPO over one given."""
        o, report = self.options, outcome.report
        rpo_missed = o.rpo_target is not None and (report.rpoSeconds or 0) > o.rpo_target.total_seconds()
        return outcome.exit_code != 0 or report.rtoSeconds > o.rto_target.total_seconds() or rpo_missed

    def _drill(self) -> DrillOutcome:
        o, s = self.options, self.settings
        started = layout.utc_now()
        restore = Restore(s, self.restores, self.buckets)
        request = RestoreRequest(o.source, self.target, o.as_of, self.exports, o.backup_role_arn)
        chosen = restore.resolve(request, started)
        logger.info("drill restoring", extra={"target": self.target, "source": chosen.source, "from": chosen.reference})
        timings: dict[str, float] = {}
        clock = time.perf_counter()
        self.context.stop.check("before the restore")
        try:
            restore.execute(chosen, o.backup_role_arn)
        except Exception:
            if restore.created:
                self._drop_quietly()  # a half-restored drill table is of no use to anyone
            raise
        timings["restore"] = time.perf_counter() - clock
        self._stop_point("after the restore")
        clock = time.perf_counter()
        newest = self.restores.newest_change(self.target, max(2, min(16, s.store.io_threads)))
        timings["newestChange"] = time.perf_counter() - clock
        clock = time.perf_counter()
        checked = self._reconcile()
        timings["reconcile"] = time.perf_counter() - clock
        self._stop_point("before the report")
        if o.drop_after:
            self.restores.delete_table(self.target)
        report = self._report(started, chosen, newest, checked, timings)
        if o.write_report:
            self.buckets.put_once(s.store.reports_bucket, report.key, report.dump(), "application/json")
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
            liveTable=self.settings.store.table_name,
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
        from jobs.reconcile import LivePlan, ReconcileRun

        o = self.options
        plan = LivePlan(grace=o.grace, fail_on=o.fail_on, write_report=False)
        return ReconcileRun(self.settings.changed(table_name=self.target), plan).execute()

    def _stop_point(self, where: str) -> None:
        """A stop here drops the drill table (a drill stopped half-way proves nothing) and ends the run."""
        if self.context.stop.stopping:
            self._drop_quietly()
            self.context.stop.check(f"{where} (the drill table {self.target} was dropped)")

    def _drop_quietly(self) -> None:
        try:
            if self.restores.describe(self.target) is not None:
                self.restores.delete_table(self.target)
        except Exception:  # the restore's own error is the one to report
            logger.warning("could not drop the half-restored drill table", extra={"target": self.target}, exc_info=True)
