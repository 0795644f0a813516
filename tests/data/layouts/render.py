"""The layout development set: born-digital invoice PDFs in many layouts, rendered from cases.json.

Each case in cases.json names a template and the values it prints; its `expected` block holds the
known answers (the five header fields) and, for the ambiguity cases, the status they must get.
The PDFs are made at test and bench time with reportlab (never committed): text-layer PDFs as
rendered, clean scans by rasterising them (jobs.extract.ocr.degrade).

Templates differ where real invoices differ: letterhead left, right or centred, one or two
lines, with or without a company-form suffix, repeated in the footer or the bank block or not;
meta data as labels beside values, labels above values (a row of columns), or one heading line
with type, number and date; English, German and French wording, number and date formats.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

HERE = Path(__file__).resolve().parent
WIDTH, HEIGHT = A4
MARGIN = 50.0

_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "qty": "Qty",
        "item": "Description",
        "price": "Unit price",
        "amount": "Amount",
        "net": "Subtotal",
        "tax": "VAT {rate}%",
        "total": "Total",
        "bank": "Bank details",
        "holder": "Account holder",
        "to": "Bill to",
        "page": "Page 1 of 1",
        "thanks": "Thank you for your business.",
        "customer": "Customer No.",
        "order": "Order No.",
        "due": "Due date",
    },
    "de": {
        "qty": "Menge",
        "item": "Bezeichnung",
        "price": "Einzelpreis",
        "amount": "Betrag",
        "net": "Nettobetrag",
        "tax": "MwSt. {rate} %",
        "total": "Gesamtbetrag",
        "bank": "Bankverbindung",
        "holder": "Kontoinhaber",
        "to": "Rechnungsempfänger",
        "page": "Seite 1 von 1",
        "thanks": "Vielen Dank für Ihren Auftrag.",
        "customer": "Kunden-Nr.",
        "order": "Bestell-Nr.",
        "due": "Fällig am",
    },
    "fr": {
        "qty": "Qté",
        "item": "Désignation",
        "price": "Prix unitaire",
        "amount": "Montant",
        "net": "Total HT",
        "tax": "TVA {rate} %",
        "total": "Total TTC",
        "bank": "Coordonnées bancaires",
        "holder": "Titulaire",
        "to": "Client",
        "page": "Page 1 sur 1",
        "thanks": "Merci de votre confiance.",
        "customer": "N° client",
        "order": "N° de commande",
        "due": "Échéance",
    },
}


@dataclass(frozen=True)
class Case:
    id: str
    data: dict[str, Any]
    expected: dict[str, str]
    status: str | None  # the status an ambiguity case must get; None: PROCESSED expected

    @property
    def lang(self) -> str:
        return str(self.data.get("lang", "en"))


@cache
def cases() -> tuple[Case, ...]:
    raw = json.loads((HERE / "cases.json").read_text())
    return tuple(Case(c["id"], c["print"], c["expected"], c.get("status")) for c in raw["cases"])


def accuracy_cases() -> list[Case]:
    """The cases with one right answer per header field (the accuracy figures count these)."""
    return [case for case in cases() if case.status is None]


def ambiguity_cases() -> list[Case]:
    """Cases where the page itself is ambiguous: they must never be PROCESSED."""
    return [case for case in cases() if case.status is not None]


def money(value: str, case: Case) -> str:
    """An amount the way the case's locale prints it (the currency is added by the caller)."""
    amount = Decimal(value)
    style = case.data.get("numbers", {"en": "en", "de": "de", "fr": "fr"}[case.lang])
    decimals = int(case.data.get("decimals", 2))
    text = f"{amount:,.{decimals}f}"  # 1,234.50
    group, point = {"en": (",", "."), "de": (".", ","), "fr": (" ", ","), "ch": ("'", "."), "plain": ("", ".")}[style]
    return text.replace(",", "\0").replace(".", point).replace("\0", group)


def priced(value: str, case: Case) -> str:
    """An amount with the currency the way the case prints it: "€ 1.234,50", "1 234,50 €", "USD 12.00"."""
    text = money(value, case)
    mark = case.data.get("mark", "")
    if not mark:
        return text
    return (
        f"{mark}{text}"
        if case.data.get("mark_before", False) and len(mark) == 1
        else (f"{mark} {text}" if case.data.get("mark_before", False) else f"{text} {mark}")
    )


