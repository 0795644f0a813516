"""A fourth generated layout set: layout kinds, one of them held out (issue 43, second round).

Built to test the text-layer reader's printed conventions on layouts none of the other sets has,
never from the held-out visual corpus. Six kinds in EN, DE and FR, two variants each (font,
number style, currency mark before or after, date form):

- `headrow`: a row of labels over a row of values (number, date, customer, page) under a large
  letterhead with its legal form, and the totals as a header row (net | tax | total) over one row
  of amounts;
- `insurer`: an insurer's premium notice: the heading names the issuer between the type and the
  number ("Rechnung des Versicherers Nr. … vom …"), a seller block whose name wraps before its
  legal form, over its postal address and VAT id, and premium, insurance tax and total rows;
- `margin`: a business letter: the sender line over the window address, the letter's date alone
  at the right margin with its town ("Hamburg, 3. März 2026"), the number on a subject line, a
  position table whose money column is headed by a bare "Total", net/tax/amount-due rows, and the
  seller in a legal footer beside its VAT id;
- `fx`: an invoice in GBP, CHF or USD whose tax is also stated in EUR, the two amounts stacked
  around their label ("GBP 12,34" / "Steuerbetrag in" / "EUR 14,20");
- `titled` (added after the first measurement): the title large at the top right over a bare
  "No.:" and "Date:", a date qualified by its noun below them ("Date of delivery", "Date
  d'échéance"), the seller under an "Issuer:" label, the tax as "plus 20 % VAT" and the total as
  "Invoice amount" / "Endsumme";
- held out (fixed before any result was seen, never tuned on): `boxed`, a grid of bordered boxes
  each with a small label over its value, the totals in a box at the right with codes after the
  amounts, the letterhead right-aligned and the name again in the footer beside the IBAN.

`python tests/data/layouts_kinds/render.py` rewrites cases.json from `build_cases`
(deterministic); the PDFs are rendered at test and bench time (never committed). Each case's
`expected` holds the five header fields as the normalized invoice holds them. All names, numbers
and addresses are invented.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from tests.data.layouts_more.render import _printed_date as printed_date  # noqa: E402
from tests.data.layouts_more.render import money  # noqa: E402

WIDTH, HEIGHT = A4
MARGIN = 50.0
# `titled` was added after the first measurement, last so that the other cases stay as they were.
KINDS = ("headrow", "insurer", "margin", "fx", "boxed", "titled")
SPLITS = {"development": ("headrow", "insurer", "margin", "fx", "titled"), "held-out": ("boxed",)}
LANGS = ("en", "de", "fr")

_W: dict[str, dict[str, str]] = {
    "en": {
        "number": "Invoice No.",
        "date": "Invoice date",
        "customer": "Customer No.",
        "page": "Page",
        "net": "Net amount",
        "tax": "VAT {rate}%",
        "total": "Invoice total",
        "bare_total": "Total",
        "due": "Amount due",
        "seller": "Seller:",
        "buyer": "Buyer:",
        "issuer": "Invoice of the insurer No. {number} dated {date}",
        "premium": "Annual premium",
        "ins_tax": "Insurance tax {rate} %",
        "subject": "Invoice No. {number}",
        "greeting": "Dear Sir or Madam,",
        "body": "we thank you for your order and invoice you as follows:",
        "desc": "Description",
        "qty": "Qty",
        "price": "Unit price",
        "tax_in": "VAT in",
        "vat_id": "VAT ID",
        "due_date": "Due date",
        "regards": "Kind regards",
        "town": "London, {date}",
        "title": "INVOICE",
        "bare_no": "No.:",
        "bare_date": "Date:",
        "other_date": "Date of delivery:",
        "issued_by": "Issuer:",
        "plus_tax": "plus {rate} % VAT",
        "amount": "Invoice amount",
        "sub": "Subtotal",
    },
    "de": {
        "number": "Rechnungsnummer",
        "date": "Rechnungsdatum",
        "customer": "Kundennummer",
        "page": "Seite",
        "net": "Nettobetrag",
        "tax": "MwSt. {rate} %",
        "total": "Rechnungsbetrag",
        "bare_total": "Gesamt",
        "due": "Zu zahlen",
        "seller": "Verkäufer:",
        "buyer": "Käufer:",
        "issuer": "Rechnung des Versicherers Nr. {number} vom {date}",
        "premium": "Jahresbeitrag",
        "ins_tax": "Versicherungsteuer {rate} %",
        "subject": "Rechnung Nr. {number}",
        "greeting": "Sehr geehrte Damen und Herren,",
        "body": "wir danken für Ihren Auftrag und berechnen Ihnen:",
        "desc": "Bezeichnung",
        "qty": "Menge",
        "price": "Einzelpreis",
        "tax_in": "Steuerbetrag in",
        "vat_id": "USt-IdNr.",
        "due_date": "Fällig am",
        "regards": "Mit freundlichen Grüßen",
        "town": "Hamburg, {date}",
        "title": "RECHNUNG",
        "bare_no": "Nr.:",
        "bare_date": "Datum:",
        "other_date": "Datum der Lieferung:",
        "issued_by": "Aussteller:",
        "plus_tax": "zzgl. {rate} % USt",
        "amount": "Endsumme",
        "sub": "Summe netto",
    },
    "fr": {
        "number": "N° de facture",
        "date": "Date de facture",
        "customer": "Code client",
        "page": "Page",
        "net": "Total HT",
        "tax": "TVA {rate} %",
        "total": "Total TTC",
        "bare_total": "Total",
        "due": "Net à payer",
        "seller": "Vendeur :",
        "buyer": "Acheteur :",
        "issuer": "Facture de l'assureur n° {number} du {date}",
        "premium": "Prime annuelle",
        "ins_tax": "Taxe sur les assurances {rate} %",
        "subject": "Facture n° {number}",
        "greeting": "Madame, Monsieur,",
        "body": "nous vous remercions de votre commande et vous facturons :",
        "desc": "Désignation",
        "qty": "Qté",
        "price": "Prix unitaire",
        "tax_in": "TVA en",
        "vat_id": "N° TVA",
        "due_date": "Échéance",
        "regards": "Cordialement",
        "town": "Lyon, le {date}",
        "title": "FACTURE",
        "bare_no": "N° :",
        "bare_date": "Date :",
        "other_date": "Date d'échéance :",
        "issued_by": "Émetteur :",
        "plus_tax": "+ {rate} % TVA",
        "amount": "Total TTC",
        "sub": "Total HT",
    },
}
# The "Total" heading a position table's money column, per language.
_COLUMN_TOTAL = {"en": "Total", "de": "Gesamt", "fr": "Total"}
_SELLERS: dict[str, list[tuple[str, str, str, str]]] = {
    # (the name on one line; the same name wrapped before its legal form; street|town)
    "en": [
        (
            "Harbourside Mutual Insurance Ltd",
            "Harbourside Mutual",
            "Insurance Society Ltd",
            "12 Quay Street|Bristol BS1 4DJ",
        ),
        ("Northwind Trading Ltd", "Northwind", "Trading Ltd", "8 Mill Lane|Leeds LS1 5AB"),
    ],
    "de": [
        (
            "Hanse Versicherung a.G.",
            "Hanseatischer Versicherungsverein",
            "Musterstadt a.G.",
            "Alsterufer 3|20354 Hamburg",
        ),
        ("Weserland Handel GmbH", "Weserland", "Handel GmbH", "Hafenweg 17|28217 Bremen"),
    ],
    "fr": [
        ("Mutuelle du Rhône SA", "Mutuelle d'Assurance", "du Rhône SA", "5 quai Perrache|69002 Lyon"),
        ("Comptoir Alpin SARL", "Comptoir", "Alpin SARL", "9 rue des Alpes|38000 Grenoble"),
    ],
}
_BUYER = {
    "en": ("Fabrikam Logistics Ltd", "9 Dock Road", "Liverpool L3 4AA"),
    "de": ("Müller & Söhne KG", "Ringstraße 5", "50667 Köln"),
    "fr": ("Boulangerie Martin", "4 rue Victor Hugo", "33000 Bordeaux"),
}
_DATES = ("2026-03-17", "2026-11-05", "2025-07-23", "2026-01-30", "2026-06-14", "2025-12-09")
_RATES = {"en": 20, "de": 19, "fr": 20}
_FONTS = ("Helvetica", "Times-Roman")
_BOLD = {"Helvetica": "Helvetica-Bold", "Times-Roman": "Times-Bold"}


@dataclass(frozen=True)
class Case:
    id: str
    data: dict[str, Any]
    expected: dict[str, str]

    @property
    def kind(self) -> str:
        return str(self.data["kind"])

    @property
    def split(self) -> str:
        return next(split for split, kinds in SPLITS.items() if self.kind in kinds)


@cache
def cases() -> tuple[Case, ...]:
    raw = json.loads((HERE / "cases.json").read_text())
    return tuple(Case(c["id"], c["print"], c["expected"]) for c in raw["cases"])


class _Page:
    """A reportlab canvas with top-left coordinates and the case's font."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.buffer = io.BytesIO()
        self.canvas = Canvas(self.buffer, pagesize=A4, invariant=True)
        self.font = str(data["font"])

    def text(self, x: float, top: float, text: str, size: float = 9.0, bold: bool = False, right: bool = False) -> None:
        font = _BOLD[self.font] if bold else self.font
        self.canvas.setFont(font, size)
        if right:
            self.canvas.drawRightString(x, HEIGHT - top - size, text)
        else:
            self.canvas.drawString(x, HEIGHT - top - size, text)

    def width(self, text: str, size: float = 9.0, bold: bool = False) -> float:
        return float(stringWidth(text, _BOLD[self.font] if bold else self.font, size))

    def box(self, x: float, top: float, width: float, height: float) -> None:
        self.canvas.rect(x, HEIGHT - top - height, width, height)

    def done(self) -> bytes:
        self.canvas.showPage()
        self.canvas.save()
        return self.buffer.getvalue()


