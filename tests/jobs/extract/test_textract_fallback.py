"""The Textract-fallback decision on real outcomes: text-layer PDFs with a header field missing only."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
from extract_helpers import EINVOICE, TEXTRACT

from jobs.contract.invoice import ExtractionOutcome, ValidationResult
from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, OcrEngine, extract_document
from jobs.extract.fallback import SECOND_OPINION, second_opinion, wants_textract_fallback
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


def _under_review(reasons: list[str]):
    outcome = extract_document(strip_attachments(TEXT_PDF.read_bytes()), "x.pdf", SETTINGS)
    return outcome.model_copy(
        update={
            "validation": outcome.validation.model_copy(update={"status": Status.REVIEW_REQUIRED, "reasons": reasons})
        }
    )


@pytest.mark.parametrize(
    "reasons",
    [["LOW_CONFIDENCE:vendorName"], ["CONFLICTING_VALUES:totalAmount"], ["TOTALS_MISMATCH"], ["AMBIGUOUS_DATE"]],
)
def test_every_review_another_reader_could_settle_wants_the_second_opinion(reasons: list[str]) -> None:
    assert wants_textract_fallback(_under_review(reasons), enabled=True)


@pytest.mark.parametrize("reasons", [["NEGATIVE_TOTAL"], ["MULTIPLE_DOCUMENTS", "MISSING_FIELD:vendorName"]])
def test_a_review_the_page_itself_gives_does_not(reasons: list[str]) -> None:
    # Textract would read the same negative total, the same several invoices: paid for nothing.
    assert not wants_textract_fallback(_under_review(reasons), enabled=True)


def _textract_reading(corpus_file: str = "invoice-expense-response.json", vendor: str | None = None):
    response = json.loads((TEXTRACT / corpus_file).read_text())
    if vendor is not None:
        response["ExpenseDocuments"][0]["SummaryFields"].append(_vendor_field(vendor))
    return extract_document(json.dumps(response).encode(), "textract.json", SETTINGS).model_copy(
        update={"engine": "textract"}
    )


def _vendor_field(name: str) -> dict:
    """The one field the recorded response lacks (it has no VENDOR_NAME), as Textract writes one."""
    return {
        "Type": {"Text": "VENDOR_NAME", "Confidence": 99.0},
        "ValueDetection": {"Text": name, "Confidence": 99.0},
        "PageNumber": 1,
    }


def _agreeing_reading(local: ExtractionOutcome, **changes: object) -> ExtractionOutcome:
    """A clean Textract reading of the same page: the text layer's header values (`changes` on
    top), the missing total read, and the recorded response's raw output.
    """
    assert local.invoice is not None
    recorded = _textract_reading(vendor="Lieferant GmbH")
    invoice = local.invoice.model_copy(update={"totalAmount": Decimal("529.87"), **changes})
    return recorded.model_copy(update={"invoice": invoice, "validation": ValidationResult(status=Status.PROCESSED)})


def test_a_clean_textract_reading_that_agrees_wins_and_says_why() -> None:
    local = extract_document(_pdf_without_total(), "p1.pdf", SETTINGS)
    textract = _agreeing_reading(local)
    kept = second_opinion(local, textract)
    assert kept.engine == "textract" and kept.invoice == textract.invoice
    assert kept.validation.status is Status.PROCESSED
    record = kept.raw[SECOND_OPINION]
    assert record["used"] is True and record["winner"] == "textract" and "clean" in record["reason"]
    assert record["readings"]["pdf-text-layer"]["status"] == "REVIEW_REQUIRED"
    assert "MISSING_FIELD:totalAmount" in record["readings"]["pdf-text-layer"]["reasons"]
    assert record["readings"]["textract"] == {"status": "PROCESSED", "reasons": []}
    assert kept.raw["ExpenseDocuments"]  # the kept reading's raw output is still all there


def test_a_clean_textract_reading_that_contradicts_the_text_layer_goes_to_review() -> None:
    local = extract_document(_pdf_without_total(), "p1.pdf", SETTINGS)
    assert local.invoice is not None and local.invoice.invoiceNumber
    textract = _agreeing_reading(local, invoiceNumber="ORDER-4711", vendorName=local.invoice.vendorName.upper())
    kept = second_opinion(local, textract)
    # Another invoice number is a second value, not a settlement; the vendor in capitals is the same name.
    assert kept.engine == local.engine and kept.invoice == local.invoice
    assert kept.validation.status is Status.REVIEW_REQUIRED
    assert kept.validation.reasons == [*local.validation.reasons, "CONFLICTING_VALUES:invoiceNumber"]
    record = kept.raw[SECOND_OPINION]
    assert record["used"] is False and record["winner"] == "pdf-text-layer"
    assert "invoiceNumber" in record["reason"] and "vendorName" not in record["reason"]


def test_a_textract_reading_that_is_not_clean_leaves_the_local_one_and_says_why() -> None:
    local = extract_document(_pdf_without_total(), "p1.pdf", SETTINGS)
    kept = second_opinion(local, _textract_reading())  # no vendor: Textract's would go to review too
    assert kept.engine == local.engine and kept.invoice == local.invoice and kept.validation == local.validation
    record = kept.raw[SECOND_OPINION]
    assert record["used"] is False and record["winner"] == "pdf-text-layer"
    assert "MISSING_FIELD:vendorName" in record["reason"]
    assert record["readings"]["textract"]["reasons"] == ["MISSING_FIELD:vendorName"]


def test_textract_not_asked_leaves_the_local_reading_and_says_why() -> None:
    local = extract_document(_pdf_without_total(), "p1.pdf", SETTINGS)
    kept = second_opinion(local, None, not_asked="its 1 Textract page(s) would pass the night's cap of 0")
    record = kept.raw[SECOND_OPINION]
    assert record["used"] is False and "night's cap" in record["reason"] and "textract" not in record["readings"]
    assert kept.validation == local.validation


def test_the_setting_is_off_by_default_and_read_from_the_environment() -> None:
    assert JobSettings().extraction.textract_fallback is False
    assert JobSettings.from_env({"DOCUFLOW_TEXTRACT_FALLBACK": "true"}).extraction.textract_fallback is True
    json.dumps(JobSettings().model_dump(mode="json"))
