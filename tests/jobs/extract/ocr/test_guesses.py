"""The reviewer's starting point: guesses for the header fields no rule read (jobs.extract.ocr.guesses).

A guess fills a field the document lacked, is capped below the review threshold, and is marked
GUESSED:<field>, so the document goes to review whatever the threshold is set to; a reviewer who
confirms or corrects the field settles it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from ocr_helpers import page_of

from jobs.contract.invoice import DocumentFormat
from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, OcrEngine
from jobs.extract.ocr.engine import TEXT_LAYER, normalize_pages
from jobs.extract.ocr.fields import pair_fields
from jobs.extract.ocr.guesses import guesses_for
from jobs.extract.ocr.labels import GUESS_CONFIDENCE_CAP
from jobs.extract.validate import validate
from jobs.review.corrections import apply

LOCAL = ExtractionSettings(ocr_engine=OcrEngine.LOCAL)
# Rows every page below shares: a number, a date and a seller the rules read.
_HEADER = (("Invoice No:", "INV-2026-77"), ("Invoice Date:", "2026-03-01"), ("Seller:", "Acme Widgets Ltd"))


def _read(*rows: str | tuple[str, ...], settings: ExtractionSettings = LOCAL):  # type: ignore[no-untyped-def]
    extraction = normalize_pages([page_of(*rows, confidence=99.0)], TEXT_LAYER, DocumentFormat.PDF, settings)
    return extraction, validate(extraction.invoice, extraction.reasons, settings)


def test_the_largest_amount_is_the_total_guess_and_the_document_goes_to_review() -> None:
    extraction, result = _read(*_HEADER, ("Widgets", "100.00 EUR"), ("Shipping", "19.00 EUR"), ("", "119.00 EUR"))
    assert extraction.invoice.totalAmount == Decimal("119.00")
    assert extraction.invoice.confidence["totalAmount"] <= GUESS_CONFIDENCE_CAP
    assert result.status is Status.REVIEW_REQUIRED
    assert {"GUESSED:totalAmount", "LOW_CONFIDENCE:totalAmount"} <= set(result.reasons)


def test_a_guess_goes_to_review_whatever_the_threshold() -> None:
    anything_goes = ExtractionSettings(ocr_engine=OcrEngine.LOCAL, confidence_threshold=0)
    _, result = _read(*_HEADER, ("Widgets", "119.00 EUR"), settings=anything_goes)
    assert result.status is Status.REVIEW_REQUIRED and result.reasons == ["GUESSED:totalAmount"]


def test_a_labelled_amount_due_is_the_total_guess_over_a_larger_amount() -> None:
    page = page_of(*_HEADER, ("Previous balance", "500.00 EUR"), ("Amount due", "119.00 EUR"), confidence=99.0)
    guesses = {g.type: g.value_text for g in guesses_for(pair_fields([page]), [page])}
    assert guesses == {"TOTAL": "119.00 EUR"}


def test_the_first_date_that_is_no_due_date_and_a_number_beside_the_document_word() -> None:
    page = page_of(
        ("Due date:", "2026-04-01"),
        ("Our invoice", "AB-12345"),
        "Leeds office 2026-03-01 (copy)",
        ("Rechnungsadresse", "Hauptstr. 5"),
        ("Total", "119.00 EUR"),
        confidence=99.0,
    )
    guesses = {g.type: g for g in guesses_for(pair_fields([page]), [page])}
    assert guesses["INVOICE_RECEIPT_DATE"].value_text == "2026-03-01"
    assert guesses["INVOICE_RECEIPT_ID"].value_text == "AB-12345"
    assert all(g.guess and g.confidence <= GUESS_CONFIDENCE_CAP for g in guesses.values())
    assert "TOTAL" not in guesses  # read by its label, not guessed


def test_nothing_is_guessed_over_what_the_rules_read() -> None:
    page = page_of(*_HEADER, ("Total", "119.00 EUR"), confidence=99.0)
    assert guesses_for(pair_fields([page]), [page]) == []
    extraction, result = _read(*_HEADER, ("Total", "119.00 EUR"))
    assert result.status is Status.PROCESSED and not any(r.startswith("GUESSED:") for r in extraction.reasons)


def test_a_reviewer_who_confirms_the_guess_settles_it() -> None:
    extraction, result = _read(*_HEADER, ("Widgets", "119.00 EUR"))
    confirmed = apply(
        extraction.invoice,
        result.reasons,
        {"totalAmount": "119.00"},
        settings=LOCAL,
        actor="reviewer@example.com",
        now=datetime(2026, 12, 4, tzinfo=UTC),
    )
    assert confirmed.validation.status is Status.PROCESSED, confirmed.validation.reasons
