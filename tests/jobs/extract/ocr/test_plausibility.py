"""The vetoes over the reader's pairings (jobs.extract.ocr.plausibility), one test each, on synthetic
pages: the reading the page contradicts is capped below the review threshold (or dropped), and
the same layout without the contradiction keeps its confident reading.

Found by adversarial probes (generated layouts the reader was never tuned on) that stored a wrong
value on a PROCESSED document: the buyer printed large under "Bill to" as the seller, the buyer
column's heading after "Seller:", the footer's bank, a number cut from "INV 2026 7021", a CHF
invoice with a EUR conversion line, a reminder's old invoice, a date line as the sender line.
That a buyer's block ends at a blank line (a buyer named "Kunde GmbH" over a seller in the
footer) is held by test_visual_layers' legal-footer test.
"""

from __future__ import annotations

from jobs.extract.ocr.fields import pair_fields
from jobs.extract.ocr.labels import GUESS_CONFIDENCE_CAP, Candidate
from jobs.extract.ocr.lines import Page, Word, rebuild_lines
from jobs.extract.ocr.page_locale import page_currency

Row = tuple[str, float, float] | tuple[str, float, float, float]


def _page(rows: list[Row], height: float = 842.0) -> Page:
    """A page of rows (text, left, top[, type size]); 8-pt type unless given."""
    words = []
    for row in rows:
        text, left, top = row[0], row[1], row[2]
        size = row[3] if len(row) == 4 else 8.0
        for token in text.split():
            words.append(Word(token, left, top, left + 0.6 * size * len(token), top + size, 99.0))
            left += 0.6 * size * len(token) + 0.3 * size
    return Page(1, 595.0, height, rebuild_lines(words))


def _found(rows: list[Row]) -> dict[str, Candidate]:
    return {c.type: c for c in reversed(pair_fields([_page(rows)]))}


def _confident(candidate: Candidate | None) -> bool:
    return candidate is not None and candidate.confidence > GUESS_CONFIDENCE_CAP


BILL_TO = [
    ("Invoice", 400.0, 60.0, 14.0),
    ("Lumen Software plc", 400.0, 90.0),
    ("Bill to", 50.0, 120.0),
    ("Sankt Anna Elektro Ltd", 50.0, 131.0, 20.0),
    ("1 High Street", 50.0, 154.0),
    ("Invoice number: INV-2041", 50.0, 300.0),
    ("Total: 1,234.56 GBP", 50.0, 400.0),
]


def test_the_buyer_printed_large_under_bill_to_is_never_a_confident_seller() -> None:
    vendor = _found(BILL_TO).get("VENDOR_NAME")
    assert vendor is not None and vendor.value_text == "Sankt Anna Elektro Ltd"
    assert not _confident(vendor)
    # The same letterhead with no buyer block under it stays confident (its legal form).
    alone = [row for row in BILL_TO if row[0] != "Bill to"]
    assert _confident(_found(alone).get("VENDOR_NAME"))


def test_a_party_heading_after_the_seller_label_is_no_name() -> None:
    found = _found(
        [
            ("Seller:", 50.0, 100.0),
            ("Buyer:", 320.0, 100.0),
            ("Orchard Software N.V.", 50.0, 111.0),
            ("Vega Trading SARL", 320.0, 111.0),
        ]
    )
    vendor = found.get("VENDOR_NAME")
    assert vendor is None or vendor.value_text not in ("Buyer:", "Buyer")


def test_a_bank_in_the_legal_footer_is_not_the_seller() -> None:
    footer = [
        ("Invoice", 400.0, 60.0, 30.0),
        ("Commerzbank AG", 50.0, 760.0),
        ("IBAN DE89 3704 0044 0532 0130 00", 50.0, 771.0),
    ]
    vendor = _found(footer).get("VENDOR_NAME")
    assert vendor is None or not _confident(vendor)
    # A seller's own name in the same footer stays confident.
    seller = [("Invoice", 400.0, 60.0, 30.0), ("Kestrel Druck GmbH", 50.0, 760.0), ("IBAN DE89 3704", 50.0, 771.0)]
    assert _confident(_found(seller).get("VENDOR_NAME"))


