"""A PDF whose embedded invoice XML cannot be used is read from its pages, and says why."""

from __future__ import annotations

import io

import pytest
from extract_helpers import EINVOICE
from pypdf import PdfReader, PdfWriter

from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, OcrEngine, extract_document
from jobs.extract.ocr.degrade import strip_attachments

LOCAL = ExtractionSettings(ocr_engine=OcrEngine.LOCAL)
TEXTRACT = ExtractionSettings(ocr_engine=OcrEngine.TEXTRACT)
PRINTED = EINVOICE / "facturx-pdf" / "EN16931_Einfach.pdf"


def with_attachment(xml: bytes, name: str = "factur-x.xml") -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(strip_attachments(PRINTED.read_bytes()))))
    writer.add_attachment(name, xml)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("xml", "code"),
    [
        (b"<rsm:CrossIndustryInvoice xmlns:rsm='urn:x'><unclosed>", FailureCode.MALFORMED),
        (b"<Order xmlns='urn:some:other:standard'><ID>1</ID></Order>", FailureCode.UNSUPPORTED_FORMAT),
    ],
    ids=["broken-xml", "unknown-standard"],
)
@pytest.mark.parametrize("settings", [LOCAL, TEXTRACT], ids=["local", "textract"])
def test_the_page_is_read_when_the_attachment_cannot_be(
    xml: bytes, code: FailureCode, settings: ExtractionSettings
) -> None:
    outcome = extract_document(with_attachment(xml), "invoice.pdf", settings)
    assert (outcome.format, outcome.engine) == (DocumentFormat.PDF, "pdf-text-layer")
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons
    invoice = outcome.invoice
    assert invoice is not None
    assert (invoice.invoiceNumber, str(invoice.totalAmount), invoice.vendorName) == (
        "471102",
        "529.87",
        "Lieferant GmbH",
    )
    embedded = outcome.raw["EmbeddedInvoice"]  # result.json keeps why the XML was not used
    assert embedded["attachment"] == "factur-x.xml" and embedded["used"] is False
    assert embedded["failureCode"] == code and embedded["reason"].startswith("embedded factur-x.xml: ")


def test_without_page_reading_the_attachment_failure_stands() -> None:
    outcome = extract_document(with_attachment(b"<x><unclosed>"), "invoice.pdf")  # ocr_engine off
    assert outcome.validation.errorCode is FailureCode.MALFORMED
    assert outcome.format is DocumentFormat.FACTURX_PDF
    assert "embedded factur-x.xml" in (outcome.validation.errorMessage or "")


def test_a_hostile_attachment_still_fails_the_document() -> None:
    xxe = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'
    outcome = extract_document(with_attachment(xxe), "invoice.pdf", LOCAL)
    assert outcome.validation.errorCode is FailureCode.UNSAFE_XML


def test_a_page_that_cannot_be_read_either_names_both_reasons() -> None:
    from PIL import Image

    scan = io.BytesIO()
    Image.new("RGB", (600, 800), "white").save(scan, format="PDF")
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(scan.getvalue())))
    writer.add_attachment("factur-x.xml", b"<x><unclosed>")
    out = io.BytesIO()
    writer.write(out)
    outcome = extract_document(out.getvalue(), "scan.pdf", TEXTRACT)  # scans wait for the ingest's Textract
    assert outcome.validation.errorCode is FailureCode.NEEDS_OCR
    assert "the embedded invoice was not used: embedded factur-x.xml" in (outcome.validation.errorMessage or "")
