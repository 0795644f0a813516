"""The models of a reconcile report's summary.json and its repairs (apart from `report`, which
writes them, so the modules that read a summary import no writer).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RepairAction(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    userId: str | None
    documentId: str | None
    action: str
    outcome: str  # applied | skipped: <why> | failed: <error>
    detail: str = ""


class ReconcileSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    runId: str
    startedAt: datetime
    finishedAt: datetime
    source: str
    engine: str = "polars"  # polars | duckdb | athena: the only place a report says which ran
    engineStats: dict[str, Any] = Field(default_factory=dict)  # e.g. Athena's bytes scanned
    options: dict[str, Any]
    inputs: dict[str, str]
    snapshotTimes: dict[str, datetime]
    asOf: datetime
    itemCount: int
    rawObjectCount: int
    processedObjectCount: int
    counts: dict[str, int]
    severities: dict[str, int]
    totalFindings: int
    repairs: list[RepairAction] = Field(default_factory=list)
    reportPrefix: str
    files: dict[str, str] = Field(default_factory=dict)  # name -> sha256
    # What was judged beyond the inputs: table and bucket names (the reports' "scope").
    scope: dict[str, str] = Field(default_factory=dict)
    inputChecksums: dict[str, str] = Field(default_factory=dict)  # input -> checksum, where a source has one
    # Findings by their life since the previous report: new, open, acknowledged, resolved.
    changes: dict[str, int] = Field(default_factory=dict)
    provenance: dict[str, str] = Field(default_factory=dict)
    # The chain: the summary.json this report follows (the newest earlier one) and its sha256.
    previousSummary: str | None = None
    previousSummarySha256: str | None = None
    # Why the run judged nothing (a night before the first S3 Inventory delivery, or past a stale one).
    notJudged: str | None = None
