"""The letterhead as the seller's name: what confirms it when OCR has damaged the small print."""

from __future__ import annotations

import pytest

from jobs.extract import ExtractionSettings
from jobs.extract.ocr.letterhead import vendor_name
from jobs.extract.ocr.lines import Page, Word, rebuild_lines

THRESHOLD = ExtractionSettings().confidence_threshold


def letterhead_page(name: str, *small_print: str) -> Page:
    """A page with `name` in 24-unit type at the top, a body, and `small_print` lines at the foot."""
    words: list[Word] = []

    def line(text: str, top: float, height: float) -> None:
        left = 40.0
        for token in text.split():
            width = 0.6 * height * len(token)
            words.append(Word(token, left, top, left + width, top + height, 95.0))
            left += width + 0.4 * height

    line(name, 40.0, 24.0)
    for row, text in enumerate(("Rechnung Nr. 4711", "Datum 15.06.2026", "Gesamtbetrag 1.535,34 EUR")):
        line(text, 200.0 + 20 * row, 10.0)
    for row, text in enumerate(small_print):
        line(text, 780.0 + 12 * row, 7.0)
    return Page(1, 600.0, 840.0, rebuild_lines(words))


@pytest.mark.parametrize(
    "small_print",
    [
        "Kontoinhaber: Bauunternehmen Krause",
        "Kontonnhaber Bauunternehmen Krause",  # the colon and an "i" lost in 7-pt print
        "Account holder Bauunternehmen Krause",
        "Bauunternehmen Krause · Hauptstraße 5 · 80331 München",
    ],
)
def test_a_letterhead_printed_again_in_the_bank_block_or_footer_is_confirmed(small_print: str) -> None:
    found = vendor_name([letterhead_page("Bauunternehmen Krause", small_print)])
    assert found is not None and found.value_text == "Bauunternehmen Krause"
    assert found.confidence >= THRESHOLD


def test_accents_lost_in_the_small_print_still_confirm_and_the_letterhead_keeps_them() -> None:
    found = vendor_name([letterhead_page("Café Central", "Kontoinhaber: Cafe Central")])
    assert found is not None and found.value_text == "Café Central"
    assert found.confidence >= THRESHOLD


@pytest.mark.parametrize(
    "small_print",
    [
        "Bauunternehmen Krause",  # a longer name that merely ends like the letterhead
        "Kontakt Krause",  # a word that is no account-holder label
        "Inhaber Krause Bau",
    ],
)
def test_a_name_that_is_only_part_of_another_piece_is_no_confirmation(small_print: str) -> None:
    found = vendor_name([letterhead_page("Krause", small_print)])
    assert found is not None and found.confidence < THRESHOLD


def test_a_letterhead_that_lost_accents_the_small_print_shows_is_not_confirmed() -> None:
    found = vendor_name([letterhead_page("Cafe Central", "Kontoinhaber: Café Central")])
    assert found is not None and found.confidence < THRESHOLD
