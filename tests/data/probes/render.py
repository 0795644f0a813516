"""A generated set of adversarial invoice layouts found by probes (issue 43, probe rounds 1 and 2).

Two rounds of probes rendered invented invoices with reportlab and ran the plain-PDF reader over
them; each template below is a layout that one of them found hard. Each line gives the hard case.

Round 1 (`templates_1a.py`, `templates_1b.py`, seeds `probe43-<template>-<index>`):

- `classic`: a DIN letter: letterhead, window address, an info block of right-aligned labels, a bank footer;
- `billto_big`: the buyer printed large under "Bill to", the seller small at the right and in the footer;
- `marketplace`: a platform's logo large, "Sold by" one company, "Fulfilled by" another, paid via PayPal;
- `credit`: a credit note with negative amounts and the original invoice's number and date;
- `two_page`: many positions on page 1 with a carried-forward sum, the totals on page 2;
- `swiss_fx`: a Swiss invoice in CHF (1'234.56, MWST 8.1/2.6), the total converted to EUR;
- `service_period`: a subscription bill: contract number, service period, print and due dates in two columns;
- `label_grid`: a row of small labels over values, the number among customer and order numbers;
- `big_lines`: list prices with a large project discount, line totals larger than the invoice total;
- `us_fx`: a US vendor in USD ("$1,234.56"), sales tax, the total restated in EUR;
- `fr_space`: a French facture: 1 234,56 €, SIRET, a deposit, "net à payer", the share capital in the footer;
- `it_es_compact`: Italian or Spanish, seller and buyer side by side under "Cedente"/"Emisor" labels, small print;
- `nl_table`: the header data in a bordered two-column table (label cell, value cell), Dutch and English;
- `shop_receipt`: an online shop in small print: the order number above the invoice number, paid in full;
- `letter_subject`: a business letter: town and date at the right margin, number and date in the subject line;
- `big_title_right`: large type, a column of right-aligned labels, the seller only in the footer beside the bank;
- `multicol_seller_label`: three header columns, the seller under a "Seller:" label, the buyer with a legal form too;
- `net_labelled_total`: the net sum under a label that starts like a total, the gross under a weaker label;
- `deposit_no_total`: net, tax, a deposit deducted and the balance, no gross total line (the total is net + tax);
- `us_plain`: a US invoice in "$" or "USD", dates MM/DD/YYYY (some ambiguous), a remit-to block;
- `spaced_number`: numbers with a blank between prefix and digits ("RE 2026 0147"), a date-like order number beside;
- `dual_currency`: every total in two currency columns (the invoice's and an information currency), in either order.

Round 2 (`templates_2a.py`, `templates_2b.py`, seeds `probe43b-<template>-<index>`):

- `utility_bill`: account and meter numbers, a billing period, previous balance, payments, current charges;
- `hotel_folio`: room number, arrival and departure, a folio number beside the invoice number, balance 0;
- `saas_receipt`: a receipt number beside the invoice number, "Date paid", "Amount paid" equal to the total;
- `freelancer`: the seller a natural person (no legal form), the client company with one;
- `wholesale_pages`: 30-55 lines over 2-3 pages, page subtotals, the header repeated with a printed date;
- `nl_box`: a bordered box, labels in a row over their values (Factuurnummer | Debiteurnummer | Factuurdatum);
- `it_fattura`: "Fattura n. 123/2026 del 12/03/2026" on one line, Cedente/Cessionario blocks with P.IVA;
- `es_factura`: NIF/CIF for both parties, "Fecha de expedición" beside "Fecha de operación", serie and número;
- `at_uid`: "UID-Nr. ATU…" near the number, "Leistungsdatum", a "Gesamtbetrag EUR" header over bare numbers;
- `seller_bottom`: the seller only at the bottom left above the footer, the buyer and a title at the top;
- `proforma`: a pro-forma invoice (PF-…), a valid-until date, a quote number, an advance payment requested;
- `reminder`: a payment reminder with its own number and date beside the older invoice's number, date and total;
- `portal_print`: a supplier-portal print with the buyer's legal name and a timestamp in the page's header line;
- `uk_taxpoint`: a UK VAT invoice, the tax point date printed before the invoice date, "GB 123 4567 89";
- `label_right`: values on the left and their labels to their right, the totals too;
- `all_caps`: everything in capitals, month abbreviations ("12 MAR 2026"), "TOTAL DUE";
- `title_number`: the number only in the title line ("INVOICE #A-1029") among PO, quote and job numbers.

`cases(per_template)` yields the cases, `render(case)` the PDF (rendered at test time, never
committed; the same bytes on every run). Each case's `expected` holds the five header fields as
`jobs.extract.ocr.degrade.header_mismatches` compares them. All names, numbers and addresses are invented.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from tests.data.probes import templates_1a, templates_1b, templates_2a, templates_2b  # noqa: E402
from tests.data.probes.pages import truth  # noqa: E402

Template = Callable[[random.Random, int], tuple[dict[str, Any], bytes]]
# round -> (seed prefix, templates); the seed of a case is "<prefix>-<template>-<index>", as the probes seeded them.
ROUNDS: dict[int, tuple[str, dict[str, Template]]] = {
    1: ("probe43", templates_1a.TEMPLATES | templates_1b.TEMPLATES),
    2: ("probe43b", templates_2a.TEMPLATES | templates_2b.TEMPLATES),
}


@dataclass(frozen=True)
class Case:
    id: str
    round: int
    template: str
    index: int
    expected: dict[str, str]

    @property
    def seed(self) -> str:
        return _seed(self.round, self.template, self.index)


def _seed(round_: int, template: str, index: int) -> str:
    return f"{ROUNDS[round_][0]}-{template}-{index}"


def _generate(round_: int, template: str, index: int) -> tuple[dict[str, Any], bytes]:
    return ROUNDS[round_][1][template](random.Random(_seed(round_, template, index)), index)


def cases(per_template: int) -> Iterator[Case]:
    for round_, (_, templates) in ROUNDS.items():
        for template in templates:
            for index in range(per_template):
                data, _ = _generate(round_, template, index)
                yield Case(f"r{round_}-{template}-{index}", round_, template, index, truth(data))


def render(case: Case) -> bytes:
    return _generate(case.round, case.template, case.index)[1]
