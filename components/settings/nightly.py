"""The nightly jobs' sections: the ingest (its tasks, who reads scans, Textract's night) and the
reconcile (repairs, engine, the chain's days and the audit data it keeps).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from components.settings.base import Section, key
from jobs.contract.engines import OcrEngine
from jobs.contract.schema import AUDIT_DATA_DAYS, TABLE_STATE_DAYS


class IngestSettings(Section):
    # Ingest tasks the nightly schedule starts: they drain the one arrival queue together (SQS
    # spreads the messages). RunTask starts at most 10 tasks per call.
    ingest_tasks: int = Field(default=4, ge=1, le=10)
    # Scans and plain PDFs in the ingest (DOCUFLOW_OCR_ENGINE): "textract" also grants the task
    # role Textract's AnalyzeExpense actions; "local" runs the image's tesseract; "off" fails them.
    ocr_engine: OcrEngine = OcrEngine.TEXTRACT
    # The Textract pages one ingest task may spend a night (DOCUFLOW_TEXTRACT_MAX_PAGES); documents
    # beyond it wait in the queue for the next night, never failed. 0: no cap.
    textract_max_pages_per_night: int = Field(default=0, ge=0)
    # The second opinion (jobs/extract/fallback.py, DOCUFLOW_TEXTRACT_FALLBACK): a text-layer PDF
    # whose local reading would go to review is read by Textract too, its pages from the night's
    # cap. Asked only with ocrEngine textract (it is Textract's); false turns it off.
    textract_fallback: bool = True

    @property
    def second_opinion(self) -> bool:
        """Whether text-layer PDFs bound for review are read by Textract too (textractFallback)."""
        return self.textract_fallback and self.ocr_engine == OcrEngine.TEXTRACT


class ReconcileSettings(Section):
    # The nightly reconcile runs with --repair (its own task definition and role, which may put
    # items back conditionally); false: a read-only audit nightly, repairs run by hand.
    nightly_repair: bool = True
    # The nightly reconcile (`reconcile nightly`) keeps the table it judged and brings it forward
    # each night by DynamoDB's incremental exports, against daily S3 Inventory reports, with either
    # engine: "polars" in one task (the state as Parquet in the audit-data bucket), "athena" as
    # Athena queries (the state an Iceberg table in the audit catalog, which is then built, and
    # the reconcile and repair roles may use it).
    reconcile_engine: Literal["polars", "athena"] = "polars"
    # How long inventory reports and exports stay in the audit-data bucket, and the nightly table
    # states (short: the next night reads them; longer than the nights a chain may catch up).
    audit_data_retention_days: int = Field(default=AUDIT_DATA_DAYS, ge=2, le=365)
    table_state_retention_days: int = Field(default=TABLE_STATE_DAYS, ge=2, le=35)
    # The chain re-anchors with a full export this many days after the last (PITR keeps 35), and
    # when its newest state is older than catch-up days (missed nights beyond are read whole).
    reconcile_reanchor_days: int = Field(default=30, ge=1, le=35)
    reconcile_catch_up_days: int = Field(default=7, ge=1, le=30)
    # With athena: the most one query may scan (Athena cancels it beyond; bills per byte scanned).
    athena_bytes_scanned_cutoff: int = Field(default=1024**4, ge=10 * 1024**2)

    @model_validator(mode="after")
    def _states(self) -> ReconcileSettings:
        if self.table_state_retention_days <= self.reconcile_catch_up_days:
            raise ValueError(
                f"{key('tableStateRetentionDays')} must be more than {key('reconcileCatchUpDays')} "
                "(a state must outlive the nights the chain may bring forward)"
            )
        return self
