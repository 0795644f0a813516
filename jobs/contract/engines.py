"""The engines a stack may select for a job: one enum each, read by the Pulumi settings (what a
platform team may write in Pulumi.<stack>.yaml), the job settings and the extraction.
"""

from __future__ import annotations

from enum import StrEnum


class OcrEngine(StrEnum):
    """Who reads plain PDFs and scans.

    OFF fails them NEEDS_OCR; LOCAL reads text layers and runs tesseract here; TEXTRACT reads
    text layers here and leaves scans NEEDS_OCR for the ingest's Amazon Textract call.
    """

    TEXTRACT = "textract"
    LOCAL = "local"
    OFF = "off"


class ReconcileEngine(StrEnum):
    """What the reconcile runs on: polars over files, or the same Trino SQL on DuckDB or in Athena."""

    POLARS = "polars"
    DUCKDB = "duckdb"
    ATHENA = "athena"
