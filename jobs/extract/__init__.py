"""Pure document extraction: bytes → normalized Invoice → validation (no AWS, no boto3).

    from jobs.extract import extract_document, ExtractionSettings
    outcome = extract_document(data, "invoice.xml")
"""

from __future__ import annotations

from jobs.extract.api import extract_document
from jobs.extract.settings import ExtractionSettings

__all__ = ["ExtractionSettings", "extract_document"]
