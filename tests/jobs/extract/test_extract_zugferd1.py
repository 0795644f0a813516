"""ZUGFeRD 1.0 (CrossIndustryDocument) as XML and inside a PDF/A-3, per profile, credit note included."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from extract_helpers import EINVOICE, REPO_ROOT
from pypdf import PdfReader, PdfWriter

from jobs.contract.invoice import DocumentFormat
from jobs.contract.item import ResultDocument, SourceObject
from jobs.contract.status import Status
from jobs.extract import extract_document
from jobs.extract.ocr.degrade import strip_attachments

ZUGFERD1 = REPO_ROOT / "tests" / "data" / "zugferd1"
EXPECTED = json.loads((ZUGFERD1 / "expected.json").read_text())["invoices"]


def zugferd_pdf(xml: bytes, name: str = "ZUGFeRD-invoice.xml") -> bytes:
    """A printed invoice (a corpus PDF without its own XML) carrying `xml` the ZUGFeRD 1.0 way."""
    page = strip_attachments((EINVOICE / "facturx-pdf" / "EN16931_Einfach.pdf").read_bytes())
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(page)))
    writer.add_attachment(name, xml)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _check(outcome, expected: dict) -> None:
    invoice = outcome.invoice
    assert invoice is not None, outcome.validation
    assert outcome.validation.status == expected["status"], outcome.validation.reasons
    assert (
        invoice.profile,
        str(invoice.documentType),
        invoice.invoiceNumber,
        invoice.invoiceDate.isoformat(),
        invoice.vendorName,
        invoice.currency,
        str(invoice.totalAmount),
        len(invoice.lineItems),
    ) == (
        expected["profile"],
        expected["documentType"],
        expected["invoiceNumber"],
        expected["invoiceDate"],
        expected["vendorName"],
        expected["currency"],
        expected["totalAmount"],
        expected["lineItems"],
    )
    assert invoice.specification is not None and invoice.specification.startswith("urn:ferd:CrossIndustryDocument")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_zugferd1_xml_is_read_per_profile(name: str) -> None:
    outcome = extract_document((ZUGFERD1 / f"{name}.xml").read_bytes(), f"{name}.xml")
    assert (outcome.format, outcome.engine) == (DocumentFormat.ZUGFERD1, "zugferd1")
    _check(outcome, EXPECTED[name])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_zugferd1_embedded_in_a_pdf_is_read_and_says_so(name: str) -> None:
    outcome = extract_document(zugferd_pdf((ZUGFERD1 / f"{name}.xml").read_bytes()), f"{name}.pdf")
    assert (outcome.format, outcome.engine) == (DocumentFormat.ZUGFERD1_PDF, "zugferd1")
    assert outcome.raw["attachment"] == "zugferd-invoice.xml" and outcome.raw["xmlFormat"] == "ZUGFERD1"
    _check(outcome, EXPECTED[name])


def test_the_stored_result_names_the_standard_and_the_profile() -> None:
    outcome = extract_document(zugferd_pdf((ZUGFERD1 / "ZUGFeRD1_EXTENDED.xml").read_bytes()), "z.pdf")
    now = datetime(2026, 1, 2, tzinfo=UTC)
    source = SourceObject(bucket="b", key="raw/u/d/z.pdf", etag="e", size=1, lastModified=now, format=outcome.format)
    result = ResultDocument(
        userId="u",
        documentId="d",
        source=source,
        engine=outcome.engine,
        extraction=outcome.raw,
        invoice=outcome.invoice,
        validation=outcome.validation,
        createdAt=now,
        processedAt=now,
        pipelineVersion="t",
    )
    stored = json.loads(result.to_json_bytes())
    assert stored["source"]["format"] == "ZUGFERD1_PDF"
    assert stored["invoice"]["profile"] == "EXTENDED"
    assert stored["invoice"]["specification"] == "urn:ferd:CrossIndustryDocument:invoice:1p0:extended"


def test_extended_allowances_charges_and_prepayment_are_checked() -> None:
    outcome = extract_document((ZUGFERD1 / "ZUGFeRD1_EXTENDED.xml").read_bytes(), "e.xml")
    invoice = outcome.invoice
    assert invoice is not None and outcome.validation.status is Status.PROCESSED
    assert (
        str(invoice.allowanceTotal),
        str(invoice.chargeTotal),
        str(invoice.prepaidAmount),
        str(invoice.amountDue),
    ) == ("23.00", "10.00", "100.00", "447.40")
    broken = (ZUGFERD1 / "ZUGFeRD1_EXTENDED.xml").read_bytes().replace(b">547.40<", b">574.40<")
    assert "TOTALS_MISMATCH" in extract_document(broken, "e.xml").validation.reasons


def test_an_unknown_1p0_profile_is_still_read() -> None:
    xml = (ZUGFERD1 / "ZUGFeRD1_BASIC.xml").read_bytes().replace(b"invoice:1p0:basic<", b"invoice:1p0:custom<")
    outcome = extract_document(xml, "x.xml")
    assert outcome.validation.status is Status.PROCESSED and outcome.invoice is not None
    assert outcome.invoice.profile is None and outcome.invoice.specification.endswith(":custom")


def test_corpus_is_there(corpus: Path) -> None:
    assert len(EXPECTED) == 4 and all((ZUGFERD1 / f"{name}.xml").is_file() for name in EXPECTED)
