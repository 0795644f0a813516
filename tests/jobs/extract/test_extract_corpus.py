"""Acceptance: the shared corpus yields the values in its expected.json files."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from extract_helpers import EINVOICE, TEXTRACT

from jobs.contract.invoice import DocumentFormat
from jobs.contract.status import Status
from jobs.extract import extract_document

FORMS = {
    "facturx-pdf": ("{}.pdf", DocumentFormat.FACTURX_PDF),
    "cii": ("{}.cii.xml", DocumentFormat.CII),
    "ubl": ("{}.ubl.xml", DocumentFormat.UBL),
}


def _expected(folder: Path) -> dict:
    path = folder / "expected.json"
    return json.loads(path.read_text()) if path.is_file() else {}


EINVOICES = _expected(EINVOICE).get("invoices", {})
TEXTRACTS = {k: v for k, v in _expected(TEXTRACT).items() if not k.startswith("_")}
TEXTRACT_REASONS = {
    "invoice-expense-response.json": {"MISSING_FIELD:vendorName"},
    "analyzeExpenseResponse-multipage.json": {"LOW_CONFIDENCE:vendorName", "MULTIPLE_DOCUMENTS"},
    "test_trp2_expense_sample2.json": {"LOW_CONFIDENCE:vendorName"},
    "test_trp2_expense_sample4.json": {"CONFLICTING_VALUES:totalAmount"},
}


def test_corpus_is_complete(corpus: Path) -> None:
    assert len(EINVOICES) == 8
    assert set(TEXTRACTS) == set(TEXTRACT_REASONS)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(EINVOICES))
def test_einvoice_forms_yield_expected_values(corpus: Path, name: str, form: str) -> None:
    pattern, document_format = FORMS[form]
    path = EINVOICE / form / pattern.format(name)
    outcome = extract_document(path.read_bytes(), path.name)
    expected = EINVOICES[name]
    invoice = outcome.invoice
    assert invoice is not None, outcome.validation
    assert outcome.format is document_format
    assert outcome.validation.status == expected["status"], outcome.validation.reasons
    assert invoice.invoiceNumber == expected["invoiceNumber"]
    assert invoice.invoiceDate is not None and invoice.invoiceDate.isoformat() == expected["invoiceDate"]
    assert invoice.vendorName == expected["vendorName"]
    assert invoice.currency == expected["currency"]
    assert str(invoice.totalAmount) == expected["totalAmount"]
    assert len(invoice.lineItems) == expected["lineItems"]
    json.dumps(outcome.raw)  # raw must be JSON-compatible as it is written into result.json


@pytest.mark.parametrize("name", sorted(EINVOICES))
def test_three_forms_of_one_invoice_normalize_identically(corpus: Path, name: str) -> None:
    invoices = [
        extract_document((EINVOICE / form / pattern.format(name)).read_bytes(), name).invoice
        for form, (pattern, _) in FORMS.items()
    ]
    # UBL writes "473" where CII writes "473.00"; padding makes the serialized forms equal too.
    # The specification each form declares is its own (the UBL ones name Peppol BIS 3).
    form_specific = {"lineItems", "specification", "profile"}
    dumped = [invoice.model_dump(mode="json") for invoice in invoices if invoice is not None]
    assert len(dumped) == 3
    for other in dumped[1:]:
        assert {k: v for k, v in other.items() if k not in form_specific} == {
            k: v for k, v in dumped[0].items() if k not in form_specific
        }
        assert [line["amount"] for line in other["lineItems"]] == [line["amount"] for line in dumped[0]["lineItems"]]


def test_prepaid_invoices_keep_amount_due_apart_from_total(corpus: Path) -> None:
    for name, due in (("EN16931_1_Teilrechnung", "147.65"), ("EN16931_Rabatte", "165.07")):
        invoice = extract_document((EINVOICE / "ubl" / f"{name}.ubl.xml").read_bytes(), name).invoice
        assert invoice is not None
        assert invoice.amountDue == Decimal(due)
        assert invoice.prepaidAmount == Decimal("50.00")


def test_document_level_allowances_and_charges_are_read(corpus: Path) -> None:
    for form, (pattern, _) in FORMS.items():
        invoice = extract_document((EINVOICE / form / pattern.format("EN16931_Rabatte")).read_bytes(), "r").invoice
        assert invoice is not None
        assert (invoice.subtotal, invoice.allowanceTotal, invoice.chargeTotal, invoice.taxExclusiveAmount) == (
            Decimal("202.70"),
            Decimal("14.73"),
            Decimal("5.80"),
            Decimal("193.77"),
        )


def test_self_billed_gutschrift_is_an_invoice_not_a_credit_note(corpus: Path) -> None:
    invoice = extract_document((EINVOICE / "cii" / "EN16931_Gutschrift.cii.xml").read_bytes(), "g").invoice
    assert invoice is not None and invoice.documentType == "INVOICE"


@pytest.mark.parametrize("name", sorted(TEXTRACT_REASONS))
def test_textract_responses(corpus: Path, name: str) -> None:
    outcome = extract_document((TEXTRACT / name).read_bytes(), name)
    expected = TEXTRACTS[name]
    invoice = outcome.invoice
    assert invoice is not None
    assert outcome.format is DocumentFormat.TEXTRACT_EXPENSE
    assert outcome.validation.status == Status.REVIEW_REQUIRED == expected["status"]
    assert TEXTRACT_REASONS[name] <= set(outcome.validation.reasons), outcome.validation.reasons
    for field in ("invoiceNumber", "invoiceDate", "dueDate", "totalAmount", "subtotal", "tax"):
        if field in expected:
            assert str(getattr(invoice, field)) == expected[field], field
    if "lineItems" in expected:
        assert len(invoice.lineItems) == expected["lineItems"]
    assert "TOTALS_MISMATCH" not in outcome.validation.reasons


def test_textract_multipage_merges_both_documents(corpus: Path) -> None:
    invoice = extract_document((TEXTRACT / "analyzeExpenseResponse-multipage.json").read_bytes(), "m").invoice
    assert invoice is not None
    assert len(invoice.lineItems) == 8
    assert sum(line.amount for line in invoice.lineItems if line.amount) == invoice.totalAmount
    assert invoice.currency == "USD"  # from Textract's own Currency.Code
    assert invoice.vendorName == "META"  # "META\n-": the stray OCR dash is dropped
