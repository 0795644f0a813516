"""The second OCR look: a low-resolution scan that would go to review is read again enlarged,
and that reading is kept only when it is clean; header texts both readings agree on keep the
more confident reading (jobs.extract.ocr.engine).
"""

from __future__ import annotations

import pytest
from ocr_helpers import page_of

from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.extract import ExtractionSettings, OcrEngine
from jobs.extract.ocr import engine
from jobs.extract.ocr.lines import Page
from jobs.extract.result import DocumentRejectedError

SETTINGS = ExtractionSettings(ocr_engine=OcrEngine.LOCAL)
HEADER = (
    ("Seller:", "ACME Trading GmbH"),
    ("Invoice No:", "INV-2026-001"),
    ("Invoice Date:", "March 15, 2026"),
    ("Subtotal", "100.00 EUR"),
    ("VAT 19%", "19.00 EUR"),
)


def clean_page() -> Page:
    return page_of(*HEADER, ("Total", "119.00 EUR"))


def misread_total_page() -> Page:
    return page_of(*HEADER, ("Total", "19.00 EUR"))  # the leading "1" lost at low resolution


class Reader:
    """Stands in for the scanned pages: hands out one page per scale and records the scales asked."""

    def __init__(self, *pages: Page) -> None:
        self.pages = list(pages)
        self.scales: list[float] = []

    def __call__(self, scale: float) -> list[Page]:
        self.scales.append(scale)
        return [self.pages[len(self.scales) - 1]]


def look(reader: Reader, dpi: float, scanned_pages: int = 1) -> engine.Extraction:
    return engine.read_with_second_look(reader, engine.TESSERACT, DocumentFormat.IMAGE, SETTINGS, dpi, scanned_pages)


def test_a_clean_first_reading_is_read_once() -> None:
    reader = Reader(clean_page())
    outcome = look(reader, 150)
    assert reader.scales == [1.0]
    assert outcome.invoice.totalAmount is not None and "SecondLook" not in outcome.raw


def test_a_low_resolution_scan_that_would_go_to_review_is_read_again_at_300_dpi_and_kept_when_clean() -> None:
    reader = Reader(misread_total_page(), clean_page())
    outcome = look(reader, 150)
    assert reader.scales == [1.0, 2.0]
    assert str(outcome.invoice.totalAmount) == "119.00"
    assert outcome.raw["SecondLook"] == {"dpi": 300.0, "scale": 2.0}


@pytest.mark.parametrize(("dpi", "scanned_pages"), [(300, 1), (250, 1), (150, 0), (150, 11)])
def test_a_scan_near_300_dpi_a_text_layer_or_a_long_scan_gets_no_second_look(dpi: float, scanned_pages: int) -> None:
    reader = Reader(misread_total_page(), clean_page())
    look(reader, dpi, scanned_pages)
    assert reader.scales == [1.0]


def test_a_thumbnail_is_enlarged_at_most_three_times() -> None:
    reader = Reader(misread_total_page(), clean_page())
    look(reader, 40)
    assert reader.scales == [1.0, 3.0]


def test_a_second_reading_that_is_not_clean_is_discarded() -> None:
    first, second = misread_total_page(), page_of(*HEADER[1:], ("Total", "119.00 EUR"))  # seller lost
    outcome = look(Reader(first, second), 150)
    assert str(outcome.invoice.totalAmount) == "19.00" and "SecondLook" not in outcome.raw


def test_a_second_look_past_the_time_budget_keeps_the_first_reading() -> None:
    def read(scale: float) -> list[Page]:
        if scale > 1:
            raise DocumentRejectedError(FailureCode.NEEDS_OCR, "local OCR failed: timeout", DocumentFormat.IMAGE)
        return [misread_total_page()]

    outcome = engine.read_with_second_look(read, engine.TESSERACT, DocumentFormat.IMAGE, SETTINGS, 150, 1)
    assert str(outcome.invoice.totalAmount) == "19.00"


def test_readings_that_agree_on_a_header_text_keep_its_more_confident_reading_and_never_amounts() -> None:
    first = engine.normalize_pages(
        [page_of(*HEADER, ("Total", "19.00 EUR"))], engine.TESSERACT, DocumentFormat.IMAGE, SETTINGS
    )
    second = engine.normalize_pages(
        [page_of(*HEADER, ("Total", "119.00 EUR"), confidence=50.0)], engine.TESSERACT, DocumentFormat.IMAGE, SETTINGS
    )
    agreed = engine.agreed_readings(first, second).invoice.confidence
    assert agreed["vendorName"] == agreed["invoiceNumber"] == first.invoice.confidence["invoiceNumber"] > 50
    assert agreed["totalAmount"] == 50.0


def test_readings_that_disagree_keep_the_second_readings_confidence() -> None:
    first = engine.normalize_pages(
        [page_of(("Invoice No:", "INV-2026-007"))], engine.TESSERACT, DocumentFormat.IMAGE, SETTINGS
    )
    second = engine.normalize_pages(
        [page_of(("Invoice No:", "INV-2026-001"), confidence=50.0)], engine.TESSERACT, DocumentFormat.IMAGE, SETTINGS
    )
    assert engine.agreed_readings(first, second).invoice.confidence["invoiceNumber"] == 50.0