def _amount(value: str, data: dict[str, Any]) -> str:
    text = money(value, data["numbers"])
    mark = data["mark"]
    return f"{mark} {text}" if data["mark_where"] == "before" else f"{text} {mark}"


def _positions(page: _Page, data: dict[str, Any], top: float, money_header: str) -> float:
    w = _W[data["lang"]]
    columns = (MARGIN, 300.0, 400.0, WIDTH - MARGIN)
    for x, header in zip(columns, (w["desc"], w["qty"], w["price"], money_header), strict=True):
        page.text(x, top, header, bold=True, right=x == columns[-1])
    top += 16.0
    for description, qty, price, amount in data["lines"]:
        page.text(columns[0], top, description)
        page.text(columns[1], top, qty)
        page.text(columns[2], top, money(price, data["numbers"]))
        page.text(columns[3], top, money(amount, data["numbers"]), right=True)
        top += 13.0
    return top + 10.0


def _tax_label(data: dict[str, Any]) -> str:
    return _W[data["lang"]]["tax"].format(rate=data["rate"])


def _sums(page: _Page, data: dict[str, Any], top: float, total_key: str = "total") -> float:
    w = _W[data["lang"]]
    for label, value in ((w["net"], data["net"]), (_tax_label(data), data["tax"]), (w[total_key], data["total"])):
        page.text(330.0, top, label, bold=label == w[total_key])
        page.text(WIDTH - MARGIN, top, _amount(value, data), right=True, bold=label == w[total_key])
        top += 14.0
    return top


