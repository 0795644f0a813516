"""Plain PDFs (the Factur-X corpus with its XML removed) through the text layer, and engine routing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from ocr_helpers import expected_headers, invoice_pdfs
from PIL import Image

from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, extract_document
from jobs.extract.ocr.degrade import HEADER_FIELDS, header_mismatches, strip_attachments

LOCAL = ExtractionSettings(ocr_engine="local")
TEXTRACT = ExtractionSettings(ocr_engine="textract")


@pytest.mark.parametrize("pdf", invoice_pdfs(), ids=lambda p: p.stem)
@pytest.mark.parametrize("settings", [LOCAL, TEXTRACT], ids=["local", "textract"])
def test_text_layer_reads_every_header_field(corpus: Path, pdf: Path, settings: ExtractionSettings) -> None:
    outcome = extract_document(strip_attachments(pdf.read_bytes()), pdf.name, settings)
    assert header_mismatches(outcome.invoice, expected_headers()[pdf.stem]) == {}
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons
    assert (outcome.format, outcome.engine) == (DocumentFormat.PDF, "pdf-text-layer")
    assert outcome.raw["ExpenseDocuments"][0]["SummaryFields"]  # the AnalyzeExpense shape, kept for result.json


def test_text_layer_accuracy_is_40_of_40(corpus: Path) -> None:
    correct = 0
    for pdf in invoice_pdfs():
        outcome = extract_document(strip_attachments(pdf.read_bytes()), pdf.name, LOCAL)
        correct += len(HEADER_FIELDS) - len(header_mismatches(outcome.invoice, expected_headers()[pdf.stem]))
    print(f"text layer: {correct}/{len(HEADER_FIELDS) * len(invoice_pdfs())} header fields")
    assert correct == 40


def test_embedded_xml_still_wins_over_the_text_layer(corpus: Path) -> None:
    pdf = invoice_pdfs()[0]
    outcome = extract_document(pdf.read_bytes(), pdf.name, LOCAL)
    assert outcome.format is DocumentFormat.FACTURX_PDF


def test_off_keeps_needs_ocr(corpus: Path) -> None:
    pdf = invoice_pdfs()[0]
    outcome = extract_document(strip_attachments(pdf.read_bytes()), pdf.name)
    assert outcome.validation.errorCode is FailureCode.NEEDS_OCR
    assert outcome.engine == "none"


def _scan_pdf() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (600, 800), "white").save(out, format="PDF")
    return out.getvalue()


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (60, 80), "white").save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "fmt"), [(_scan_pdf(), DocumentFormat.PDF), (_png(), DocumentFormat.IMAGE)], ids=["image-only-pdf", "png"]
)
def test_textract_engine_leaves_scans_needs_ocr_for_the_ingest(data: bytes, fmt: DocumentFormat) -> None:
    outcome = extract_document(data, "scan", TEXTRACT)
    assert outcome.validation.status is Status.FAILED
    assert (outcome.validation.errorCode, outcome.format) == (FailureCode.NEEDS_OCR, fmt)


def test_broken_image_is_malformed_not_internal() -> None:
    outcome = extract_document(b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "broken.png", LOCAL)
    assert (outcome.validation.errorCode, outcome.format) == (FailureCode.MALFORMED, DocumentFormat.IMAGE)
