"""The second generated layout set (tests/data/layouts_more): vendor shapes the first set lacks.

Telecom, cloud and hotel bills in EN, DE, FR, NL, IT and ES (see the set's render.py): the floors
the reader reached over its text layers, nothing PROCESSED with a wrong header value, and the rules
it was built to hold, one by one on synthetic pages (a name with its address on one line, a sender
line above the recipient, a "Total" column of quantities, the amount due as the total).
"""

from __future__ import annotations

import sys

import pytest
from ocr_helpers import REPO_ROOT, page_of, score

from jobs.extract.ocr.fields import pair_fields
from jobs.extract.ocr.labels import GUESS_CONFIDENCE_CAP
from jobs.extract.ocr.lines import Page, Word, rebuild_lines

sys.path.insert(0, str(REPO_ROOT))
from tests.data.layouts_more.render import build_cases, cases, render

# Measured 3 Dec 2026 (docs/ocr.md): 720/720 fields, 135/144 PROCESSED; the nine others name a
# seller nothing on the page confirms (no legal form, not printed again) and go to review.
FLOORS = {"fields": 720, "processed": 135}


def test_cases_json_is_what_render_builds() -> None:
    built = build_cases()
    assert [c.expected for c in cases()] == [c["expected"] for c in built]
    assert {c.lang for c in cases()} == {"en", "de", "fr", "nl", "it", "es"}
    assert {c.data["template"] for c in cases()} == {"telecom", "cloud", "hotel"}


def test_the_set_holds_its_floors_and_nothing_processed_is_wrong() -> None:
    scored = score(cases(), render)
    assert scored.wrong == []
    assert scored.right >= FLOORS["fields"]
    assert scored.processed >= FLOORS["processed"]


def _page(rows: list[tuple[str, float, float, float]]) -> Page:
    """Rows of (text, left, top, type height); words 0.55 of the height wide per character."""
    words = []
    for text, left, top, height in rows:
        for token in text.split():
            width = 0.55 * height * len(token)
            words.append(Word(token, left, top, left + width, top + height, 99.0))
            left += width + 0.3 * height
    return Page(1, 595.0, 842.0, rebuild_lines(words))


def _vendor(page: Page) -> tuple[str, float]:
    vendor = next(c for c in pair_fields([page]) if c.type == "VENDOR_NAME")
    return vendor.value_text, vendor.confidence


_BODY = [
    ("Invoice number: A-1", 300.0, 200.0, 9.0),
    ("Invoice date: 3 March 2026", 300.0, 215.0, 9.0),
    ("Consulting 100.00", 50.0, 300.0, 9.0),
    ("Travel 20.00", 50.0, 315.0, 9.0),
]


def test_a_letterhead_with_its_address_on_the_same_line_keeps_the_name() -> None:
    page = _page([("Brightline Telecom Ltd · 14 Canal Street · Manchester M1 3HU", 50.0, 40.0, 14.0), *_BODY])
    name, confidence = _vendor(page)
    assert name == "Brightline Telecom Ltd" and confidence > GUESS_CONFIDENCE_CAP


def test_a_legal_footer_with_the_address_beside_the_name_keeps_the_name() -> None:
    page = _page(
        [
            *_BODY,
            ("Funkwerk Kommunikation GmbH · Hafenstraße 12 · 20457 Hamburg", 50.0, 770.0, 7.0),
            ("USt-IdNr. DE123456789", 50.0, 780.0, 7.0),
        ]
    )
    assert _vendor(page) == ("Funkwerk Kommunikation GmbH", 99.0)


def test_the_sender_line_above_the_recipient_names_the_seller() -> None:
    sender = ("Hotel Alpenblick · Seestraße 4 · 83700 Rottach-Egern", 50.0, 120.0, 6.5)
    recipient = [("Müller & Söhne KG", 50.0, 132.0, 9.0), ("Ringstraße 5, 50667 Köln", 50.0, 144.0, 9.0)]
    # Printed again in the footer: confirmed; the buyer's legal form below it is not the seller.
    footer = ("Hotel Alpenblick · Seestraße 4 · 83700 Rottach-Egern", 50.0, 770.0, 7.0)
    assert _vendor(_page([sender, *recipient, *_BODY, footer])) == ("Hotel Alpenblick", 99.0)
    # Nothing confirms it: right, and still a guess that a person checks.
    name, confidence = _vendor(_page([sender, *recipient, *_BODY]))
    assert name in ("Hotel Alpenblick", "Müller & Söhne KG") and confidence <= GUESS_CONFIDENCE_CAP