def _footer(page: _Page, data: dict[str, Any], with_name: bool = True) -> None:
    w = _W[data["lang"]]
    street, town = data["address"]
    name = f"{data['vendor']} · " if with_name else ""
    page.text(MARGIN, HEIGHT - 70.0, f"{name}{street} · {town}", size=7.0)
    page.text(MARGIN, HEIGHT - 60.0, f"{w['vat_id']} {data['vat_id']} · IBAN {data['iban']}", size=7.0)


def _recipient(page: _Page, data: dict[str, Any], top: float) -> float:
    for line in _BUYER[data["lang"]]:
        page.text(MARGIN, top, line, size=10.0)
        top += 13.0
    return top


def headrow(data: dict[str, Any]) -> bytes:
    page, w = _Page(data), _W[data["lang"]]
    page.text(MARGIN, 50.0, data["vendor"], size=18.0, bold=True)
    street, town = data["address"]
    page.text(MARGIN, 74.0, f"{street}, {town}", size=8.0)
    top = _recipient(page, data, 130.0) + 30.0
    cells = (
        (w["number"], data["number"]),
        (w["date"], data["date_text"]),
        (w["customer"], data["customer"]),
        (w["page"], "1/1"),
    )
    for column, (label, value) in enumerate(cells):
        x = MARGIN + column * 125.0
        page.text(x, top, label, size=8.0, bold=True)
        page.text(x, top + 13.0, value, size=9.0)
    top = _positions(page, data, top + 50.0, w["price"] if data["variant"] else _COLUMN_TOTAL[data["lang"]])
    headers = (w["net"], _tax_label(data), w["total"])
    values = (data["net"], data["tax"], data["total"])
    for column, (label, value) in enumerate(zip(headers, values, strict=True)):
        x = 300.0 + column * 90.0 + 80.0
        page.text(x, top, label, size=8.0, bold=True, right=True)
        page.text(x, top + 13.0, _amount(value, data), right=True)
    _footer(page, data)
    return page.done()


