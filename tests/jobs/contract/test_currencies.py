"""Withdrawn ISO 4217 codes name the money of invoices written before their withdrawal: a
backfilled 2021 invoice in HRK is PROCESSED, a 2024 one goes to review.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from jobs.contract import Invoice
from jobs.contract.currencies import ISO_4217_CODES, WITHDRAWN_CODES, in_use_on, is_iso_currency
from jobs.contract.status import Status
from jobs.errors import ReviewRefusedError
from jobs.extract import extract_document
from jobs.extract.settings import ExtractionSettings
from jobs.review.corrections import apply, parse

NOW = datetime(2026, 12, 1, tzinfo=UTC)
UBL = Path(__file__).resolve().parents[2] / "data" / "corpus" / "einvoice" / "ubl" / "EN16931_Einfach.ubl.xml"


def test_a_withdrawn_code_is_in_use_before_its_withdrawal_only() -> None:
    assert WITHDRAWN_CODES["HRK"] == date(2023, 1, 1)
    assert in_use_on("HRK", date(2022, 12, 31)) and not in_use_on("HRK", date(2023, 1, 1))
    assert not in_use_on("HRK", None)  # an undated invoice cannot tell
    assert in_use_on("EUR", None) and in_use_on("EUR", date(1999, 1, 1))
    assert in_use_on("DEM", date(2001, 12, 31)) and not in_use_on("DEM", date(2002, 1, 1))
    assert not in_use_on("ABC", date(2021, 1, 1)) and not is_iso_currency("ABC")
    assert is_iso_currency("HRK") and "HRK" not in ISO_4217_CODES
    # A code is active or withdrawn, never both (an active code's date would be ignored).
    assert not set(WITHDRAWN_CODES) & ISO_4217_CODES


def _in_kuna(issued: str) -> bytes:
    data = UBL.read_bytes()
    assert b"<cbc:IssueDate>2018-03-05<" in data and b"EUR" in data
    return data.replace(b"EUR", b"HRK").replace(b"<cbc:IssueDate>2018-03-05<", f"<cbc:IssueDate>{issued}<".encode())


def test_the_corpus_invoice_is_processed_as_it_stands() -> None:
    assert extract_document(UBL.read_bytes(), "x.xml").validation.status == Status.PROCESSED


@pytest.mark.parametrize(
    ("issued", "status", "reasons"),
    [
        ("2021-06-15", Status.PROCESSED, []),
        ("2022-12-31", Status.PROCESSED, []),
        ("2023-01-01", Status.REVIEW_REQUIRED, ["CURRENCY_WITHDRAWN"]),
        ("2024-06-15", Status.REVIEW_REQUIRED, ["CURRENCY_WITHDRAWN"]),
    ],
)
def test_an_hrk_invoice_is_processed_before_the_euro_and_reviewed_after(
    issued: str, status: Status, reasons: list[str]
) -> None:
    outcome = extract_document(_in_kuna(issued), "x.xml")
    assert outcome.invoice is not None and outcome.invoice.currency == "HRK"
    assert outcome.invoice.invoiceDate == date.fromisoformat(issued)
    assert (outcome.validation.status, outcome.validation.reasons) == (status, reasons)


def test_a_reviewer_may_set_a_withdrawn_code_the_invoice_date_allows() -> None:
    invoice = Invoice(
        invoiceNumber="R-1",
        invoiceDate=date(2021, 6, 15),
        vendorName="Zagreb d.o.o.",
        currency="EUR",
        totalAmount=Decimal("119.00"),
    )

    def correct(*pairs: str, on: Invoice = invoice) -> Status:
        fixed = apply(on, [], parse(list(pairs)), settings=ExtractionSettings(), actor="reviewer:a", now=NOW)
        return fixed.validation.status

    assert correct("currency=HRK") == Status.PROCESSED
    # The kuna on an invoice after the euro's arrival: the reviewer's value is refused.
    with pytest.raises(ReviewRefusedError, match="'HRK' is an ISO 4217 code withdrawn on 2023-01-01"):
        correct("currency=HRK", "date=2024-06-15")
    in_kuna = invoice.model_copy(update={"currency": "HRK", "invoiceDate": date(2024, 6, 15)})
    with pytest.raises(ReviewRefusedError, match="withdrawn"):
        correct("date=2023-02-01", on=in_kuna)
    assert correct("date=2021-06-15", on=in_kuna) == Status.PROCESSED  # the date misread, corrected