class Page:
    """A reportlab canvas addressed from the top-left, as invoices are read."""

    def __init__(self, case: Case) -> None:
        self.buffer = io.BytesIO()
        self.canvas = Canvas(self.buffer, pagesize=A4, invariant=1)
        self.font = str(case.data.get("font", "Helvetica"))
        self.bold = {"Helvetica": "Helvetica-Bold", "Times-Roman": "Times-Bold", "Courier": "Courier-Bold"}[self.font]

    def text(
        self, x: float, top: float, text: str, size: float = 9.5, *, bold: bool = False, align: str = "left"
    ) -> None:
        font = self.bold if bold else self.font
        width = stringWidth(text, font, size)
        left = {"left": x, "right": x - width, "center": x - width / 2}[align]
        self.canvas.setFont(font, size)
        self.canvas.drawString(left, HEIGHT - top - size, text)

    def rule(self, top: float) -> None:
        self.canvas.setLineWidth(0.5)
        self.canvas.line(MARGIN, HEIGHT - top, WIDTH - MARGIN, HEIGHT - top)

    def pdf(self) -> bytes:
        self.canvas.showPage()
        self.canvas.save()
        return self.buffer.getvalue()


# --- the blocks every template is made of ---------------------------------------------------------


def letterhead(page: Page, case: Case) -> float:
    """The seller's name (one or two lines, large), its address line below; returns the next top."""
    lines: list[str] = case.data["letterhead"]
    size = float(case.data.get("letterhead_size", 18))
    align = case.data.get("letterhead_align", "left")
    x = {"left": MARGIN, "right": WIDTH - MARGIN, "center": WIDTH / 2}[align]
    top = 40.0
    for line in lines:
        page.text(x, top, line, size, bold=True, align=align)
        top += size * 1.2
    page.text(x, top + 2, case.data["seller_address"], 8, align=align)
    return top + 30


def buyer(page: Page, case: Case, top: float) -> float:
    words = _WORDS[case.lang]
    page.text(MARGIN, top, words["to"] + ":", 8)
    for index, line in enumerate(case.data["buyer"]):
        page.text(MARGIN, top + 12 + index * 12, line, 9.5)
    return top + 12 + len(case.data["buyer"]) * 12


def meta_rows(case: Case) -> list[tuple[str, str]]:
    """The label/value pairs of the meta block, in the order the case prints them."""
    rows: list[tuple[str, str]] = []
    for label, value in case.data["meta"]:
        rows.append((label, value))
    return rows


def meta_beside(page: Page, case: Case, top: float, x: float) -> float:
    """Labels with their values beside them (a two-column block at x)."""
    gap = float(case.data.get("meta_gap", 95))
    colon = case.data.get("colon", ":")
    for index, (label, value) in enumerate(meta_rows(case)):
        page.text(x, top + index * 14, f"{label}{colon}" if label else "", 9.5)
        page.text(x + gap, top + index * 14, value, 9.5)
    return top + len(meta_rows(case)) * 14


def meta_above(page: Page, case: Case, top: float) -> float:
    """Labels in one row, their values in the row below (a row of columns)."""
    rows = meta_rows(case)
    step = (WIDTH - 2 * MARGIN) / len(rows)
    for index, (label, value) in enumerate(rows):
        page.text(MARGIN + index * step, top, label, 8, bold=True)
        page.text(MARGIN + index * step, top + 13, value, 9.5)
    return top + 30


def heading(page: Page, case: Case, top: float) -> float:
    page.text(MARGIN, top, case.data["heading"], float(case.data.get("heading_size", 14)), bold=True)
    return top + 28


def items(page: Page, case: Case, top: float) -> float:
    words = _WORDS[case.lang]
    columns = (MARGIN, MARGIN + 40, WIDTH - MARGIN - 150, WIDTH - MARGIN)
    page.rule(top - 4)
    page.text(columns[0], top, words["qty"], 8.5, bold=True)
    page.text(columns[1], top, words["item"], 8.5, bold=True)
    page.text(columns[2], top, words["price"], 8.5, bold=True, align="right")
    page.text(columns[3], top, words["amount"], 8.5, bold=True, align="right")
    top += 16
    for quantity, description, price, amount in case.data["lines"]:
        page.text(columns[0], top, str(quantity), 9.5)
        page.text(columns[1], top, description, 9.5)
        page.text(columns[2], top, money(price, case), 9.5, align="right")
        page.text(columns[3], top, money(amount, case), 9.5, align="right")
        top += 14
    page.rule(top)
    return top + 10