def test_a_number_cut_from_a_longer_printed_one_is_a_guess() -> None:
    for printed in ("INV 2026 7021", "2026 5233", "FA 62051"):
        number = _found([("Invoice number:", 50.0, 100.0), (printed, 200.0, 100.0)])["INVOICE_RECEIPT_ID"]
        assert not _confident(number), printed
    # A number label's own word before it, or a date after it, are no part of the number.
    for rows, read in (
        ([("Invoice No. 4711", 50.0, 100.0)], "4711"),
        ([("Invoice number:", 50.0, 100.0), ("RE-2026-0147 12.03.2026", 200.0, 100.0)], "RE-2026-0147"),
    ):
        number = _found(rows)["INVOICE_RECEIPT_ID"]
        assert number.value_text == read and _confident(number), read


def test_a_reminder_prints_the_old_invoice_so_nothing_of_it_is_confident() -> None:
    body = [
        ("Rechnungsnummer: RE-2026-82925", 50.0, 200.0),
        ("Rechnungsdatum: 07.01.2026", 50.0, 211.0),
        ("Rechnungsbetrag: 48.689,28 EUR", 50.0, 222.0),
    ]
    reminder = _found([("Zahlungserinnerung", 50.0, 100.0, 16.0), *body])
    for kind in ("INVOICE_RECEIPT_ID", "INVOICE_RECEIPT_DATE", "TOTAL"):
        assert not _confident(reminder[kind]), kind
    invoice = _found([("Rechnung", 50.0, 100.0, 16.0), *body])
    for kind in ("INVOICE_RECEIPT_ID", "INVOICE_RECEIPT_DATE", "TOTAL"):
        assert _confident(invoice[kind]), kind


def test_a_date_is_never_the_seller() -> None:
    sender = [("April 8, 2026 · 410 Market Street · Suite 200", 50.0, 100.0), ("Receipt", 50.0, 60.0, 16.0)]
    vendor = _found(sender).get("VENDOR_NAME")
    assert vendor is None or not vendor.value_text.startswith("April")


def test_a_stated_currency_beside_a_conversion_line_settles_nothing() -> None:
    chf = _page([("Alle Beträge in CHF", 50.0, 100.0), ("Gegenwert in EUR 77'526.24", 50.0, 300.0)])
    assert page_currency([chf]) is None
    stated = _page([("Tous les montants en CHF", 50.0, 100.0), ("Total 1'234.56", 50.0, 300.0)])
    assert page_currency([stated]) == "CHF"
    # A code-like word after "in" in running text is no statement.
    prose = _page([("All amounts in the table", 50.0, 100.0), ("Total EUR 12.50", 50.0, 300.0)])
    assert page_currency([prose]) == "EUR"


def test_a_sender_line_is_one_column_not_two_blocks_side_by_side() -> None:
    # The seller's town beside the buyer's street on one row, the buyer's town printed again below.
    rows: list[Row] = [
        ("Receipt", 50.0, 60.0, 16.0),
        ("San Francisco, CA 94105", 50.0, 100.0),
        ("410 Market Street, Suite 200", 330.0, 100.0),
        ("San Francisco, CA 94105", 330.0, 111.0),
    ]
    vendor = _found(rows).get("VENDOR_NAME")
    assert vendor is None or vendor.value_text != "San Francisco"
    # One sender line in one column still names its seller.
    sender = [("Receipt", 50.0, 60.0, 16.0), ("Stackly LLC · 1 Main St · San Francisco 94105", 50.0, 100.0)]
    assert _found(sender)["VENDOR_NAME"].value_text == "Stackly LLC"