def insurer(data: dict[str, Any]) -> bytes:
    page, w = _Page(data), _W[data["lang"]]
    page.text(MARGIN, 60.0, w["issuer"].format(number=data["number"], date=data["date_text"]), size=13.0, bold=True)
    top = 110.0
    page.text(MARGIN, top, w["seller"], bold=True)
    first, second = data["wrapped"]
    street, town = data["address"]
    for line in (first, second, street, town, f"{w['vat_id']} : {data['vat_id']}"):
        top += 12.0
        page.text(MARGIN, top, line)
    top += 24.0
    page.text(MARGIN, top, w["buyer"], bold=True)
    for line in _BUYER[data["lang"]]:
        top += 12.0
        page.text(MARGIN, top, line)
    top += 40.0
    rows = (
        (w["premium"], data["net"]),
        (w["ins_tax"].format(rate=data["rate"]), data["tax"]),
        (w["total"], data["total"]),
    )
    for label, value in rows:
        page.text(MARGIN, top, label)
        page.text(400.0, top, _amount(value, data), right=True)
        top += 14.0
    page.text(MARGIN, top + 30.0, w["regards"])
    return page.done()


def margin(data: dict[str, Any]) -> bytes:
    page, w = _Page(data), _W[data["lang"]]
    street, town = data["address"]
    page.text(MARGIN, 120.0, f"{data['vendor']} · {street} · {town}", size=6.5)
    _recipient(page, data, 135.0)
    page.text(WIDTH - MARGIN, 230.0, w["town"].format(date=data["date_text"]), right=True)
    page.text(MARGIN, 270.0, w["subject"].format(number=data["number"]), size=11.0, bold=True)
    page.text(MARGIN, 300.0, w["greeting"])
    page.text(MARGIN, 314.0, w["body"])
    top = _positions(page, data, 340.0, _COLUMN_TOTAL[data["lang"]])
    _sums(page, data, top, "due")
    _footer(page, data)
    return page.done()


