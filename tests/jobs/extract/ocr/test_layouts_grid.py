"""The third generated layout set (tests/data/layouts_grid): label grids the first two sets lack.

Six templates in EN, DE, FR, NL, IT and ES (see the set's render.py); `column` and `letter` are
held out. The floors the reader reached over each split, nothing PROCESSED with a wrong header
value on either, and the rules it was built to hold, one by one on synthetic pages.
"""

from __future__ import annotations

import sys

import pytest
from ocr_helpers import REPO_ROOT, score

from jobs.extract.ocr.fields import pair_fields
from jobs.extract.ocr.labels import GUESS_CONFIDENCE_CAP
from jobs.extract.ocr.lines import Page, Word, rebuild_lines
from jobs.extract.ocr.page_locale import date_order
from jobs.extract.parsing import DateOrder

sys.path.insert(0, str(REPO_ROOT))
from tests.data.layouts_grid.render import SPLITS, build_cases, cases, render

# Measured 3 Dec 2026 (docs/ocr.md): development 240/240 fields, 48/48 PROCESSED (227 and 34
# before); held out 120/120, 24/24 (114 and 24 with 6 wrong before; see docs/ocr.md for how).
FLOORS = {"development": {"fields": 240, "processed": 48}, "held-out": {"fields": 120, "processed": 24}}


def test_cases_json_is_what_render_builds() -> None:
    assert [c.expected for c in cases()] == [c["expected"] for c in build_cases()]
    assert {c.data["template"] for c in cases()} == {t for templates in SPLITS.values() for t in templates}


@pytest.mark.parametrize("split", sorted(FLOORS))
def test_each_split_holds_its_floors_and_nothing_processed_is_wrong(split: str) -> None:
    scored = score((c for c in cases() if c.split == split), render)
    assert scored.wrong == []
    assert scored.right >= FLOORS[split]["fields"]
    assert scored.processed >= FLOORS[split]["processed"]


def _page(rows: list[tuple[str, float, float, float]]) -> Page:
    """Rows of (text, left, top, type height); words 0.55 of the height wide per character."""
    words = []
    for text, left, top, height in rows:
        for token in text.split():
            width = 0.55 * height * len(token)
            words.append(Word(token, left, top, left + width, top + height, 99.0))
            left += width + 0.3 * height
    return Page(1, 595.0, 842.0, rebuild_lines(words))


def _found(page: Page) -> dict[str, tuple[str, float]]:
    return {c.type: (c.value_text, c.confidence) for c in pair_fields([page])}


def test_a_value_centred_under_its_narrow_label_is_its_cell() -> None:
    page = _page([("Date", 300.0, 200.0, 8.0), ("11 February 2026", 272.0, 216.0, 9.0)])
    assert _found(page)["INVOICE_RECEIPT_DATE"][0] == "11 February 2026"


def test_a_cell_beside_the_label_column_is_not_centred_under_it() -> None:
    page = _page([("Date", 300.0, 200.0, 8.0), ("11 February 2026", 330.0, 216.0, 9.0)])
    assert "INVOICE_RECEIPT_DATE" not in _found(page)


@pytest.mark.parametrize("label", ["Gross", "Brutto", "TTC"])
def test_a_gross_column_header_labels_the_total(label: str) -> None:
    page = _page(
        [
            ("Net amount", 300.0, 300.0, 8.0),
            (label, 450.0, 300.0, 8.0),
            ("100.00", 300.0, 316.0, 9.0),
            ("120.00", 450.0, 316.0, 9.0),
        ]
    )
    found = _found(page)
    assert (found["SUBTOTAL"][0], found["TOTAL"][0]) == ("100.00", "120.00")


def test_a_word_that_only_starts_with_brutto_is_no_total_label() -> None:
    page = _page([("Bruttopreis 12.00", 50.0, 300.0, 9.0)])
    assert "TOTAL" not in _found(page)


@pytest.mark.parametrize("words", ["Fattura IVA Imponibile Totale", "Factura Importe IVA Fecha", "Factuur BTW Bedrag"])
def test_italian_spanish_and_dutch_pages_read_numeric_dates_day_first(words: str) -> None:
    assert date_order([_page([(words, 50.0, 100.0, 9.0)])]) == DateOrder.DMY


_LETTERHEAD = ("Hotel Alpenblick", 50.0, 40.0, 16.0)
_BODY = [("Invoice No.: A-1", 350.0, 200.0, 9.0), ("Description 100.00", 50.0, 300.0, 9.0)]


def test_a_payee_line_confirms_the_letterhead() -> None:
    page = _page([_LETTERHEAD, *_BODY, ("Make all checks payable to Hotel Alpenblick.", 50.0, 500.0, 9.0)])
    name, confidence = _found(page)["VENDOR_NAME"]
    assert name == "Hotel Alpenblick" and confidence > GUESS_CONFIDENCE_CAP


def test_a_payee_line_with_another_name_confirms_nothing() -> None:
    page = _page([_LETTERHEAD, *_BODY, ("Make all checks payable to Alpenblick Holding.", 50.0, 500.0, 9.0)])
    assert _found(page)["VENDOR_NAME"][1] <= GUESS_CONFIDENCE_CAP


def test_a_letterhead_in_capitals_is_spelled_as_the_page_prints_it_elsewhere() -> None:
    page = _page([("DIJKWOLK HOSTING B.V.", 50.0, 40.0, 16.0), *_BODY, ("Dijkwolk Hosting B.V.", 50.0, 600.0, 9.0)])
    assert _found(page)["VENDOR_NAME"][0] == "Dijkwolk Hosting B.V."


def test_a_letterhead_in_capitals_printed_nowhere_else_stays_as_printed() -> None:
    page = _page([("DIJKWOLK HOSTING B.V.", 50.0, 40.0, 16.0), *_BODY])
    assert _found(page)["VENDOR_NAME"][0] == "DIJKWOLK HOSTING B.V."
