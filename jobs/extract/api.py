"""extract_document: bytes in, ExtractionOutcome out, never an exception.

Sniffs the content, hands it to one reader, checks and pads its amounts (jobs.extract.amounts) so
every form of an invoice serializes the same, and validates. Module-level and free of state so a
ProcessPoolExecutor can pickle it.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from pydantic import ValidationError

from jobs.contract.engines import OcrEngine
from jobs.contract.invoice import DocumentFormat, ExtractionOutcome, FailureCode
from jobs.extract.amounts import normalize_amounts
from jobs.extract.detect import Kind, sniff
from jobs.extract.facturx import extract_facturx
from jobs.extract.normalized_json import extract_normalized, is_normalized
from jobs.extract.result import DocumentRejectedError, Extraction, UnusableAttachmentError
from jobs.extract.settings import ExtractionSettings
from jobs.extract.textract import extract_textract, is_textract
from jobs.extract.validate import validate
from jobs.extract.xml_invoice import extract_xml

logger = logging.getLogger(__name__)

_DEFAULT_SETTINGS = ExtractionSettings()


def extract_document(data: bytes, filename: str, settings: ExtractionSettings | None = None) -> ExtractionOutcome:
    """Extract and validate one document. `filename` is for messages only: formats are sniffed."""
    settings = settings or _DEFAULT_SETTINGS
    kind = Kind.UNKNOWN
    try:
        if len(data) > settings.max_input_bytes:
            raise DocumentRejectedError(
                FailureCode.TOO_LARGE, f"{len(data)} bytes exceeds the limit of {settings.max_input_bytes}"
            )
        kind = sniff(data)
        extraction = _extract(kind, data, settings)
        try:
            invoice = normalize_amounts(extraction.invoice)
        except DocumentRejectedError as exc:
            exc.format = extraction.format
            raise
        return ExtractionOutcome(
            format=extraction.format,
            engine=extraction.engine,
            raw=extraction.raw,
            invoice=invoice,
            validation=validate(invoice, extraction.reasons, settings),
        )
    except DocumentRejectedError as exc:
        return _failure(exc.format, kind, exc.code, exc.message)
    except ValidationError as exc:
        # A value beyond the invoice model's bounds (a 500 KB invoice number): the document is
        # malformed, and retrying the same bytes would give the same answer.
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return _failure(DocumentFormat.UNKNOWN, kind, FailureCode.MALFORMED, f"invalid {where}: {first['msg']}")
    except Exception as exc:  # a reader bug must not take down the batch: report it as INTERNAL
        logger.exception("extraction of %s failed unexpectedly", filename)
        return _failure(DocumentFormat.UNKNOWN, kind, FailureCode.INTERNAL, f"{type(exc).__name__}: {exc}")


def _failure(fmt: DocumentFormat, kind: Kind, code: FailureCode, message: str) -> ExtractionOutcome:
    if fmt is DocumentFormat.UNKNOWN:
        fmt = {Kind.PDF: DocumentFormat.PDF, Kind.IMAGE: DocumentFormat.IMAGE}.get(kind, DocumentFormat.UNKNOWN)
    return ExtractionOutcome.failure(code, message, fmt)


def _extract(kind: Kind, data: bytes, settings: ExtractionSettings) -> Extraction:
    if kind is Kind.EMPTY:
        raise DocumentRejectedError(FailureCode.EMPTY, "document is empty")
    if kind is Kind.IMAGE:
        if settings.ocr_engine is OcrEngine.OFF:
            raise DocumentRejectedError(FailureCode.NEEDS_OCR, "image needs OCR", DocumentFormat.IMAGE)
        return _read_image(data, settings)
    if kind is Kind.PDF:
        return _extract_pdf(data, settings)
    if kind is Kind.XML:
        return extract_xml(data, settings)
    if kind is Kind.JSON:
        return _extract_json(data, settings)
    raise DocumentRejectedError(FailureCode.UNSUPPORTED_FORMAT, "neither PDF, image, XML nor JSON")


def _extract_pdf(data: bytes, settings: ExtractionSettings) -> Extraction:
    """Its embedded e-invoice, else (with an OCR engine) its pages."""
    try:
        return extract_facturx(data, settings)
    except UnusableAttachmentError as exc:
        if settings.ocr_engine is OcrEngine.OFF:
            raise
        return _pages_instead_of(exc, data, settings)
    except DocumentRejectedError as exc:
        if exc.code is not FailureCode.NEEDS_OCR or settings.ocr_engine is OcrEngine.OFF:
            raise
    # No embedded e-invoice: read the PDF's text layer (and, locally, OCR its scanned pages).
    return _read_pages(data, settings)


def _pages_instead_of(unusable: UnusableAttachmentError, data: bytes, settings: ExtractionSettings) -> Extraction:
    """An unusable attachment must not hide a readable page: read the pages, say why in raw."""
    try:
        extraction = _read_pages(data, settings)
    except DocumentRejectedError as exc:
        exc.message = f"{exc.message}; the embedded invoice was not used: {unusable.message}"
        raise
    extraction.raw["EmbeddedInvoice"] = unusable.record()
    return extraction


# The OCR engine is imported on first use: pdfplumber, Pillow and pytesseract stay out of
# XML/JSON-only workers.
def _read_image(data: bytes, settings: ExtractionSettings) -> Extraction:
    from jobs.extract.ocr.engine import extract_image

    return extract_image(data, settings)


def _read_pages(data: bytes, settings: ExtractionSettings) -> Extraction:
    from jobs.extract.ocr.engine import extract_plain_pdf

    return extract_plain_pdf(data, settings)


def _extract_json(data: bytes, settings: ExtractionSettings) -> Extraction:
    try:
        # orjson refuses nesting deeper than 1024 and invalid UTF-8 with a JSONDecodeError.
        payload: Any = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise DocumentRejectedError(FailureCode.MALFORMED, f"malformed JSON: {exc}") from exc
    if is_textract(payload):
        return extract_textract(payload, settings)
    if is_normalized(payload):
        return extract_normalized(data, payload)
    raise DocumentRejectedError(
        FailureCode.UNSUPPORTED_FORMAT, "JSON is neither a Textract expense response nor a normalized invoice"
    )