def fx(data: dict[str, Any]) -> bytes:
    page, w = _Page(data), _W[data["lang"]]
    page.text(MARGIN, 50.0, data["vendor"], size=16.0, bold=True)
    top = _recipient(page, data, 120.0) + 20.0
    for label, value in (
        (w["number"], data["number"]),
        (w["date"], data["date_text"]),
        (w["customer"], data["customer"]),
    ):
        page.text(330.0, top, label)
        page.text(450.0, top, value)
        top += 13.0
    top = _positions(page, data, top + 30.0, _COLUMN_TOTAL[data["lang"]] if data["variant"] else w["price"])
    page.text(330.0, top, w["net"])
    page.text(WIDTH - MARGIN, top, _amount(data["net"], data), right=True)
    top += 16.0
    # The tax in the invoice's currency and in euros, set half a line above and below the label.
    page.text(430.0, top - 5.7, data["currency"])
    page.text(WIDTH - MARGIN, top - 5.7, money(data["tax"], data["numbers"]), right=True)
    page.text(330.0, top, w["tax_in"])
    page.text(430.0, top + 5.7, "EUR")
    page.text(WIDTH - MARGIN, top + 5.7, money(data["tax_eur"], data["numbers"]), right=True)
    top += 20.0
    page.text(330.0, top, w["total"], bold=True)
    page.text(WIDTH - MARGIN, top, _amount(data["total"], data), right=True, bold=True)
    _footer(page, data)
    return page.done()


def boxed(data: dict[str, Any]) -> bytes:
    page, w = _Page(data), _W[data["lang"]]
    page.text(WIDTH - MARGIN, 50.0, data["vendor"], size=16.0, bold=True, right=True)
    _recipient(page, data, 120.0)
    cells = (
        (w["number"], data["number"]),
        (w["date"], data["date_text"]),
        (w["customer"], data["customer"]),
        (w["due_date"], data["due_text"]),
    )
    width = (WIDTH - 2 * MARGIN) / 4
    for column, (label, value) in enumerate(cells):
        x = MARGIN + column * width
        page.box(x, 200.0, width, 34.0)
        page.text(x + 4.0, 203.0, label, size=7.0)
        page.text(x + 4.0, 216.0, value, size=10.0)
    top = _positions(page, data, 260.0, _COLUMN_TOTAL[data["lang"]])
    page.box(320.0, top, WIDTH - MARGIN - 320.0, 50.0)
    rows = ((w["net"], data["net"]), (_tax_label(data), data["tax"]), (w["total"], data["total"]))
    for index, (label, value) in enumerate(rows):
        y = top + 4.0 + index * 14.0
        page.text(326.0, y, label, bold=index == 2)
        page.text(WIDTH - MARGIN - 6.0, y, f"{money(value, data['numbers'])} {data['currency']}", right=True)
    _footer(page, data)
    return page.done()


def titled(data: dict[str, Any]) -> bytes:
    page, w = _Page(data), _W[data["lang"]]
    page.text(WIDTH - MARGIN, 50.0, w["title"], size=20.0, bold=True, right=True)
    x = 380.0
    for row, (label, value) in enumerate(
        ((w["bare_no"], data["number"]), (w["bare_date"], data["date_text"]), (w["other_date"], data["due_text"]))
    ):
        page.text(x, 82.0 + 12.0 * row, label)
        page.text(x + 95.0, 82.0 + 12.0 * row, value)
    top = 150.0
    page.text(MARGIN, top, w["issued_by"], bold=True)
    page.text(MARGIN + 60.0, top, data["vendor"])
    street, town = data["address"]
    page.text(MARGIN + 60.0, top + 12.0, f"{street}, {town}")
    top = _recipient(page, data, top + 50.0)
    top = _positions(page, data, top + 30.0, w["price"])
    rows = (
        (w["sub"], data["net"]),
        (w["plus_tax"].format(rate=data["rate"]), data["tax"]),
        (w["amount"], data["total"]),
    )
    for label, value in rows:
        page.text(330.0, top, label)
        page.text(WIDTH - MARGIN, top, _amount(value, data), right=True)
        top += 14.0
    _footer(page, data, with_name=False)
    return page.done()


