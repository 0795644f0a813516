"""Validation rules: required fields, confidence, conflicts, dates, currency, EN 16931 totals."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from extract_helpers import EINVOICE, complete_fields, line_item, summary_field, textract_bytes, textract_doc

from jobs.contract.invoice import DocumentFormat, DocumentType, Invoice, LineItem
from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, extract_document
from jobs.extract.validate import totals_reasons, validate


def _reasons(data: bytes, settings: ExtractionSettings | None = None) -> list[str]:
    return extract_document(data, "doc", settings).validation.reasons


def test_complete_confident_textract_receipt_is_processed() -> None:
    outcome = extract_document(textract_bytes(textract_doc(complete_fields())), "r.json")
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons
    assert outcome.invoice is not None
    assert outcome.invoice.currency == "EUR"  # settled by the € sign
    assert outcome.invoice.totalAmount == Decimal("1190.00")
    assert outcome.format is DocumentFormat.TEXTRACT_EXPENSE and outcome.engine == "textract-json"


def test_async_get_expense_analysis_shape_is_accepted() -> None:
    data = textract_bytes(textract_doc(complete_fields()), JobStatus="SUCCEEDED", NextToken=None)
    assert extract_document(data, "r.json").validation.status is Status.PROCESSED


def test_paginated_async_results_in_a_list_are_merged() -> None:
    page1 = json.loads(textract_bytes(textract_doc(complete_fields()), JobStatus="SUCCEEDED"))
    page2 = json.loads(textract_bytes(textract_doc(complete_fields()), JobStatus="SUCCEEDED"))
    reasons = _reasons(json.dumps([page1, page2]).encode())
    assert reasons == ["MULTIPLE_DOCUMENTS"]


@pytest.mark.parametrize("field", ["INVOICE_RECEIPT_ID", "INVOICE_RECEIPT_DATE", "VENDOR_NAME", "TOTAL"])
def test_each_missing_required_field_is_named(field: str) -> None:
    names = {
        "INVOICE_RECEIPT_ID": "invoiceNumber",
        "INVOICE_RECEIPT_DATE": "invoiceDate",
        "VENDOR_NAME": "vendorName",
        "TOTAL": "totalAmount",
    }
    assert f"MISSING_FIELD:{names[field]}" in _reasons(textract_bytes(textract_doc(complete_fields(**{field: ""}))))


def test_currency_is_never_defaulted() -> None:
    fields = complete_fields(SUBTOTAL="1,000.00", TAX="190.00", TOTAL="1,190.00")
    outcome = extract_document(textract_bytes(textract_doc(fields)), "r.json")
    assert outcome.invoice is not None and outcome.invoice.currency is None
    assert outcome.validation.reasons == ["MISSING_FIELD:currency"]


def test_bare_dollar_sign_follows_the_configured_policy() -> None:
    data = textract_bytes(textract_doc(complete_fields(SUBTOTAL="$1,000.00", TAX="$190.00", TOTAL="$1,190.00")))
    assert extract_document(data, "r").invoice.currency == "USD"  # type: ignore[union-attr]
    strict = extract_document(data, "r", ExtractionSettings(dollar_sign_currency=None))
    assert "MISSING_FIELD:currency" in strict.validation.reasons


def test_textract_currency_code_beats_symbols() -> None:
    fields = complete_fields(TOTAL="")
    fields.append(summary_field("TOTAL", "$1,190.00", currency="CAD"))
    invoice = extract_document(textract_bytes(textract_doc(fields)), "r").invoice
    assert invoice is not None and invoice.currency == "CAD"


def test_low_confidence_threshold_is_configurable() -> None:
    fields = complete_fields(VENDOR_NAME="")
    fields.append(summary_field("VENDOR_NAME", "ACME GmbH", confidence=70.0))
    data = textract_bytes(textract_doc(fields))
    assert _reasons(data) == ["LOW_CONFIDENCE:vendorName"]
    assert _reasons(data, ExtractionSettings(confidence_threshold=60)) == []


def test_low_confidence_on_optional_fields_is_not_a_reason() -> None:
    fields = complete_fields()
    fields.append(summary_field("RECEIVER_NAME", "Someone", confidence=10.0))
    assert _reasons(textract_bytes(textract_doc(fields))) == []


def test_repeated_equal_values_are_not_a_conflict() -> None:
    fields = [*complete_fields(), summary_field("TOTAL", "1.190,00 €", confidence=85.0)]
    assert _reasons(textract_bytes(textract_doc(fields))) == []


def test_conflicting_values_pick_the_most_confident_and_are_reported() -> None:
    fields = [
        *complete_fields(TOTAL=""),
        summary_field("TOTAL", "1.190,00 €", confidence=95.0),
        summary_field("TOTAL", "999,00 €", confidence=80.0),
    ]
    outcome = extract_document(textract_bytes(textract_doc(fields)), "r")
    assert outcome.invoice is not None and outcome.invoice.totalAmount == Decimal("1190.00")
    assert outcome.validation.reasons == ["CONFLICTING_VALUES:totalAmount"]


def test_vendor_from_name_grouped_as_vendor() -> None:
    fields = [
        *complete_fields(VENDOR_NAME=""),
        summary_field("NAME", "Buyer Inc", groups=("RECEIVER",)),
        summary_field("NAME", "Seller AG\n-", groups=("VENDOR",)),
    ]
    outcome = extract_document(textract_bytes(textract_doc(fields)), "r")
    assert outcome.invoice is not None
    assert (outcome.invoice.vendorName, outcome.invoice.buyerName) == ("Seller AG", "Buyer Inc")
    assert outcome.validation.status is Status.PROCESSED


def test_vendor_name_field_beats_grouped_name() -> None:
    fields = [*complete_fields(), summary_field("NAME", "Other Name", groups=("VENDOR",))]
    invoice = extract_document(textract_bytes(textract_doc(fields)), "r").invoice
    assert invoice is not None and invoice.vendorName == "ACME GmbH"


def test_ambiguous_date_is_reported_not_guessed() -> None:
    outcome = extract_document(textract_bytes(textract_doc(complete_fields(INVOICE_RECEIPT_DATE="03/04/2021"))), "r")
    assert outcome.invoice is not None and outcome.invoice.invoiceDate is None
    assert outcome.validation.reasons == ["AMBIGUOUS_DATE", "MISSING_FIELD:invoiceDate"]


def test_a_sibling_date_settles_the_day_month_order() -> None:
    fields = [*complete_fields(INVOICE_RECEIPT_DATE="03/04/2021"), summary_field("DUE_DATE", "04/30/2021")]
    outcome = extract_document(textract_bytes(textract_doc(fields)), "r")
    assert outcome.invoice is not None
    assert outcome.invoice.invoiceDate is not None and outcome.invoice.invoiceDate.isoformat() == "2021-03-04"
    assert outcome.validation.status is Status.PROCESSED


def test_unparseable_value_is_invalid() -> None:
    assert "INVALID_VALUE:totalAmount" in _reasons(textract_bytes(textract_doc(complete_fields(TOTAL="see attached"))))


def test_line_items_from_line_item_groups_with_expense_row_fallback() -> None:
    lines = [
        line_item(ITEM="Widget", QUANTITY="2", UNIT_PRICE="250,00 €", PRICE="500,00 €"),
        line_item(EXPENSE_ROW="Gadget 1 500,00 €", PRICE="500,00 €"),
    ]
    outcome = extract_document(textract_bytes(textract_doc(complete_fields(), lines)), "r")
    assert outcome.invoice is not None
    assert outcome.invoice.lineItems == [
        LineItem(
            lineNumber=1,
            description="Widget",
            quantity=Decimal(2),
            unitPrice=Decimal("250.00"),
            amount=Decimal("500.00"),
        ),
        LineItem(lineNumber=2, description="Gadget 1 500,00 €", amount=Decimal("500.00")),
    ]
    assert outcome.validation.status is Status.PROCESSED  # lines sum to the subtotal (BR-CO-10)


def test_lines_not_adding_up_to_subtotal_is_a_totals_mismatch() -> None:
    lines = [line_item(ITEM="Widget", PRICE="400,00 €")]
    assert _reasons(textract_bytes(textract_doc(complete_fields(), lines))) == ["TOTALS_MISMATCH"]


def test_total_not_equal_subtotal_plus_tax_is_a_totals_mismatch() -> None:
    assert _reasons(textract_bytes(textract_doc(complete_fields(TAX="100,00 €")))) == ["TOTALS_MISMATCH"]


def test_multiple_documents_are_merged_and_flagged() -> None:
    first = textract_doc(complete_fields(TOTAL="", TAX="", SUBTOTAL=""), [line_item(ITEM="A", PRICE="1.000,00 €")])
    second = textract_doc([summary_field("TOTAL", "1.190,00 €"), summary_field("INVOICE_RECEIPT_ID", "INV-1")])
    outcome = extract_document(textract_bytes(first, second), "r")
    assert outcome.validation.reasons == ["MULTIPLE_DOCUMENTS"]
    assert outcome.invoice is not None and outcome.invoice.totalAmount == Decimal("1190.00")


def test_multiple_documents_with_different_numbers_conflict() -> None:
    first = textract_doc(complete_fields())
    second = textract_doc(complete_fields(INVOICE_RECEIPT_ID="INV-2"))
    assert set(_reasons(textract_bytes(first, second))) == {"MULTIPLE_DOCUMENTS", "CONFLICTING_VALUES:invoiceNumber"}


# --------------------------------------------------------------------- EN 16931 totals (XML)


def _mutated(corpus: Path, folder: str, name: str, old: str, new: str) -> bytes:
    data = (EINVOICE / folder / name).read_bytes()
    assert old.encode() in data
    return data.replace(old.encode(), new.encode(), 1)


@pytest.mark.parametrize(
    ("folder", "old", "new"),
    [
        # BR-CO-10: sum of line net amounts ≠ line total
        ("cii", "<ram:LineTotalAmount>202.70</", "<ram:LineTotalAmount>203.70</"),
        ("ubl", '<cbc:LineExtensionAmount currencyID="EUR">202.7<', '<cbc:LineExtensionAmount currencyID="EUR">203.7<'),
        # BR-CO-13: tax exclusive ≠ line total − allowances + charges
        ("cii", "<ram:TaxBasisTotalAmount>193.77<", "<ram:TaxBasisTotalAmount>199.57<"),
        ("ubl", '<cbc:TaxExclusiveAmount currencyID="EUR">193.77<', '<cbc:TaxExclusiveAmount currencyID="EUR">199.57<'),
        # BR-CO-15: tax inclusive ≠ tax exclusive + tax
        ("cii", "<ram:GrandTotalAmount>215.07<", "<ram:GrandTotalAmount>216.07<"),
        ("ubl", '<cbc:TaxInclusiveAmount currencyID="EUR">215.07<', '<cbc:TaxInclusiveAmount currencyID="EUR">216.07<'),
        # BR-CO-11: stated allowance total ≠ sum of document-level allowances
        ("cii", "<ram:AllowanceTotalAmount>14.73<", "<ram:AllowanceTotalAmount>13.73<"),
        ("ubl", '<cbc:Amount currencyID="EUR">13.73<', '<cbc:Amount currencyID="EUR">12.73<'),
    ],
)
def test_broken_totals_in_rabatte_are_a_totals_mismatch(corpus: Path, folder: str, old: str, new: str) -> None:
    name = f"EN16931_Rabatte.{folder}.xml"
    assert _reasons(_mutated(corpus, folder, name, old, new)) == ["TOTALS_MISMATCH"]


def test_missing_currency_in_xml(corpus: Path) -> None:
    data = _mutated(
        corpus, "ubl", "EN16931_Einfach.ubl.xml", "<cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>", ""
    )
    assert _reasons(data) == ["MISSING_FIELD:currency"]


def test_garbled_amount_in_xml_is_invalid_not_fatal(corpus: Path) -> None:
    data = _mutated(
        corpus, "cii", "EN16931_Einfach.cii.xml", "<ram:GrandTotalAmount>529.87<", "<ram:GrandTotalAmount>NaN<"
    )
    outcome = extract_document(data, "x.xml")
    assert outcome.validation.status is Status.REVIEW_REQUIRED
    assert {"INVALID_VALUE:totalAmount", "MISSING_FIELD:totalAmount"} <= set(outcome.validation.reasons)


def test_ubl_credit_note_is_read(corpus: Path) -> None:
    data = (EINVOICE / "ubl" / "EN16931_Einfach.ubl.xml").read_text(encoding="utf-8")
    data = (
        data.replace("schema:xsd:Invoice-2", "schema:xsd:CreditNote-2")
        .replace("<Invoice ", "<CreditNote ")
        .replace("</Invoice>", "</CreditNote>")
        .replace("InvoiceTypeCode>380<", "CreditNoteTypeCode>381<")
        .replace("cbc:InvoiceTypeCode", "cbc:CreditNoteTypeCode")
        .replace("cac:InvoiceLine", "cac:CreditNoteLine")
        .replace("cbc:InvoicedQuantity", "cbc:CreditedQuantity")
    )
    outcome = extract_document(data.encode(), "cn.xml")
    assert outcome.invoice is not None
    assert outcome.invoice.documentType is DocumentType.CREDIT_NOTE
    assert outcome.validation.status is Status.PROCESSED
    assert [line.quantity for line in outcome.invoice.lineItems] == [Decimal(20), Decimal(50)]


def test_cii_credit_note_type_code(corpus: Path) -> None:
    data = _mutated(corpus, "cii", "EN16931_Einfach.cii.xml", "<ram:TypeCode>380<", "<ram:TypeCode>381<")
    assert extract_document(data, "x").invoice.documentType is DocumentType.CREDIT_NOTE  # type: ignore[union-attr]


# -------------------------------------------------------------------------- normalized JSON


def test_normalized_json_round_trips_from_an_extraction(corpus: Path) -> None:
    original = extract_document((EINVOICE / "cii" / "EN16931_Rabatte.cii.xml").read_bytes(), "x").invoice
    assert original is not None
    outcome = extract_document(original.model_dump_json().encode(), "x.json")
    assert outcome.format is DocumentFormat.NORMALIZED_JSON and outcome.engine == "normalized-json"
    assert outcome.invoice == original
    assert outcome.validation.status is Status.PROCESSED


def test_normalized_json_numbers_stay_exact() -> None:
    data = (
        b'{"invoiceNumber": "1", "invoiceDate": "2026-03-15", "vendorName": "V", "currency": "EUR", '
        b'"subtotal": 0.1, "tax": 0.2, "totalAmount": 0.3}'
    )
    outcome = extract_document(data, "x.json")
    assert outcome.invoice is not None and outcome.invoice.totalAmount == Decimal("0.30")
    assert outcome.validation.status is Status.PROCESSED  # 0.1 + 0.2 == 0.3 only without floats


def test_normalized_json_without_currency_needs_review() -> None:
    data = b'{"invoiceNumber": "1", "invoiceDate": "2026-03-15", "vendorName": "V", "totalAmount": "10"}'
    assert _reasons(data) == ["MISSING_FIELD:currency"]


def test_normalized_json_low_confidence() -> None:
    data = (
        b'{"invoiceNumber": "1", "invoiceDate": "2026-03-15", "vendorName": "V", "currency": "EUR", '
        b'"totalAmount": "10", "confidence": {"invoiceNumber": 12.5}}'
    )
    assert _reasons(data) == ["LOW_CONFIDENCE:invoiceNumber"]


# ------------------------------------------------------------------------ validate() directly


def test_totals_rules_include_document_level_allowances_and_charges() -> None:
    invoice = Invoice(
        subtotal=Decimal("100.00"),
        allowanceTotal=Decimal("10.00"),
        chargeTotal=Decimal("5.00"),
        tax=Decimal("19.95"),
        totalAmount=Decimal("114.95"),
        lineItems=[LineItem(lineNumber=1, amount=Decimal("100.00"))],
    )
    assert totals_reasons(invoice, Decimal("0.01")) == []
    assert totals_reasons(invoice.model_copy(update={"chargeTotal": None}), Decimal("0.01")) == ["TOTALS_MISMATCH"]


def test_reasons_are_unique_and_status_follows_them() -> None:
    result = validate(Invoice(), ["AMBIGUOUS_DATE", "AMBIGUOUS_DATE"], ExtractionSettings())
    assert result.reasons.count("AMBIGUOUS_DATE") == 1
    assert result.status is Status.REVIEW_REQUIRED
    assert {
        f"MISSING_FIELD:{f}" for f in ("invoiceNumber", "invoiceDate", "vendorName", "currency", "totalAmount")
    } <= set(result.reasons)
