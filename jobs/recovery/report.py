"""The drill report: what was restored, how fresh it is (the RPO it proves), how long it took (the
RTO it proves), and what the reconcile of the restored table found. Written once.

`asOf` is the moment the drill restored to (the newest the source held when none was asked),
`restorePoint` the moment the source says its items are as of, and `newestChange` the newest
`updatedAt` actually found in the restored table: every change the restore lacks was made after
it, so `rpoSeconds = asOf - newestChange` bounds the data a loss at `asOf` would have cost.
`rtoSeconds` is the restore plus the reconcile that proved it: the time from "we need the table
back" to "the table is back and checked".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from jobs.contract import layout

FINDINGS_SHOWN = 100


class Findings(BaseModel):
    model_config = ConfigDict(frozen=True)

    total: int
    counts: dict[str, int]
    severities: dict[str, int]
    first: list[dict[str, Any]] = Field(default_factory=list)  # the first FINDINGS_SHOWN, sorted


class DrillReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    format: Literal["docuflow-drill-report/1"] = "docuflow-drill-report/1"
    runId: str
    startedAt: datetime
    finishedAt: datetime
    liveTable: str
    restoredTable: str
    source: str
    restoredFrom: str
    asOf: datetime
    restorePoint: datetime
    newestChange: datetime | None
    rpoSeconds: float | None
    itemCount: int
    rawObjectCount: int
    processedObjectCount: int
    restoreSeconds: float
    newestChangeSeconds: float
    reconcileSeconds: float
    rtoSeconds: float
    findings: Findings
    outcome: Literal["clean", "findings"]
    restoredTableDropped: bool

    @property
    def key(self) -> str:
        return layout.drill_report_key(f"{self.startedAt:%Y-%m-%d}", self.runId)

    def dump(self) -> bytes:
        return self.model_dump_json(indent=2).encode()


def rpo_seconds(as_of: datetime, newest_change: datetime | None) -> float | None:
    """How far the newest change the restore holds lies behind the moment restored to."""
    return None if newest_change is None else round(max((as_of - newest_change).total_seconds(), 0.0), 3)