TEMPLATES: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "headrow": headrow,
    "insurer": insurer,
    "margin": margin,
    "fx": fx,
    "boxed": boxed,
    "titled": titled,
}


def render(case: Case) -> bytes:
    return TEMPLATES[case.kind](case.data)


# --- the cases -----------------------------------------------------------------------------------


def _case(kind: str, lang: str, variant: int) -> dict[str, Any]:
    index = KINDS.index(kind) * 6 + LANGS.index(lang) * 2 + variant
    name, first, second, address = _SELLERS[lang][0 if kind == "insurer" else 1]
    vendor = f"{first} {second}" if kind == "insurer" else name
    iso = _DATES[index % len(_DATES)]
    currency = {"fx": ("GBP", "CHF", "USD")[LANGS.index(lang)]}.get(kind, "EUR")
    mark = {"EUR": "€", "GBP": "£", "USD": "$", "CHF": "CHF"}[currency] if variant == 0 else currency
    rate = _RATES[lang]
    lines = [
        (f"Service {n + 1}", str(q), f"{p:.2f}", f"{q * p:.2f}")
        for n, (q, p) in enumerate(((1 + index % 3, Decimal("49.90") + index), (2, Decimal("120.00") + 3 * index)))
    ]
    net = sum(Decimal(line[3]) for line in lines)
    tax = (net * rate / 100).quantize(Decimal("0.01"))
    total = net + tax
    number = f"{lang.upper()}-{2026 - index % 2}-{30117 + 89 * index}"
    numbers = {"en": "en", "de": "de", "fr": ("fr", "de")[variant]}[lang]
    return {
        "id": f"{lang}-{kind}-{variant}",
        "print": {
            "kind": kind,
            "lang": lang,
            "variant": variant,
            "font": _FONTS[variant],
            "vendor": vendor,
            "wrapped": [first, second],
            "address": address.split("|"),
            "vat_id": f"{lang.upper()}{123456780 + index}",
            "iban": "DE02 1203 0000 0000 2020 51",
            "number": number,
            "date_text": printed_date(iso, lang, variant * 2 if lang != "en" else 0),
            "due_text": printed_date(iso[:8] + "28", lang, variant * 2 if lang != "en" else 0),
            "customer": f"K{48210 + index}",
            "lines": lines,
            "rate": rate,
            "net": str(net),
            "tax": str(tax),
            "tax_eur": str((tax * Decimal("1.15")).quantize(Decimal("0.01"))),
            "total": str(total),
            "currency": currency,
            "numbers": numbers,
            "mark": mark,
            "mark_where": ("before", "after")[variant],
        },
        "expected": {
            "invoiceNumber": number,
            "invoiceDate": iso,
            "vendorName": vendor,
            "currency": currency,
            "totalAmount": str(total),
        },
    }


def build_cases() -> list[dict[str, Any]]:
    """Six kinds × three languages × two variants (font, number style, mark before or after, date form)."""
    return [_case(kind, lang, variant) for kind in KINDS for lang in LANGS for variant in range(2)]


def main() -> None:
    about = (
        "Generated by render.py (python tests/data/layouts_kinds/render.py): six layout kinds in EN, DE"
        " and FR; `print` is what the page prints, `expected` the five header fields; the kind `boxed` is"
        " held out. All names, numbers and addresses are invented."
    )
    (HERE / "cases.json").write_text(
        json.dumps({"_about": about, "cases": build_cases()}, indent=1, ensure_ascii=False) + "\n"
    )


if __name__ == "__main__":
    main()
