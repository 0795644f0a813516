"""The text-layer reader's rules added for issue 43's second round, one test each, on synthetic pages.

Each rule is a printed convention beyond the producers it was found on; each test also holds the
case the rule must leave alone (the reading that would be silently wrong).
"""

from __future__ import annotations

from ocr_helpers import page_of

from jobs.extract.ocr.fields import pair_fields
from jobs.extract.ocr.labels import GUESS_CONFIDENCE_CAP, Candidate
from jobs.extract.ocr.lines import Page, Word, rebuild_lines


def _page(rows: list[tuple[str, float, float]], height: float = 842.0, size: float = 8.0) -> Page:
    """A page of rows (text, left, top) in one type size."""
    words = []
    for text, left, top in rows:
        for token in text.split():
            words.append(Word(token, left, top, left + 0.75 * size * len(token), top + size, 99.0))
            left += 0.75 * size * len(token) + 3.0
    return Page(1, 595.0, height, rebuild_lines(words))


def _found(page: Page) -> dict[str, list[Candidate]]:
    found: dict[str, list[Candidate]] = {}
    for candidate in pair_fields([page]):
        found.setdefault(candidate.type, []).append(candidate)
    return found


def _heading(text: str, wrapped: str | None = None) -> Page:
    """A title in large type (15 pt over 8-pt body lines), its date wrapped onto a second line."""
    body = [("Rechnungswährung : EUR", 50.0, 200.0), ("Bruttosumme 59,50", 50.0, 400.0)]
    words = [w for line in _page(body).lines for w in line.words]
    left = 50.0
    for token in text.split():
        words.append(Word(token, left, 100.0, left + 8.0 * len(token), 115.0, 99.0))
        left += 8.0 * len(token) + 4.0
    if wrapped:
        words.append(Word(wrapped, 50.0, 117.0, 50.0 + 8.0 * len(wrapped), 132.0, 99.0))
    return Page(1, 595.0, 842.0, rebuild_lines(words))


def test_a_heading_names_its_issuer_between_the_type_and_the_number() -> None:
    found = _found(_heading("Rechnung des Versicherers Nr. 01.234.567.8-2018-1 vom", "06.12.2018"))
    assert found["INVOICE_RECEIPT_ID"][0].value_text == "01.234.567.8-2018-1"
    assert found["INVOICE_RECEIPT_DATE"][0].value_text == "06.12.2018"
    english = _found(_heading("Invoice of the Supplier No. A-77 dated 5 May 2026"))
    assert english["INVOICE_RECEIPT_ID"][0].value_text == "A-77"
    # Without a number marker after it, a genitive is running text: "des Monats 2026" is no number.
    assert "INVOICE_RECEIPT_ID" not in _found(_heading("Rechnung des Monats 2026"))


def _stacked(label: str, upper: str, lower: str) -> Page:
    """A label on its own row with two amounts set half a line above and below it, to its right."""
    rows = [
        ("Rechnungssumme ohne USt.", 282.0, 241.5),
        ("858,75", 508.0, 241.5),
        (upper, 448.0, 254.3),
        (label, 282.0, 260.0),
        (lower, 448.0, 265.7),
        ("Bruttosumme", 282.0, 278.5),
        ("1021,91", 502.0, 278.5),
    ]
    return _page(rows, size=10.0)


def test_amounts_stacked_around_their_label_are_alternatives_the_totals_check_chooses_from() -> None:
    found = _found(_stacked("Steuerbetrag in", "GBP 163,16", "EUR 183,14"))
    # Only the GBP tax adds up with the net to the total: it is the invoice's.
    assert [c.value_text for c in found["TAX"]] == ["GBP 163,16"]
    assert [c.value_text for c in found["TOTAL"]] == ["1021,91"]


def test_two_totals_stacked_around_their_label_are_a_conflict_never_a_choice() -> None:
    page = _page([("EUR 100,00", 448.0, 254.3), ("Gesamtbetrag", 282.0, 260.0), ("GBP 90,00", 448.0, 265.7)], size=10.0)
    assert sorted(c.value_text for c in _found(page)["TOTAL"]) == ["EUR 100,00", "GBP 90,00"]
    # One amount beside the label's row (not around it) is no stack: nothing is read for it.
    lone = _page([("EUR 100,00", 448.0, 254.3), ("Gesamtbetrag", 282.0, 260.0)], size=10.0)
    assert "TOTAL" not in _found(lone)


def _seller(*lines: str, heading: str = "Verkäufer:") -> Page:
    return _page([(text, 50.0, 300.0 + 11.5 * index) for index, text in enumerate((heading, *lines))], size=10.0)


def test_a_seller_name_wrapped_before_its_legal_form_is_one_name() -> None:
    page = _seller("MVM Musterhafter", "Versicherungsverein Musterstadt a.G.", "Musterstr. 12", "DE 12345 Musterstadt")
    vendor = _found(page)["VENDOR_NAME"][0]
    assert vendor.value_text == "MVM Musterhafter Versicherungsverein Musterstadt a.G."
    assert vendor.confidence > GUESS_CONFIDENCE_CAP
    # A second line without a legal form is not part of the name (a person, a department).
    plain = _found(_seller("Lieferant GmbH", "Abteilung Vertrieb", "Marktstr. 153"))["VENDOR_NAME"][0]
    assert plain.value_text == "Lieferant GmbH"


