"""A reviewer's values are read, checked and validated exactly as an extraction's are (pure)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from jobs.contract import DocumentType, Invoice, LineItem, Status
from jobs.errors import ReviewRefusedError
from jobs.extract.settings import ExtractionSettings
from jobs.review.corrections import Corrected, apply, parse

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
ACTOR = "reviewer:alice"
SETTINGS = ExtractionSettings()
MACHINE = Invoice(
    invoiceNumber="INV-1",
    invoiceDate=date(2026, 3, 1),
    vendorName=None,
    currency="EUR",
    subtotal=Decimal("100.00"),
    tax=Decimal("19.00"),
    totalAmount=Decimal("119.00"),
    lineItems=[LineItem(lineNumber=1, amount=Decimal("100.00"))],
    confidence={"invoiceNumber": 55.0, "totalAmount": 99.0},
)


def correct(*pairs: str, invoice: Invoice = MACHINE, findings: list[str] | None = None) -> Corrected:
    reasons = findings if findings is not None else ["MISSING_FIELD:vendorName", "LOW_CONFIDENCE:invoiceNumber"]
    return apply(invoice, reasons, parse(list(pairs)), settings=SETTINGS, actor=ACTOR, now=NOW)


def test_a_correction_that_settles_every_reason_validates_clean_and_records_before_and_after() -> None:
    fixed = correct("vendor=  Acme   GmbH ", "number=INV-1b")
    assert fixed.invoice.vendorName == "Acme GmbH"  # collapsed as the readers collapse names
    assert fixed.validation.status == Status.PROCESSED and fixed.validation.reasons == []
    assert [(c.field, c.before, c.after, c.by, c.at) for c in fixed.corrections] == [
        ("vendorName", None, "Acme GmbH", ACTOR, NOW),
        ("invoiceNumber", "INV-1", "INV-1b", ACTOR, NOW),
    ]
    # The reviewer's value is sure: the low confidence of the machine's reading is gone.
    assert "invoiceNumber" not in fixed.invoice.confidence and fixed.invoice.confidence["totalAmount"] == 99.0


def test_values_are_read_like_a_document_reads_them() -> None:
    fixed = correct("date=15.03.2026", "total=1.337,50 €", "vendor=Acme")
    assert fixed.invoice.invoiceDate == date(2026, 3, 15)
    assert fixed.invoice.totalAmount == Decimal("1337.50")
    # 1337.50 is not 100 + 19: the totals rule of the extraction applies to the corrected invoice.
    assert fixed.validation.reasons == ["LOW_CONFIDENCE:invoiceNumber", "TOTALS_MISMATCH"]
    assert correct("currency=jpy", "total=1200", "vendor=A").invoice.totalAmount == Decimal("1200")


def test_names_lose_invisible_characters_at_their_edges_as_the_readers_do() -> None:
    fixed = correct("vendor=\u200b Acme\u00a0GmbH\u2060", "number=\ufeffINV-1b")
    assert (fixed.invoice.vendorName, fixed.invoice.invoiceNumber) == ("Acme GmbH", "INV-1b")


def test_amounts_are_padded_to_the_currency_as_extraction_pads_them() -> None:
    assert str(correct("total=119", "vendor=A").invoice.totalAmount) == "119.00"


def test_a_reader_finding_about_a_corrected_field_goes_and_the_others_stay() -> None:
    findings = ["INVALID_VALUE:invoiceDate", "AMBIGUOUS_DATE", "MULTIPLE_DOCUMENTS", "CONFLICTING_VALUES:currency"]
    fixed = correct("date=2026-03-02", "vendor=A", findings=findings)
    assert fixed.validation.reasons == [
        "MULTIPLE_DOCUMENTS",
        "CONFLICTING_VALUES:currency",
        "LOW_CONFIDENCE:invoiceNumber",
    ]


def test_an_unchanged_value_is_no_correction() -> None:
    assert [c.field for c in correct("number=INV-1", "vendor=A").corrections] == ["vendorName"]


@pytest.mark.parametrize(
    ("pairs", "says"),
    [
        (["date=2026-02-30"], "no such date"),
        (["date=31/02/2026"], "no such date"),
        (["date=03/04/2026"], "YYYY-MM-DD"),  # day and month could be either way round
        (["date=yesterday"], "not a date"),
        (["total=twelve"], "not a number"),
        ([f"total=1{'0' * 40}"], "out of range"),
        (["total=100 USD"], "in USD, the invoice in EUR"),
        (["currency=EURO"], "ISO 4217"),
        (["currency=ABC"], "'ABC' is not an ISO 4217 currency code"),  # three letters, but no currency
        (["currency=HRK"], "ISO 4217"),  # withdrawn when Croatia took the euro
        (["vendor=\u200b"], r"vendorName '\\u200b' has no visible characters"),
        (["vendor=\ufeff \u2060\u00a0"], "vendorName .* has no visible characters"),
        (["number=\u200e\x07"], "invoiceNumber .* has no visible characters"),
        (["vendor=   "], "cannot be empty"),
        ([f"vendor={'x' * 600}"], "vendorName"),
        (["colour=blue"], "unknown field 'colour'"),
        (["vendor"], "unknown field"),
        (["vendor=A", "vendorName=B"], "set twice"),
        ([], "nothing to correct"),
    ],
)
def test_a_value_the_extraction_would_not_accept_is_refused_naming_it(pairs: list[str], says: str) -> None:
    with pytest.raises(ReviewRefusedError, match=says):
        correct(*pairs)


def test_a_negative_total_on_an_invoice_is_taken_and_keeps_its_reason_for_the_reviewer_to_settle() -> None:
    plain = MACHINE.model_copy(update={"subtotal": None, "tax": None, "typeCode": "380"})
    fixed = correct("total=-119.00", "vendor=A", invoice=plain, findings=[])
    assert fixed.invoice.totalAmount == Decimal("-119.00")
    assert fixed.validation.reasons == ["LOW_CONFIDENCE:invoiceNumber", "NEGATIVE_TOTAL"]


def test_a_corrected_invoice_may_total_below_zero() -> None:
    corrected = MACHINE.model_copy(update={"typeCode": "384", "subtotal": None, "tax": None, "confidence": {}})
    fixed = correct("total=-119.00", "vendor=A", invoice=corrected, findings=[])
    assert fixed.validation.status == Status.PROCESSED and fixed.validation.reasons == []


def test_a_credit_note_may_total_below_zero() -> None:
    credit = MACHINE.model_copy(update={"documentType": DocumentType.CREDIT_NOTE, "subtotal": None, "tax": None})
    fixed = correct("total=-119.00", "vendor=A", invoice=credit, findings=[])
    assert fixed.invoice.totalAmount == Decimal("-119.00")
    assert "NEGATIVE_TOTAL" not in fixed.validation.reasons


def test_a_document_without_an_invoice_can_be_corrected_from_nothing() -> None:
    fixed = apply(
        None,
        [],
        parse(["vendor=A", "number=1", "date=2026-01-02", "currency=EUR", "total=5"]),
        settings=SETTINGS,
        actor=ACTOR,
        now=NOW,
    )
    assert fixed.validation.status == Status.PROCESSED and len(fixed.corrections) == 5