def test_a_sender_line_cut_by_dashes_is_confirmed_by_the_same_footer() -> None:
    sender = ("Hôtel des Remparts - 2 place du Marché - 84000 Avignon", 50.0, 120.0, 6.5)
    footer = ("Hôtel des Remparts - 2 place du Marché - 84000 Avignon", 50.0, 770.0, 7.0)
    assert _vendor(_page([sender, ("Boulangerie Martin", 50.0, 132.0, 9.0), *_BODY, footer])) == (
        "Hôtel des Remparts",
        99.0,
    )


def test_a_letterhead_without_an_address_is_kept_whole() -> None:
    page = _page([("Brightline Telecom Ltd", 50.0, 40.0, 18.0), *_BODY, ("Brightline Telecom Ltd", 50.0, 770.0, 7.0)])
    assert _vendor(page)[0] == "Brightline Telecom Ltd"


def _totals(*rows: str | tuple[str, ...]) -> dict[str, str]:
    return {c.type: c.value_text for c in pair_fields([page_of(*rows, confidence=99.0)])}


def test_the_amount_due_that_is_net_plus_tax_is_the_total_over_a_quantity_column() -> None:
    # "Total" heads a column of quantities and labels the line table's sum row: neither is the total.
    rows = [
        ("Description", "Total", "Unit", "Amount"),
        ("Plan", "1.00", "x", "39.90"),
        ("Data", "13.50", "GB", "12.60"),
        ("Total", "14.50", "52.50"),
        ("Subtotal", "52.50"),
        ("VAT 20%", "10.50"),
        ("Amount due", "63.00"),
    ]
    assert _totals(*rows)["TOTAL"] == "63.00"
    # An amount due that is not net plus tax (a prepayment was deducted) is no total: review.
    assert _totals(*rows[:-1], ("Amount due", "13.00")).get("TOTAL") != "13.00"


def test_an_amount_due_does_not_override_a_specific_total_label() -> None:
    found = _totals(("Subtotal", "52.50"), ("VAT 20%", "10.50"), ("Invoice Total", "63.00"), ("Amount due", "13.00"))
    assert found["TOTAL"] == "63.00"


@pytest.mark.parametrize(
    ("label", "kind", "value"),
    [
        ("Net à payer", "AMOUNT_DUE", "225,00"),
        ("Te betalen", "AMOUNT_DUE", "225,00"),
        ("Total à payer", "AMOUNT_DUE", "225,00"),
        ("Nº factura", "INVOICE_RECEIPT_ID", "A-2026-7"),
    ],
)
def test_french_grave_accent_dutch_amount_due_and_spanish_number_labels(label: str, kind: str, value: str) -> None:
    assert _totals((label, value))[kind] == value


def test_a_right_aligned_total_label_with_its_amount_large_below_it() -> None:
    page = _page(
        [
            *_BODY,
            ("Total TTC", 480.0, 630.0, 9.0),
            # Right-aligned like the label, in larger type: its left edge is far left of the label's.
            ("EUR 1 350,00", 420.0, 644.0, 16.0),
        ]
    )
    found = {c.type: c.value_text for c in pair_fields([page])}
    assert found["TOTAL"] == "EUR 1 350,00"


@pytest.mark.parametrize(("total", "due"), [("Totale fattura", "Totale da pagare"), ("Importe total", "Total a pagar")])
def test_what_is_left_to_pay_after_a_prepayment_is_not_a_second_total(total: str, due: str) -> None:
    found = _totals(
        ("Imponibile", "1.000,00"), ("IVA 22%", "220,00"), (total, "1.220,00"), ("Acconto", "50,00"), (due, "1.170,00")
    )
    assert (found["TOTAL"], found["AMOUNT_DUE"]) == ("1.220,00", "1.170,00")
