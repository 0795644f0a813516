"""The Textract-fallback decision on real outcomes: text-layer PDFs with a header field missing only."""

from __future__ import annotations

import io
import json

import pytest
from extract_helpers import EINVOICE, TEXTRACT

from jobs.extract import ExtractionSettings, OcrEngine, extract_document
from jobs.extract.fallback import wants_textract_fallback
from jobs.extract.ocr.degrade import strip_attachments
from jobs.settings import JobSettings

TEXT_PDF = EINVOICE / "facturx-pdf" / "EN16931_Einfach.pdf"
SETTINGS = ExtractionSettings(ocr_engine=OcrEngine.TEXTRACT)


def _pdf_without_total() -> bytes:
    from pypdf import PdfReader, PdfWriter

    reader = PdfReader(io.BytesIO(strip_attachments(TEXT_PDF.read_bytes())))
    writer = PdfWriter()
    writer.add_page(reader.pages[0])  # page 1 carries the header, the totals are on page 2
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_text_layer_pdf_missing_a_header_field_wants_textract_when_enabled() -> None:
    outcome = extract_document(_pdf_without_total(), "p1.pdf", SETTINGS)
    assert "MISSING_FIELD:totalAmount" in outcome.validation.reasons
    assert wants_textract_fallback(outcome, enabled=True)
    assert not wants_textract_fallback(outcome, enabled=False)


@pytest.mark.parametrize("source", ["complete-text-layer", "einvoice", "textract-json", "scan"])
def test_everything_else_does_not(source: str) -> None:
    data = {
        "complete-text-layer": lambda: strip_attachments(TEXT_PDF.read_bytes()),
        "einvoice": TEXT_PDF.read_bytes,
        "textract-json": (TEXTRACT / "invoice-expense-response.json").read_bytes,  # vendor missing, but no PDF
        "scan": lambda: b"\x89PNG\r\n\x1a\n" + bytes(64),
    }[source]()
    assert not wants_textract_fallback(extract_document(data, "x", SETTINGS), enabled=True)


def test_a_review_for_a_conflict_only_does_not() -> None:
    outcome = extract_document(strip_attachments(TEXT_PDF.read_bytes()), "x.pdf", SETTINGS)
    conflicted = outcome.model_copy(
        update={
            "validation": outcome.validation.model_copy(
                update={"status": "REVIEW_REQUIRED", "reasons": ["CONFLICTING_VALUES:totalAmount"]}
            )
        }
    )
    assert not wants_textract_fallback(conflicted, enabled=True)


def test_the_setting_is_off_by_default_and_read_from_the_environment() -> None:
    assert JobSettings().textract_fallback is False
    assert JobSettings.from_env({"DOCUFLOW_TEXTRACT_FALLBACK": "true"}).textract_fallback is True
    json.dumps(JobSettings().model_dump(mode="json"))
