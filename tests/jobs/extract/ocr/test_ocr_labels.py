"""Label vocabulary and pairing (en/de/fr), line rebuilding, and the AnalyzeExpense shape."""

from __future__ import annotations

import pytest
from ocr_helpers import page_of

from jobs.extract import ExtractionSettings
from jobs.extract.ocr.expense_shape import expense_response
from jobs.extract.ocr.fields import pair_fields
from jobs.extract.ocr.labels import GUESS_CONFIDENCE_CAP
from jobs.extract.ocr.lines import Word, rebuild_lines
from jobs.extract.textract import extract_textract


def fields(*rows: str | tuple[str, ...], confidence: float = 95.0) -> dict[str, str]:
    return {c.type: c.value_text for c in pair_fields([page_of(*rows, confidence=confidence)])}


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            [("Invoice No:", "INV-2026-001"), ("Invoice Date:", "March 15, 2026"), ("Total", "$1,204.50")],
            {"INVOICE_RECEIPT_ID": "INV-2026-001", "INVOICE_RECEIPT_DATE": "March 15, 2026", "TOTAL": "$1,204.50"},
        ),
        (
            [("Rechnungsnummer:", "RE-4711"), ("Rechnungsdatum:", "05.03.2018"), ("Gesamtbetrag", "1.190,00 €")],
            {"INVOICE_RECEIPT_ID": "RE-4711", "INVOICE_RECEIPT_DATE": "05.03.2018", "TOTAL": "1.190,00 €"},
        ),
        (
            [
                ("Facture n°", "F-2026-17"),
                ("Date de facture", "15/03/2026"),
                ("Total HT", "100,00"),
                ("TVA", "20,00"),
                ("Total TTC", "120,00"),
            ],
            {
                "INVOICE_RECEIPT_ID": "F-2026-17",
                "INVOICE_RECEIPT_DATE": "15/03/2026",
                "SUBTOTAL": "100,00",
                "TAX": "20,00",
                "TOTAL": "120,00",
            },
        ),
        (
            ["Handelsrechnung (380) Nr. 471102 vom 05.06.2018"],
            {"INVOICE_RECEIPT_ID": "471102", "INVOICE_RECEIPT_DATE": "05.06.2018"},
        ),
    ],
)
def test_vocabulary_pairs_english_german_french_labels(rows: list, expected: dict[str, str]) -> None:
    found = fields(*rows)
    assert {k: found.get(k) for k in expected} == expected


def test_zahlbetrag_is_the_amount_due_not_the_total() -> None:
    found = fields(("Bruttosumme", "197,65"), ("Erhaltene Anzahlungen", "-50,00"), ("Zahlbetrag", "147,65"))
    assert found["TOTAL"] == "197,65"
    assert found["AMOUNT_DUE"] == "147,65"
    assert found["AMOUNT_PAID"] == "50,00"


def test_specific_labels_beat_generic_ones_and_column_headers_pair_nothing() -> None:
    found = fields(
        ("Pos Beschreibung Nettopreis Menge Steuersatz", "Nettobetrag"),
        ("Gesamtbetrag der Zuschläge", "5,80"),
        ("Total", "999,99"),
        ("Bruttosumme", "215,07"),
        ("Steverbetrag", "21,30"),  # tesseract's usual misreading of "Steuerbetrag"
    )
    assert found["TOTAL"] == "215,07"
    assert found["TAX"] == "21,30"
    assert "SUBTOTAL" not in found


def test_labels_with_ids_instead_of_amounts_pair_no_money() -> None:
    found = fields(("USt-IdNr:", "DE136695976"), ("Steuernummer:", "201/113/40209"), ("Total", "17"))
    assert "TAX" not in found and "TOTAL" not in found


def test_delivery_date_is_not_the_invoice_date() -> None:
    found = fields(("Liefer- und Leistungsdatum:", "03.06.2018"), ("Datum:", "05.06.2018"))
    assert found["INVOICE_RECEIPT_DATE"] == "05.06.2018"


def test_seller_block_name_is_confident_and_a_suffix_guess_is_capped() -> None:
    block = pair_fields(
        [page_of("Verkäufer", ("Nummer:", "549910"), ("Name:", "Lieferant GmbH"), "Käufer", ("Name:", "Kunden AG"))]
    )
    vendor = next(c for c in block if c.type == "VENDOR_NAME")
    assert (vendor.value_text, vendor.confidence) == ("Lieferant GmbH", 95.0)
    guess = pair_fields([page_of("ACME Widgets Ltd", "12 High Street", ("Invoice No", "A-1"))])
    vendor = next(c for c in guess if c.type == "VENDOR_NAME")
    assert vendor.value_text == "ACME Widgets Ltd"
    assert vendor.confidence <= GUESS_CONFIDENCE_CAP < ExtractionSettings().confidence_threshold


def test_value_confidence_is_the_weakest_value_word() -> None:
    page = page_of(("Total", "1.190,00 EUR"))
    low = [
        Word(w.text, w.left, w.top, w.right, w.bottom, 41.0 if w.text == "1.190,00" else w.confidence)
        for w in page.lines[0].words
    ]
    total = next(c for c in pair_fields([page.__class__(1, 600, 60, rebuild_lines(low))]) if c.type == "TOTAL")
    assert total.confidence == 41.0


def test_lines_rebuilt_from_scrambled_boxes_split_into_columns() -> None:
    page = page_of(("Bruttosumme", "529,87"), ("Zahlbetrag", "529,87"))
    assert [[s.text for s in line.segments] for line in page.lines] == [
        ["Bruttosumme", "529,87"],
        ["Zahlbetrag", "529,87"],
    ]


def test_expense_shape_feeds_the_textract_normalizer() -> None:
    page = page_of(
        ("Invoice No:", "INV-9"),
        ("Invoice Date:", "2026-03-15"),
        ("Currency:", "EUR"),
        ("Seller:", "ACME GmbH"),
        ("Subtotal", "100.00"),
        ("VAT", "19.00"),
        ("Total", "119.00"),
    )
    response = expense_response([page], pair_fields([page]), "tesseract")
    total = next(f for f in response["ExpenseDocuments"][0]["SummaryFields"] if f["Type"]["Text"] == "TOTAL")
    assert total["Currency"] == {"Code": "EUR"}
    assert total["LabelDetection"]["Text"] == "Total"
    box = total["ValueDetection"]["Geometry"]["BoundingBox"]
    assert 0 < box["Left"] < 1 and 0 < box["Width"] < 1
    invoice = extract_textract(response, ExtractionSettings()).invoice
    assert (
        invoice.invoiceNumber,
        str(invoice.invoiceDate),
        invoice.vendorName,
        invoice.currency,
        str(invoice.totalAmount),
    ) == ("INV-9", "2026-03-15", "ACME GmbH", "EUR", "119.00")
