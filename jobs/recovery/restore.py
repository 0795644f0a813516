"""Carry a restore out: resolve what to restore from (reads only), then restore into the new table.

`resolve` reads the PITR window, the recovery points or the exports and lets `plan` choose; it
creates nothing, so every refusal leaves the account as it was. `execute` then makes the new
table: a PITR restore, an AWS Backup restore job (run by the backup role), or a table created from
the contract's spec and loaded from the export in batches; and waits for it to be ACTIVE.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from jobs.contract import table_spec
from jobs.errors import RestoreRequestError
from jobs.progress import Ticker
from jobs.recovery import plan
from jobs.recovery.exports import export_batches, find_exports
from jobs.recovery.plan import RestorePlan, Source
from jobs.settings import JobSettings
from jobs.store.restore import RecoveryPoint, TableRestores
from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RestoreRequest:
    source: Source
    target: str
    as_of: datetime | None  # None: the newest the source holds
    exports: str = ""  # where to look for exports (source export)
    backup_role_arn: str | None = None  # the role AWS Backup restores with (source backup)


class Restore:
    def __init__(self, settings: JobSettings, restores: TableRestores, buckets: Buckets) -> None:
        self._settings = settings
        self._restores = restores
        self._buckets = buckets
        self._point: RecoveryPoint | None = None
        self.created = False  # whether `execute` got as far as creating the target table

    def resolve(self, request: RestoreRequest, now: datetime) -> RestorePlan:
        """What to restore from, checked; reads only."""
        s = self._settings
        plan.check_target(request.target, s.stage, s.store.table_name)
        plan.check_as_of(request.as_of, now)
        if self._restores.describe(request.target) is not None:
            raise RestoreRequestError(f"--target-table {request.target} exists: a drill restores into a new table")
        if request.source == Source.PITR:
            window = self._restores.recovery_window(s.store.table_name)
            if window is None:
                raise RestoreRequestError(
                    f"{s.store.table_name} has no point-in-time recovery: use --source backup or export"
                )
            when = plan.pitr_time(request.as_of, window.earliest, window.latest)
            return RestorePlan(Source.PITR, request.target, when, s.store.table_name)
        if request.source == Source.BACKUP:
            if not request.backup_role_arn:
                raise RestoreRequestError("--source backup needs --backup-role (the stack output backupRoleArn)")
            live = self._restores.describe(s.store.table_name)
            if live is None:
                raise RestoreRequestError(
                    f"{s.store.table_name} does not exist: give its recovery point to AWS Backup by hand"
                )
            self._point = plan.choose_point(self._restores.recovery_points(live.arn), request.as_of, s.store.table_name)
            return RestorePlan(Source.BACKUP, request.target, self._point.created, self._point.arn)
        exports = find_exports(request.exports, self._buckets)
        chosen = plan.choose_export(exports, request.as_of, s.store.table_name, request.exports)
        return RestorePlan(Source.EXPORT, request.target, chosen.export_time, chosen.where)

    def execute(self, chosen: RestorePlan, backup_role_arn: str | None = None) -> None:
        """Make the new table as `chosen` says and wait until it is ACTIVE."""
        restores = self._restores
        if chosen.source == Source.PITR:
            restores.restore_to_point_in_time(chosen.reference, chosen.target, chosen.restore_point)
            self.created = True
            restores.wait_active(chosen.target, restoring=True)
            return
        if chosen.source == Source.BACKUP:
            assert self._point is not None and backup_role_arn is not None
            self.created = True  # the job creates it: a failed job may leave a partial table
            restores.restore_backup(self._point, backup_role_arn, chosen.target)
            restores.wait_active(chosen.target, restoring=True)
            return
        restores.create_table(table_spec(self._settings.stage).model_copy(update={"name": chosen.target}))
        self.created = True
        restores.wait_active(chosen.target)
        ticker = Ticker(f"restore {chosen.target} (writes of up to 25 items)")
        with ticker.shown():
            written = restores.write_all(
                chosen.target,
                export_batches(chosen.reference, self._buckets),
                self._settings.store.io_threads,
                lambda _count: ticker.advance(),
            )
        logger.info("export loaded", extra={"target": chosen.target, "items": written, "export": chosen.reference})
