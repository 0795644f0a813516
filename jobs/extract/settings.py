"""ExtractionSettings: the limits and thresholds of one extraction, passed once to every step.

Also the one spelling of the OCR engine choice (`OcrEngine`), which the job settings, the CLI and
the extraction all use. Importable on its own: jobs.extract loads its readers lazily.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

MIB = 1024 * 1024


class OcrEngine(StrEnum):
    """Who reads plain PDFs and scans.

    OFF fails them NEEDS_OCR; LOCAL reads text layers and runs tesseract here; TEXTRACT reads
    text layers here and leaves scans NEEDS_OCR for the ingest's Amazon Textract call.
    """

    TEXTRACT = "textract"
    LOCAL = "local"
    OFF = "off"


class ExtractionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    confidence_threshold: float = Field(default=80, ge=0, le=100)
    max_input_bytes: int = Field(default=20 * MIB, gt=0)
    max_attachment_bytes: int = Field(default=5 * MIB, gt=0)
    max_pdf_pages: int = Field(default=200, gt=0)
    # XML text kept verbatim in outcome.raw up to this size; larger documents keep a summary.
    max_raw_xml_bytes: int = Field(default=256 * 1024, ge=0)
    # EN 16931 sums are exact to the cent; printed documents round each line, so allow a cent.
    totals_tolerance: Decimal = Field(default=Decimal("0.01"), ge=0)
    # A bare "$" names USD the way Textract itself reads it; None makes "$" settle nothing.
    dollar_sign_currency: str | None = Field(default="USD", pattern=r"^[A-Z]{3}$")
    ocr_engine: OcrEngine = OcrEngine.OFF
    ocr_page_timeout_s: float = Field(default=30.0, gt=0)
