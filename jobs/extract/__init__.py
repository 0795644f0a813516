"""Pure document extraction: bytes → normalized Invoice → validation (no AWS, no boto3).

    from jobs.extract import extract_document, ExtractionSettings
    outcome = extract_document(data, "invoice.xml")

The public front is `__all__`: extraction itself, and the reading rules other packages apply to
what a person types (the review's corrections: amounts, dates, money, free text, the rejection).
Each name is imported on first use, so `jobs.extract.settings` (the OCR engine choice the job
settings share) costs no lxml, pypdf or OCR import. `validate` is a module here and a function in
it: take it from `jobs.extract.validate`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobs.contract.engines import OcrEngine
    from jobs.extract.amounts import normalize_amounts
    from jobs.extract.api import extract_document
    from jobs.extract.fallback import wants_textract_fallback
    from jobs.extract.parsing import AmbiguousDate, parse_date, parse_money, symbol_currency
    from jobs.extract.result import DocumentRejectedError
    from jobs.extract.settings import ExtractionSettings
    from jobs.extract.text import clean
    from jobs.extract.validate import DERIVED_REASONS

_HOMES = {
    "extract_document": "jobs.extract.api",
    "ExtractionSettings": "jobs.extract.settings",
    "OcrEngine": "jobs.contract.engines",
    "DocumentRejectedError": "jobs.extract.result",
    "DERIVED_REASONS": "jobs.extract.validate",
    "normalize_amounts": "jobs.extract.amounts",
    "AmbiguousDate": "jobs.extract.parsing",
    "parse_date": "jobs.extract.parsing",
    "parse_money": "jobs.extract.parsing",
    "symbol_currency": "jobs.extract.parsing",
    "clean": "jobs.extract.text",
    "wants_textract_fallback": "jobs.extract.fallback",
}

__all__ = [
    "DERIVED_REASONS",
    "AmbiguousDate",
    "DocumentRejectedError",
    "ExtractionSettings",
    "OcrEngine",
    "clean",
    "extract_document",
    "normalize_amounts",
    "parse_date",
    "parse_money",
    "symbol_currency",
    "wants_textract_fallback",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
