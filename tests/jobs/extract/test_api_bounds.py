"""Values beyond the invoice model's bounds make a document MALFORMED, never an internal error."""

from __future__ import annotations

from pathlib import Path

from jobs.contract import FailureCode, Status
from jobs.extract import extract_document

UBL = Path(__file__).resolve().parents[3] / "tests" / "data" / "corpus" / "einvoice" / "ubl" / "EN16931_Einfach.ubl.xml"


def test_an_oversized_invoice_number_in_xml_is_malformed() -> None:
    body = UBL.read_bytes().replace(b"<cbc:ID>471102</cbc:ID>", b"<cbc:ID>" + b"9" * 5000 + b"</cbc:ID>", 1)
    outcome = extract_document(body, "invoice.xml")
    assert outcome.validation.status == Status.FAILED
    assert outcome.validation.errorCode == FailureCode.MALFORMED
    assert "invoiceNumber" in (outcome.validation.errorMessage or "")
