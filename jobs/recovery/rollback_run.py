"""Roll the live table back to a restored table's items, for every item changed since a time.

Reads the live items whose `updatedAt` is at or after `since` (a parallel Scan), their restored
versions (batched reads of the restored table), lets `rollback.step` decide, and writes: puts
conditional on the live version it read (TransactWriteItems of Puts, as every writer of the
table), deletes conditional on it too. An item that changed again in the meantime keeps its
change and is counted as `changedSince`; rerunning finds it (and finds nothing left to do for
what was rolled back). Stop the ingest schedule first: a drain running alongside would keep
changing items.

A person's decision since `since` (a legal hold or its release, an owner's delete or restore) is
never undone (see jobs.recovery.rollback): the summary's `leftAlone` names each such document,
with what was done around it and why, in a dry run as in the real one.

Run by hand, with an operator's credentials: it writes the live table, which no task role of the
stack may do beyond its own job's writes.
"""

from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from jobs.contract import DocumentItem, layout
from jobs.contract.actors import ActorKind, actor
from jobs.contract.duplicates import is_marker_item
from jobs.errors import RestoreRequestError
from jobs.recovery.job import ROLLBACK
from jobs.recovery.rollback import Action, Step, step
from jobs.runtime.context import RunContext
from jobs.runtime.stores import document_table
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client
from jobs.store.restore import TableRestores
from jobs.store.table_writes import claim_put

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RollbackOptions:
    restored_table: str
    since: datetime
    dry_run: bool = False


@dataclass
class RollbackSummary:
    restoredTable: str
    since: datetime
    examined: int = 0
    actions: dict[str, int] = field(default_factory=dict)
    changedSince: int = 0  # items whose condition failed: changed again while rolling back
    dryRun: bool = False
    # Each document with a person's decision since the restore point, left as it is: what the
    # step did around it and why (rollback.Step.kept).
    leftAlone: list[dict[str, object]] = field(default_factory=list)


class RollbackRun:
    def __init__(self, settings: JobSettings, options: RollbackOptions, *, context: RunContext | None = None) -> None:
        """`context`: the job's (jobs.runtime: run id, calls, the stop); a plain one otherwise."""
        self.settings = settings
        self.options = options
        self.context = context or RunContext.of(settings, ROLLBACK)
        self.metrics = self.context.calls
        client = dynamodb_client(settings)  # one client for the three
        self.live = document_table(settings, self.metrics, client=client)
        self.restored = document_table(settings, self.metrics, table_name=options.restored_table, client=client)
        self.restores = TableRestores(client, self.metrics)

    def execute(self) -> RollbackSummary:
        o = self.options
        if o.restored_table == self.settings.store.table_name:
            raise RestoreRequestError("--restored-table is the live table: give the table the drill restored")
        if self.restores.describe(o.restored_table) is None:
            raise RestoreRequestError(f"--restored-table {o.restored_table} does not exist")
        changed = self._changed_since()
        before = self.restored.get_many((i.userId, i.documentId) for i in changed)
        now = layout.utc_now()
        signed = actor(ActorKind.RECOVERY, f"rollback-{self.context.run_id}")
        steps = [step(item, before.get((item.userId, item.documentId)), now, signed) for item in changed]
        summary = RollbackSummary(o.restored_table, o.since, examined=len(changed), dryRun=o.dry_run)
        summary.actions = dict(Counter(s.action.value for s in steps))
        summary.leftAlone = [s.left_alone() for s in steps if s.kept]
        if not o.dry_run:
            self.context.stop.check("before it wrote anything")
            summary.changedSince = self._apply(steps)
        logger.info("rollback done", extra={"summary": vars(summary), "calls": self.metrics.summary()})
        return summary

    def _changed_since(self) -> list[DocumentItem]:
        segments = max(2, min(16, self.settings.store.io_threads))
        since = layout.format_ts(self.options.since)

        def segment(number: int) -> list[DocumentItem]:
            # Documents only: duplicate markers move with their documents' writes (a reprocessed
            # document takes its markers again when the replay finishes it).
            return [
                DocumentItem.from_item(raw)
                for raw in self.live.scan(number, segments)
                if not is_marker_item(raw) and str(raw.get("updatedAt", "")) >= since
            ]

        with ThreadPoolExecutor(segments, thread_name_prefix="rollback") as pool:
            return [item for part in pool.map(segment, range(segments)) for item in part]

    def _apply(self, steps: list[Step]) -> int:
        """Write the steps (a delete's signed last version with them, the delete after it);
        returns how many lost their condition (changed again meanwhile).
        """
        writes = [s for s in steps if s.write is not None]
        puts = [claim_put(s.write, s.live.version) for s in writes if s.write is not None]
        landed = self.live.put_all(puts, "dynamodb.TransactWrite.rollback") if puts else []
        lost = landed.count(False)
        signed = [s.write for s, ok in zip(writes, landed, strict=True) if ok and s.action == Action.DELETE and s.write]
        for item in signed:
            lost += not self.restores.delete_if_version(
                self.settings.store.table_name, item.userId, item.documentId, item.version
            )
        return lost