def test_a_seller_heading_over_a_postal_address_and_registration_confirms_the_first_line() -> None:
    lines = ("Physiotherapeutin", "Tanja Tinder", "Musterstraße 12", "DE 12345 Beispielstadt")
    confirmed = _found(_seller(*lines, "Telefon : 0151196", "USt.-Id.-Nr. : DE136695976"))["VENDOR_NAME"][0]
    assert (confirmed.value_text, confirmed.confidence) == ("Physiotherapeutin", 99.0)
    # Without the registration, or with the address out of order, the first line stays a guess.
    for guess in (
        _seller(*lines, "Telefon : 0151196"),
        _seller("Physiotherapeutin", "DE 12345 Beispielstadt", "Musterstraße 12", "USt.-Id.-Nr. : DE136695976"),
        # The registration under the buyer's heading is the buyer's, not the seller's.
        _seller(*lines, "Käufer:", "USt.-Id.-Nr. : DE136695976"),
    ):
        assert _found(guess)["VENDOR_NAME"][0].confidence <= GUESS_CONFIDENCE_CAP
    # An identifier line is no name, whatever the block under it holds.
    gln = _found(_seller("GLN 4333741000005", "Musterstraße 12", "12345 Stadt", "USt-IdNr: DE1"))["VENDOR_NAME"][0]
    assert gln.confidence <= GUESS_CONFIDENCE_CAP


def test_a_lone_page_of_labels_still_reads_as_before() -> None:
    # The stacked-value rule needs rows both above and below: a value column pairs as it did.
    found = {c.type: c.value_text for c in pair_fields([page_of(("Steuerbetrag", "37,62"), ("Bruttosumme", "235,62"))])}
    assert (found["TAX"], found["TOTAL"]) == ("37,62", "235,62")


def _letter(*rows: tuple[str, float, float]) -> dict[str, str]:
    return {c.type: c.value_text for c in pair_fields([_page(list(rows))])}


def test_the_letters_date_at_the_right_margin_is_the_invoice_date() -> None:
    found = _letter(("Hamburg, 3. März 2026", 430.0, 230.0), ("Rechnung Nr. 4711", 50.0, 270.0))
    assert found["INVOICE_RECEIPT_DATE"] == "3. März 2026"
    assert _letter(("Lyon, le 14 juin 2026", 430.0, 230.0))["INVOICE_RECEIPT_DATE"] == "14 juin 2026"
    # Beside a title on its row, too ("Sachversicherungsvertrag Nr: 00.123.456.7     18. April 2014").
    beside = _letter(("Sachversicherungsvertrag Nr: 00.123", 71.0, 290.0), ("18. April 2014", 460.0, 290.0))
    assert beside["INVOICE_RECEIPT_DATE"] == "18. April 2014"
    # A labelled date wins over it.
    labelled = _letter(("Hamburg, 3. März 2026", 430.0, 230.0), ("Rechnungsdatum: 01.03.2026", 50.0, 270.0))
    assert labelled["INVOICE_RECEIPT_DATE"] == "01.03.2026"


def test_a_date_at_the_margin_that_names_another_date_is_not_the_letters() -> None:
    for rows in (
        [("Lieferdatum", 50.0, 230.0), ("03.06.2018", 460.0, 230.0)],  # a delivery date
        [("Stand:", 50.0, 230.0), ("04.03.2014", 460.0, 230.0)],  # a label waiting for its value
        [("Hamburg, 3. März 2026", 120.0, 230.0)],  # not at the right margin
        [("Hamburg, 3. März 2026", 430.0, 600.0)],  # below the letter's head
        [("Ab 3. März 2026 gilt", 430.0, 230.0)],  # running text around the date
    ):
        assert "INVOICE_RECEIPT_DATE" not in _letter(*rows), rows


def test_sa_is_a_legal_form_that_ends_a_wrapped_seller_name() -> None:
    vendor = _found(_seller("Mutuelle d'Assurance", "du Rhône SA", "5 quai Perrache", "69002 Lyon"))["VENDOR_NAME"][0]
    assert (vendor.value_text, vendor.confidence) == ("Mutuelle d'Assurance du Rhône SA", 99.0)
    # Mixed case "Sa" is Saturday in opening hours, no legal form.
    hours = _found(_seller("Praxis am Markt", "Mo-Fr 8-18 Uhr, Sa 8-12 Uhr"))["VENDOR_NAME"][0]
    assert hours.value_text == "Praxis am Markt" and hours.confidence <= GUESS_CONFIDENCE_CAP