def totals(page: Page, case: Case, top: float) -> float:
    words = _WORDS[case.lang]
    label_x, value_x = WIDTH - MARGIN - 190, WIDTH - MARGIN
    rows = [(words["net"], case.data["net"], False)]
    rows += [(words["tax"].format(rate=rate), amount, False) for rate, amount in case.data["taxes"]]
    rows.append((case.data.get("total_label", words["total"]), case.data["total"], True))
    rows += [(label, amount, False) for label, amount in case.data.get("after_total", [])]
    for label, amount, bold in rows:
        page.text(label_x, top, label, 9.5, bold=bold)
        page.text(value_x, top, priced(amount, case), 9.5, bold=bold, align="right")
        top += 15
    return top + 10


def footer(page: Page, case: Case) -> None:
    words = _WORDS[case.lang]
    top = HEIGHT - 95
    page.rule(top - 6)
    for index, line in enumerate(case.data.get("notes", [words["thanks"]])):
        page.text(MARGIN, top - 40 - index * 12, line, 9)
    repeat = case.data.get("repeat", "bank")
    name = " ".join(case.data["letterhead"])
    left = [case.data.get("footer_name", name) if repeat in ("footer", "both") else "", case.data["seller_address"]]
    bank = [
        words["bank"],
        f"{words['holder']}: {name}" if repeat in ("bank", "both") else "",
        "IBAN DE02 1203 0000 0000 2020 51",
    ]
    for index, line in enumerate(x for x in left if x):
        page.text(MARGIN, top + index * 10, line, 7.5)
    for index, line in enumerate(x for x in bank if x):
        page.text(WIDTH / 2 + 20, top + index * 10, line, 7.5)
    page.text(WIDTH - MARGIN, top + 30, words["page"], 7.5, align="right")


# --- templates ----------------------------------------------------------------------------------


def classic(case: Case) -> bytes:
    """Letterhead, buyer block left, meta labels beside values on the right, table, totals."""
    page = Page(case)
    top = letterhead(page, case)
    title = case.data.get("title")
    buyer_bottom = buyer(page, case, top + 10)
    meta_bottom = meta_beside(page, case, top + 10, WIDTH / 2 + 40)
    top = max(buyer_bottom, meta_bottom) + 25
    if title:
        page.text(MARGIN, top, title, 14, bold=True)
        top += 28
    top = items(page, case, top + 5)
    totals(page, case, top)
    footer(page, case)
    return page.pdf()


def stacked(case: Case) -> bytes:
    """Letterhead, buyer block, then a row of labels with the values below them."""
    page = Page(case)
    top = letterhead(page, case)
    top = buyer(page, case, top + 10) + 25
    if title := case.data.get("title"):
        page.text(MARGIN, top, title, 14, bold=True)
        top += 26
    top = meta_above(page, case, top)
    top = items(page, case, top + 15)
    totals(page, case, top)
    footer(page, case)
    return page.pdf()


def headline(case: Case) -> bytes:
    """Letterhead, buyer block, one heading line with type, number and date, a few meta rows."""
    page = Page(case)
    top = letterhead(page, case)
    top = buyer(page, case, top + 10) + 25
    top = heading(page, case, top)
    if case.data["meta"]:
        top = meta_beside(page, case, top, MARGIN) + 15
    top = items(page, case, top + 5)
    totals(page, case, top)
    footer(page, case)
    return page.pdf()


def sidebar(case: Case) -> bytes:
    """Meta block at the top left under the title, the letterhead on the right, buyer below."""
    page = Page(case)
    letterhead(page, case)
    top = 130.0
    page.text(MARGIN, 40, case.data.get("title", "INVOICE"), 20, bold=True)
    meta_bottom = meta_beside(page, case, 75, MARGIN)
    top = buyer(page, case, max(top, meta_bottom + 20)) + 25
    top = items(page, case, top + 5)
    totals(page, case, top)
    footer(page, case)
    return page.pdf()


TEMPLATES: dict[str, Callable[[Case], bytes]] = {
    "classic": classic,
    "stacked": stacked,
    "headline": headline,
    "sidebar": sidebar,
}


def render(case: Case) -> bytes:
    """The case as a one-page text-layer PDF."""
    return TEMPLATES[case.data["template"]](case)


def rendered() -> Iterator[tuple[Case, bytes]]:
    for case in cases():
        yield case, render(case)
