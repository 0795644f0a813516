"""Plain PDFs and scans → Extraction, for extract_document when ocr_engine is not "off".

Owns the routing between engines: a PDF's pages with a text layer are read from it (exact and
cheap, under every setting); pages without one and images go to tesseract when ocr_engine is
"local", and come back as FAILED NEEDS_OCR when it is "textract" so the ingest can send the
object to Amazon Textract and feed the response back. Every engine's words end up in one
AnalyzeExpense-shaped response read by the one Textract normalizer.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from PIL import Image, UnidentifiedImageError

from jobs.contract.engines import OcrEngine
from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.contract.status import Status
from jobs.extract.amounts import normalize_amounts
from jobs.extract.ocr.expense_shape import expense_response
from jobs.extract.ocr.fields import pair_fields
from jobs.extract.ocr.guesses import guesses_for
from jobs.extract.ocr.images import PDF_RENDER_DPI, decode_images, render_pdf_page
from jobs.extract.ocr.lines import Page
from jobs.extract.ocr.tesseract import OcrEngineError, ocr_page
from jobs.extract.ocr.textlayer import PageContentTooLargeError, text_layer_pages
from jobs.extract.result import DocumentRejectedError, Extraction
from jobs.extract.settings import ExtractionSettings
from jobs.extract.textract import FIELD_OF_TYPE, extract_textract
from jobs.extract.validate import validate

logger = logging.getLogger(__name__)

TEXT_LAYER = "pdf-text-layer"
TESSERACT = "tesseract"
# The second look reads a low-resolution scan again as if scanned at this resolution, and only
# when that enlarges it at least MIN_SECOND_LOOK_GAIN times (a 200-dpi render: 1.5×).
SECOND_LOOK_DPI = 300.0
MIN_SECOND_LOOK_GAIN = 1.5
MAX_SECOND_LOOK_SCALE = 3.0  # a thumbnail enlarged further has nothing more to show
# Invoices are a few pages; a long scanned document read twice would double an already long OCR.
SECOND_LOOK_MAX_PAGES = 10
AGREEING_FIELDS = ("invoiceNumber", "invoiceDate", "vendorName", "currency")
A4_SHORT_SIDE_INCHES = 8.27


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
    engines = "+".join(([TEXT_LAYER] if len(missing) < len(pages) else []) + ([TESSERACT] if missing else []))

    def read(scale: float) -> list[Page]:
        # A second look renders the page at the higher resolution rather than enlarging pixels.
        dpi = round(PDF_RENDER_DPI * scale)
        scanned = {
            index: _ocr(functools.partial(render_pdf_page, data, index, dpi), index + 1, settings, DocumentFormat.PDF)
            for index in missing
        }
        return [page if page is not None else scanned[index] for index, page in enumerate(pages)]

    return read_with_second_look(read, engines, DocumentFormat.PDF, settings, PDF_RENDER_DPI, len(missing))


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
            FailureCode.TOO_LARGE,
            f"image has {len(frames)} pages (limit {settings.max_pdf_pages})",
            DocumentFormat.IMAGE,
        )

    def read(scale: float) -> list[Page]:
        return [
            _ocr(functools.partial(_decoded, frame), n, settings, DocumentFormat.IMAGE, scale)
            for n, frame in enumerate(frames, start=1)
        ]

    return read_with_second_look(read, TESSERACT, DocumentFormat.IMAGE, settings, _dpi_of(frames[0]), len(frames))


def _decoded(frame: Image.Image) -> Image.Image:
    """An image already decoded, handed to `_ocr` as the lazy image it takes."""
    return frame


def _ocr(
    image: Callable[[], Image.Image], number: int, settings: ExtractionSettings, fmt: DocumentFormat, scale: float = 1.0
) -> Page:
    # The image is made lazily so a 200-page PDF holds one rendered page at a time.
    try:
        return ocr_page(image(), number, settings.ocr_page_timeout_s, scale)
    except OcrEngineError as exc:
        raise DocumentRejectedError(FailureCode.NEEDS_OCR, f"local OCR failed: {exc}", fmt) from exc


def read_with_second_look(
    read: Callable[[float], list[Page]],
    engine: str,
    fmt: DocumentFormat,
    settings: ExtractionSettings,
    dpi: float,
    scanned_pages: int,
) -> Extraction:
    """Read the pages; when tesseract read a low-resolution scan that would not be PROCESSED, read
    its scanned pages again enlarged to SECOND_LOOK_DPI and keep that reading only if it is.

    tesseract is trained on ~300-dpi print: at 150 dpi it drops a leading "1." of an amount or
    the middle of a Courier number with high confidence. An enlarged page costs more CPU than a
    first reading (docs/ocr.md, Engines); enlarging every page would charge that to every
    scan, the second look only to the documents that would go to a person (and only for up to
    SECOND_LOOK_MAX_PAGES scanned pages).
    A second reading that is not clean is discarded, so it can settle a document, never unsettle one.
    """
    first = normalize_pages(read(1.0), engine, fmt, settings)
    if (
        not 0 < scanned_pages <= SECOND_LOOK_MAX_PAGES
        or dpi * MIN_SECOND_LOOK_GAIN > SECOND_LOOK_DPI
        or _clean(first, settings)
    ):
        return first
    scale = min(SECOND_LOOK_DPI / dpi, MAX_SECOND_LOOK_SCALE)
    try:
        second = normalize_pages(read(scale), engine, fmt, settings)
    except DocumentRejectedError as exc:  # e.g. the enlarged page ran past tesseract's time budget
        logger.info("second OCR look at %.1fx skipped: %s", scale, exc.message)
        return first
    second = agreed_readings(first, second)
    if not _clean(second, settings):
        return first
    second.raw["SecondLook"] = {"dpi": SECOND_LOOK_DPI, "scale": round(scale, 3)}  # not a Textract key
    return second


def agreed_readings(first: Extraction, second: Extraction) -> Extraction:
    """The second reading, where both readings give a header text the same value, with the more
    confident of the two: small print (a footer confirming the letterhead) may be read well only
    once. Amounts are never carried over: they must add up in the second reading on their own.
    """
    confidence = dict(second.invoice.confidence)
    settled: set[str] = set()
    for name in AGREEING_FIELDS:
        value = getattr(second.invoice, name)
        if value is not None and value == getattr(first.invoice, name) and name in first.invoice.confidence:
            confidence[name] = max(confidence.get(name, 0.0), first.invoice.confidence[name])
            if f"GUESSED:{name}" not in first.reasons:
                settled.add(f"GUESSED:{name}")  # the first reading read it, the second only guessed it
    second.invoice = second.invoice.model_copy(update={"confidence": confidence})
    second.reasons = [reason for reason in second.reasons if reason not in settled]
    return second


def _clean(extraction: Extraction, settings: ExtractionSettings) -> bool:
    try:
        invoice = normalize_amounts(extraction.invoice)
    except DocumentRejectedError:
        return False
    return validate(invoice, extraction.reasons, settings).status is Status.PROCESSED


def _dpi_of(image: Image.Image) -> float:
    """The scan's resolution as if its short side were A4's: image metadata often says 72 dpi
    whatever the scan, and a page-sized estimate errs only for small paper (receipts), upwards.
    """
    return min(image.width, image.height) / A4_SHORT_SIDE_INCHES


def normalize_pages(pages: list[Page], engine: str, fmt: DocumentFormat, settings: ExtractionSettings) -> Extraction:
    readings = pair_fields(pages)
    candidates = readings + guesses_for(readings, pages)
    response = expense_response(pages, candidates, engine)
    inner = extract_textract(response, settings)
    reasons = list(inner.reasons)
    # A guess or a vetoed reading is for a person to confirm, whatever the confidence threshold.
    reasons += dict.fromkeys(
        f"GUESSED:{FIELD_OF_TYPE[c.type]}" for c in candidates if c.guess and c.type in FIELD_OF_TYPE
    )
    invoice = inner.invoice
    # An OCR misread digit keeps a high word confidence. The total is trusted only when the
    # totals check can run on it (net + tax = total); otherwise a person looks at it.
    if TESSERACT in engine and invoice.totalAmount is not None and (invoice.subtotal is None or invoice.tax is None):
        reasons.append("UNCORROBORATED:totalAmount")
    return Extraction(fmt, engine, response, invoice, reasons)
