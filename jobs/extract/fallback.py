"""When a text-layer PDF's local reading should also go to Amazon Textract AnalyzeExpense.

Pure decision, no I/O: the ingest asks it after extract_document and, when it says yes, sends the
object to Textract (jobs.store.textract) and uses the response's outcome like a scan's. It costs
money per page, so it is off unless the stack enables it (JobSettings.textract_fallback).
"""

from __future__ import annotations

from jobs.contract.invoice import DocumentFormat, ExtractionOutcome
from jobs.contract.status import Status
from jobs.extract.ocr.engine import TEXT_LAYER
from jobs.extract.validate import REQUIRED_FIELDS

_MISSING = tuple(f"MISSING_FIELD:{name}" for name in REQUIRED_FIELDS)


def wants_textract_fallback(outcome: ExtractionOutcome, *, enabled: bool) -> bool:
    """True when `enabled` and `outcome` is a plain PDF read from its text layer that went to
    review with a header field missing (invoiceNumber, invoiceDate, vendorName, currency,
    totalAmount). Never for e-invoices, images, failures (a scan needing OCR already goes to
    Textract as NEEDS_OCR), PROCESSED documents, or a review for other reasons only (a conflict
    or a total that does not add up is a question for a person, not for another reader).
    """
    return (
        enabled
        and outcome.format is DocumentFormat.PDF
        and outcome.engine.split("+")[0] == TEXT_LAYER
        and outcome.validation.status is Status.REVIEW_REQUIRED
        and any(reason in _MISSING for reason in outcome.validation.reasons)
    )
