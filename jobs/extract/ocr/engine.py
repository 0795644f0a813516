"""Plain PDFs and scans → Extraction, for extract_document when ocr_engine is not "off".

Owns the routing between engines: a PDF's pages with a text layer are read from it (exact and
cheap, under every setting); pages without one and images go to tesseract when ocr_engine is
"local", and come back as FAILED NEEDS_OCR when it is "textract" so the ingest can send the
object to Amazon Textract and feed the response back. Every engine's words end up in one
AnalyzeExpense-shaped response read by the one Textract normalizer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PIL import Image, UnidentifiedImageError

from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.extract.ocr.expense_shape import expense_response
from jobs.extract.ocr.images import decode_images, render_pdf_page
from jobs.extract.ocr.labels import pair_fields
from jobs.extract.ocr.lines import Page
from jobs.extract.ocr.tesseract import OcrEngineError, ocr_page
from jobs.extract.ocr.textlayer import PageContentTooLargeError, text_layer_pages
from jobs.extract.result import DocumentRejectedError, Extraction
from jobs.extract.settings import ExtractionSettings, OcrEngine
from jobs.extract.textract import extract_textract

logger = logging.getLogger(__name__)

TEXT_LAYER = "pdf-text-layer"
TESSERACT = "tesseract"


def extract_plain_pdf(data: bytes, settings: ExtractionSettings) -> Extraction:
    """A PDF without an embedded e-invoice: text layer first, OCR only for pages without text."""
    try:
        pages: list[Page | None] = text_layer_pages(data)
    except PageContentTooLargeError as exc:
        raise DocumentRejectedError(FailureCode.TOO_LARGE, str(exc), DocumentFormat.PDF) from exc
    except Exception as exc:  # pdfminer raises its own zoo of errors on damaged files
        raise DocumentRejectedError(
            FailureCode.MALFORMED, f"unreadable PDF text layer: {type(exc).__name__}: {exc}", DocumentFormat.PDF
        ) from exc
    missing = [index for index, page in enumerate(pages) if page is None]
    if missing and settings.ocr_engine is not OcrEngine.LOCAL:
        raise DocumentRejectedError(
            FailureCode.NEEDS_OCR, f"{len(missing)} of {len(pages)} PDF pages have no text layer", DocumentFormat.PDF
        )
    for index in missing:
        pages[index] = _ocr(lambda i=index: render_pdf_page(data, i), index + 1, settings, DocumentFormat.PDF)
    engines = ([TEXT_LAYER] if len(missing) < len(pages) else []) + ([TESSERACT] if missing else [])
    return _normalize([p for p in pages if p is not None], "+".join(engines), DocumentFormat.PDF, settings)


def extract_image(data: bytes, settings: ExtractionSettings) -> Extraction:
    if settings.ocr_engine is not OcrEngine.LOCAL:
        raise DocumentRejectedError(FailureCode.NEEDS_OCR, "image needs OCR", DocumentFormat.IMAGE)
    try:
        frames = decode_images(data)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise DocumentRejectedError(
            FailureCode.MALFORMED, f"unreadable image: {type(exc).__name__}: {exc}", DocumentFormat.IMAGE
        ) from exc
    if len(frames) > settings.max_pdf_pages:
        raise DocumentRejectedError(
            FailureCode.TOO_LARGE, f"image has {len(frames)} pages (limit {settings.max_pdf_pages})",
            DocumentFormat.IMAGE,
        )
    pages = [_ocr(lambda f=frame: f, n, settings, DocumentFormat.IMAGE) for n, frame in enumerate(frames, start=1)]
    return _normalize(pages, TESSERACT, DocumentFormat.IMAGE, settings)


def _ocr(image: Callable[[], Image.Image], number: int, settings: ExtractionSettings, fmt: DocumentFormat) -> Page:
    # The image is made lazily so a 200-page PDF holds one rendered page at a time.
    try:
        return ocr_page(image(), number, settings.ocr_page_timeout_s)
    except OcrEngineError as exc:
        raise DocumentRejectedError(FailureCode.NEEDS_OCR, f"local OCR failed: {exc}", fmt) from exc


def _normalize(pages: list[Page], engine: str, fmt: DocumentFormat, settings: ExtractionSettings) -> Extraction:
    response = expense_response(pages, pair_fields(pages), engine)
    inner = extract_textract(response, settings)
    reasons = list(inner.reasons)
    invoice = inner.invoice
    # An OCR misread digit keeps a high word confidence. The total is trusted only when the
    # totals check can run on it (net + tax = total); otherwise a person looks at it.
    if TESSERACT in engine and invoice.totalAmount is not None and (invoice.subtotal is None or invoice.tax is None):
        reasons.append("UNCORROBORATED:totalAmount")
    return Extraction(fmt, engine, response, invoice, reasons)