def test_a_date_under_a_cell_of_the_row_above_is_a_grid_value_not_the_letters_date() -> None:
    assert "INVOICE_RECEIPT_DATE" not in _letter(("Valid", 430.0, 218.0), ("Hamburg, 3. März 2026", 430.0, 230.0))
    # Text far to its left on the row above (the recipient's address) leaves it alone at the margin.
    found = _letter(("12345 Musterstadt", 50.0, 218.0), ("Hamburg, 3. März 2026", 430.0, 230.0))
    assert found["INVOICE_RECEIPT_DATE"] == "3. März 2026"


def _rows(*rows: str | tuple[str, ...]) -> dict[str, str]:
    return {c.type: c.value_text for c in pair_fields([page_of(*rows, confidence=99.0)])}


def test_a_date_qualified_by_its_noun_is_never_the_invoice_date() -> None:
    for label in ("Date d'échéance :", "Date de livraison :", "Date of delivery:", "Datum der Lieferung:"):
        assert "INVOICE_RECEIPT_DATE" not in _rows((label, "28/03/2026")), label
    assert _rows(("Date :", "12/03/2026"), ("Date d'échéance :", "28/03/2026"))["INVOICE_RECEIPT_DATE"] == "12/03/2026"
    assert _rows(("Datum", "05.06.2018"))["INVOICE_RECEIPT_DATE"] == "05.06.2018"
    assert _rows(("Date of the invoice", "05.06.2018"))["INVOICE_RECEIPT_DATE"] == "05.06.2018"


def test_more_spellings_of_the_total_the_tax_and_the_seller_label() -> None:
    found = _rows(("Summe netto", "520,90"), ("zzgl. 19 % USt", "98,97"), ("Endsumme", "619,87"))
    assert (found["SUBTOTAL"], found["TAX"], found["TOTAL"]) == ("520,90", "98,97", "619,87")
    assert _rows(("plus 20 % VAT", "99.98"), ("Invoice amount", "599.88"))["TOTAL"] == "599.88"
    assert _rows(("+ 20 % TVA", "99,98"))["TAX"] == "99,98"
    # A bare rate is a line item's tax category, printed on every position: no tax row.
    assert "TAX" not in _rows(("Kunstrasen 3,33", "19 % VAT (S)", "10,00"))
    for label in ("Issuer:", "Aussteller:", "Émetteur :", "Bill from:"):
        assert _rows((label, "Weserland Handel GmbH"))["VENDOR_NAME"] == "Weserland Handel GmbH", label


def _titled(title: str, *rows: tuple[str, float, float]) -> dict[str, str]:
    words = [w for line in _page(list(rows), size=9.0).lines for w in line.words]
    left = 450.0
    for token in title.split():
        words.append(Word(token, left, 50.0, left + 12.0 * len(token), 70.0, 99.0))
        left += 12.0 * len(token) + 5.0
    return {c.type: c.value_text for c in pair_fields([Page(1, 595.0, 842.0, rebuild_lines(words))])}


def test_a_bare_number_label_under_an_invoice_title_is_the_invoice_number() -> None:
    assert _titled("FACTURE", ("N° : F-2026-17", 380.0, 80.0))["INVOICE_RECEIPT_ID"] == "F-2026-17"
    assert _titled("INVOICE", ("No.:", 380.0, 80.0), ("EN-2026-32787", 475.0, 80.0))["INVOICE_RECEIPT_ID"] == (
        "EN-2026-32787"
    )
    # Far below the title, or under a title that is not an invoice's, a bare "No." names nothing.
    assert "INVOICE_RECEIPT_ID" not in _titled("INVOICE", ("No.: A-1", 380.0, 200.0))
    assert "INVOICE_RECEIPT_ID" not in _titled("DELIVERY NOTE", ("No.: A-1", 380.0, 80.0))
    # A qualified number label under the title is someone else's ("Customer No.").
    assert "INVOICE_RECEIPT_ID" not in _titled("INVOICE", ("Customer No.: C-1", 380.0, 80.0))


def test_an_unlabelled_amount_that_is_net_plus_tax_is_the_total() -> None:
    rows = (("Summe netto", "520,90"), ("MwSt. 19 %", "98,97"), ("Zu überweisen bis 30.03.", "619,87 €"))
    assert _rows(*rows)["TOTAL"] == "619,87 €"
    # Without a printed sum nothing is invented; two sums (two tax readings) settle nothing.
    assert "TOTAL" not in _rows(("Summe netto", "520,90"), ("MwSt. 19 %", "98,97"), "Vielen Dank")
    two = (("Summe netto", "100,00"), ("MwSt. 7 %", "7,00"), ("MwSt. 19 %", "19,00"), ("a", "107,00"), ("b", "119,00"))
    assert "TOTAL" not in _rows(*two)


def test_a_table_foot_a_cent_off_the_sum_is_not_the_total() -> None:
    # A table's foot adds rounded line amounts; the amount due printed below it is the invoice's.
    rows = (("Totaux", "38 325,15"), ("Total HT", "31 937,63"), ("TVA 20 %", "6 387,53"))
    assert "TOTAL" not in _rows(*rows)
    found = _rows(*rows, ("Net à payer TTC", "38 325,16"))
    assert found.get("TOTAL", found.get("AMOUNT_DUE")) == "38 325,16"
    assert found.get("TOTAL") in (None, "38 325,16")
