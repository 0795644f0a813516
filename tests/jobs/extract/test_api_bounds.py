"""Values beyond the invoice model's bounds or a DynamoDB Number's make a document MALFORMED, never INTERNAL."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from jobs.contract import DocumentFormat, FailureCode, Status
from jobs.contract.item import dynamodb_number_problem
from jobs.extract import extract_document

UBL = Path(__file__).resolve().parents[3] / "tests" / "data" / "corpus" / "einvoice" / "ubl" / "EN16931_Einfach.ubl.xml"


def test_an_oversized_invoice_number_in_xml_is_malformed() -> None:
    body = UBL.read_bytes().replace(b"<cbc:ID>471102</cbc:ID>", b"<cbc:ID>" + b"9" * 5000 + b"</cbc:ID>", 1)
    outcome = extract_document(body, "invoice.xml")
    assert outcome.validation.status == Status.FAILED
    assert outcome.validation.errorCode == FailureCode.MALFORMED
    assert "invoiceNumber" in (outcome.validation.errorMessage or "")


def _with_total(total: str) -> bytes:
    return UBL.read_bytes().replace(
        b'<cbc:TaxInclusiveAmount currencyID="EUR">529.87</cbc:TaxInclusiveAmount>',
        f'<cbc:TaxInclusiveAmount currencyID="EUR">{total}</cbc:TaxInclusiveAmount>'.encode(),
        1,
    )


@pytest.mark.parametrize(
    ("total", "problem"),
    [
        ("1" + "0" * 400, "outside DynamoDB's range"),  # 1E+400 written out, as XML decimals must be
        ("0." + "0" * 140 + "1", "outside DynamoDB's range"),  # below 1E-130
        ("9" * 40, "40 significant digits (DynamoDB keeps 38)"),
        ("12345678901234567890123456789", "31 significant digits"),  # 29 digits, 31 with its cents
    ],
)
def test_a_total_dynamodb_or_the_totals_checks_cannot_hold_is_malformed_with_the_field_named(
    total: str, problem: str
) -> None:
    outcome = extract_document(_with_total(total), "invoice.xml")
    assert (outcome.validation.status, outcome.validation.errorCode) == (Status.FAILED, FailureCode.MALFORMED)
    assert outcome.validation.errorMessage is not None
    assert outcome.validation.errorMessage.startswith("totalAmount is out of range")
    assert problem in outcome.validation.errorMessage
    assert outcome.format is DocumentFormat.UBL


@pytest.mark.parametrize("total", ["1E+400", "1e400", "12345678901234567890123456789", "1E-131"])
def test_normalized_json_totals_out_of_range_are_malformed_not_internal(total: str) -> None:
    body = json.dumps({"invoiceNumber": "A-1", "currency": "EUR", "totalAmount": total}).encode()
    outcome = extract_document(body, "invoice.json")
    assert outcome.validation.errorCode == FailureCode.MALFORMED, outcome.validation.errorMessage
    assert "totalAmount" in (outcome.validation.errorMessage or "")


def test_a_line_amount_out_of_range_names_the_line() -> None:
    body = json.dumps(
        {
            "invoiceNumber": "A-1",
            "totalAmount": "10",
            "lineItems": [{"lineNumber": 1, "amount": "10"}, {"lineNumber": 2, "amount": "9" * 39}],
        }
    ).encode()
    outcome = extract_document(body, "invoice.json")
    assert outcome.validation.errorCode == FailureCode.MALFORMED
    assert (outcome.validation.errorMessage or "").startswith("lineItems[1].amount is out of range")


def test_the_largest_storable_totals_still_pass_and_fit_the_item() -> None:
    outcome = extract_document(_with_total("99999999999999999999999999.99"), "invoice.xml")  # 28 digits
    assert outcome.validation.status is Status.REVIEW_REQUIRED  # TOTALS_MISMATCH, not a failure
    assert outcome.invoice is not None and dynamodb_number_problem(outcome.invoice.totalAmount) is None


@pytest.mark.parametrize("zero", ["-0", "-0.00", "0"])
def test_negative_zero_is_zero(zero: str) -> None:
    body = json.dumps(
        {
            "invoiceNumber": "A-1",
            "currency": "EUR",
            "vendorName": "V",
            "invoiceDate": "2026-01-02",
            "totalAmount": zero,
            "tax": "0",
            "subtotal": zero,
        }
    ).encode()
    outcome = extract_document(body, "invoice.json")
    assert outcome.invoice is not None and outcome.validation.status is Status.PROCESSED
    total = outcome.invoice.totalAmount
    assert total == Decimal(0) and str(total) == "0.00" and not total.is_signed()
    assert str(outcome.invoice.subtotal) == "0.00"
