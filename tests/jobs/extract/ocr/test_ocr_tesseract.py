"""Scans through the local engine: one clean render in the default run, the acceptance under `slow`.

The acceptance forms are generated here from the Factur-X corpus (never committed): clean
150-dpi renders and noisy ones (rotation, blur, noise, JPEG 70), each invoice as one multi-page
TIFF. Accuracy counts the five header fields against einvoice/expected.json whatever the status;
separately, no document may be PROCESSED with a wrong header value.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from ocr_helpers import FACTURX, expected_headers, invoice_pdfs
from pypdf import PdfReader, PdfWriter

from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, extract_document
from jobs.extract.ocr.degrade import (
    HEADER_FIELDS,
    clean_pages,
    header_mismatches,
    jpeg,
    multipage_tiff,
    noisy_pages,
    png,
    strip_attachments,
)

LOCAL = ExtractionSettings(ocr_engine="local")
pytestmark = pytest.mark.usefixtures("tesseract")


def _accuracy(form: str) -> tuple[int, list[str]]:
    make = {"clean": clean_pages, "noisy": noisy_pages}[form]
    correct, wrongly_processed = 0, []
    for pdf in invoice_pdfs():
        outcome = extract_document(multipage_tiff(make(pdf.read_bytes())), pdf.name, LOCAL)
        wrong = header_mismatches(outcome.invoice, expected_headers()[pdf.stem])
        correct += len(HEADER_FIELDS) - len(wrong)
        if wrong and outcome.validation.status is Status.PROCESSED:
            wrongly_processed.append(f"{pdf.stem}: {wrong}")
        print(f"{form} {pdf.stem}: {outcome.validation.status} {outcome.validation.reasons} wrong={wrong}")
    print(f"{form}: {correct}/{len(HEADER_FIELDS) * len(invoice_pdfs())} header fields")
    return correct, wrongly_processed


def test_clean_render_of_one_invoice(corpus: Path) -> None:
    pdf = FACTURX / "EN16931_Physiotherapeut.pdf"
    outcome = extract_document(multipage_tiff(clean_pages(pdf.read_bytes())), pdf.name, LOCAL)
    assert (outcome.format, outcome.engine) == (DocumentFormat.IMAGE, "tesseract")
    assert header_mismatches(outcome.invoice, expected_headers()[pdf.stem]) == {}
    assert outcome.validation.status is not Status.FAILED
    fields = outcome.raw["ExpenseDocuments"][0]["SummaryFields"]
    # Honest confidences: tesseract's word confidences, not a flat invented number.
    assert all(0 <= f["ValueDetection"]["Confidence"] <= 100 for f in fields)
    assert len({f["ValueDetection"]["Confidence"] for f in fields}) > 1


def test_single_jpeg_page_reads_the_header(corpus: Path) -> None:
    pdf = FACTURX / "EN16931_Einfach.pdf"
    first_page = noisy_pages(pdf.read_bytes())[0]
    outcome = extract_document(jpeg(first_page), "scan.jpg", LOCAL)
    assert outcome.invoice is not None
    assert (outcome.invoice.invoiceNumber, str(outcome.invoice.invoiceDate)) == ("471102", "2018-03-05")
    # Page 1 has no totals: never PROCESSED without them.
    assert outcome.validation.status is Status.REVIEW_REQUIRED
    assert "MISSING_FIELD:totalAmount" in outcome.validation.reasons


def test_blank_scan_is_review_required_not_processed(corpus: Path) -> None:
    pdf = FACTURX / "EN16931_Einfach.pdf"
    blank = clean_pages(pdf.read_bytes())[0].point(lambda _: 255)
    outcome = extract_document(png(blank), "blank.png", LOCAL)
    assert outcome.validation.status is Status.REVIEW_REQUIRED


def test_page_timeout_fails_needs_ocr(corpus: Path) -> None:
    pdf = FACTURX / "EN16931_Einfach.pdf"
    settings = ExtractionSettings(ocr_engine="local", ocr_page_timeout_s=0.01)
    outcome = extract_document(png(clean_pages(pdf.read_bytes())[0]), "slow.png", settings)
    assert outcome.validation.errorCode is FailureCode.NEEDS_OCR
    assert "local OCR failed" in (outcome.validation.errorMessage or "")


@pytest.mark.slow
def test_clean_renders_at_least_38_of_40(corpus: Path) -> None:
    correct, wrongly_processed = _accuracy("clean")
    assert wrongly_processed == []
    assert correct >= 38


@pytest.mark.slow
def test_noisy_renders_at_least_32_of_40(corpus: Path) -> None:
    correct, wrongly_processed = _accuracy("noisy")
    assert wrongly_processed == []
    assert correct >= 32


def test_pdf_with_one_scanned_page_ocrs_only_that_page(corpus: Path) -> None:
    pdf = FACTURX / "EN16931_Physiotherapeut.pdf"
    text_pdf = PdfReader(io.BytesIO(strip_attachments(pdf.read_bytes())))
    scanned = io.BytesIO()
    clean_pages(pdf.read_bytes())[1].save(scanned, format="PDF", resolution=150)
    writer = PdfWriter()
    writer.add_page(text_pdf.pages[0])
    writer.add_page(PdfReader(scanned).pages[0])
    mixed = io.BytesIO()
    writer.write(mixed)

    outcome = extract_document(mixed.getvalue(), pdf.name, LOCAL)
    assert (outcome.format, outcome.engine) == (DocumentFormat.PDF, "pdf-text-layer+tesseract")
    assert header_mismatches(outcome.invoice, expected_headers()[pdf.stem]) == {}
    pages = {f["PageNumber"] for f in outcome.raw["ExpenseDocuments"][0]["SummaryFields"]}
    assert pages == {1, 2}  # the header from the text layer, the totals from the scanned page
    textract_mode = extract_document(mixed.getvalue(), pdf.name, ExtractionSettings(ocr_engine="textract"))
    assert textract_mode.validation.errorCode is FailureCode.NEEDS_OCR
