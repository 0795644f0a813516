"""Pure document extraction: bytes → normalized Invoice → validation (no AWS, no boto3).

    from jobs.extract import extract_document, ExtractionSettings
    outcome = extract_document(data, "invoice.xml")

The readers are imported on first use, so `jobs.extract.settings` (the OCR engine choice the job
settings share) costs no lxml, pypdf or OCR import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobs.extract.api import extract_document
    from jobs.extract.settings import ExtractionSettings, OcrEngine

__all__ = ["ExtractionSettings", "OcrEngine", "extract_document"]


def __getattr__(name: str) -> Any:
    if name == "extract_document":
        from jobs.extract.api import extract_document

        return extract_document
    if name in ("ExtractionSettings", "OcrEngine"):
        from jobs.extract import settings

        return getattr(settings, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
