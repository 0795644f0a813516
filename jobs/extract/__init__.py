"""Pure document extraction: bytes → normalized Invoice → validation (no AWS, no boto3).

    from jobs.extract import extract_document, ExtractionSettings
    outcome = extract_document(data, "invoice.xml")

The readers are imported on first use, so `jobs.extract.settings` (the OCR engine choice the job
settings share) costs no lxml, pypdf or OCR import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobs.contract.engines import OcrEngine
    from jobs.extract.api import extract_document
    from jobs.extract.settings import ExtractionSettings

__all__ = ["ExtractionSettings", "OcrEngine", "extract_document"]


def __getattr__(name: str) -> Any:
    if name == "extract_document":
        from jobs.extract.api import extract_document

        return extract_document
    if name == "ExtractionSettings":
        from jobs.extract.settings import ExtractionSettings

        return ExtractionSettings
    if name == "OcrEngine":
        from jobs.contract.engines import OcrEngine

        return OcrEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
