"""ExtractionSettings: the limits and thresholds of one extraction, passed once to every step.

What a stack chooses of it (the confidence threshold, the OCR engine) is declared once, in
jobs.settings.ExtractionChoices, which the job settings' extraction section is too: a job's
extraction is `ExtractionSettings.of(settings.extraction)`. The OCR engine names (`OcrEngine`) are
spelled once, in jobs.contract.engines.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import Field

from jobs.settings import ExtractionChoices

MIB = 1024 * 1024


class ExtractionSettings(ExtractionChoices):
    max_input_bytes: int = Field(default=20 * MIB, gt=0)
    max_attachment_bytes: int = Field(default=5 * MIB, gt=0)
    max_pdf_pages: int = Field(default=200, gt=0)
    # XML text kept verbatim in outcome.raw up to this size; larger documents keep a summary.
    max_raw_xml_bytes: int = Field(default=256 * 1024, ge=0)
    # EN 16931 sums are exact to the cent; printed documents round each line, so allow a cent.
    totals_tolerance: Decimal = Field(default=Decimal("0.01"), ge=0)
    # A bare "$" names USD the way Textract itself reads it; None makes "$" settle nothing.
    dollar_sign_currency: str | None = Field(default="USD", pattern=r"^[A-Z]{3}$")
    ocr_page_timeout_s: float = Field(default=30.0, gt=0)

    @classmethod
    def of(cls, chosen: ExtractionChoices) -> ExtractionSettings:
        """The extraction a stack chose (every choice of `chosen`) within these limits."""
        return cls(**{name: getattr(chosen, name) for name in ExtractionChoices.model_fields})
