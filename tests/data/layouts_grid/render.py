"""A third generated layout set: label grids the first two sets lack, with a held-out third.

Built to measure how the text-layer reader generalises to grids it was not written for, never
from the held-out visual corpus. Six templates in EN, DE, FR, NL, IT and ES, two variants each:

- `us`: the name large at the top left with its address, phone and e-mail stacked under it; the
  title "INVOICE" large at the top right over a right-aligned stack of labels with their values
  beside them; "Bill to" and "Ship to" side by side; totals labels right-aligned against their
  amounts; "Make all checks payable to NAME" at the bottom;
- `din`: a German-style business letter: the sender line over the window address, an information
  block at the right (number, customer number, date, "your order of"), a subject line, a greeting,
  a position table, totals rows with "plus 19 % VAT" spellings, and a four-column footer (address,
  contact, bank, register and VAT id);
- `centred`: a bordered header table of labels over centred values, and the totals as a table
  of net, rate, tax and gross columns over one row of values;
- `twopage`: a long position table carried over to a second page, which repeats the number and
  holds the totals;
- held out (never tuned on): `column` (amounts without a symbol under a column headed with the
  currency, "Total (EUR)", "All amounts in EUR") and `letter` (a letter whose totals are printed
  with dotted leaders and whose seller signs at the end above a legal footer).

`python tests/data/layouts_grid/render.py` rewrites cases.json from `build_cases`
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
from tests.data.layouts_more.render import _BUYERS, _VENDORS, _WORDS, money, priced  # noqa: E402
from tests.data.layouts_more.render import _printed_date as printed_date  # noqa: E402

WIDTH, HEIGHT = A4
MARGIN = 50.0
# Fixed before any result was seen: the reader is changed for the development templates only.
SPLITS = {"development": ("us", "din", "centred", "twopage"), "held-out": ("column", "letter")}

# A third spelling of each label, beside the two of tests/data/layouts_more.
_GRID: dict[str, dict[str, str]] = {
    "en": {
        "number": "Invoice No.",
        "date": "Date",
        "customer": "Customer ID",
        "order": "PO number",
        "net": "Net amount",
        "tax": "VAT {rate}%",
        "total": "Total amount",
        "gross": "Gross",
        "rate": "VAT rate",
        "vat": "VAT",
        "page": "Page",
        "ship": "Ship to",
        "payable": "Make all checks payable to",
        "greeting": "Dear Sir or Madam,",
        "intro": "for our services we invoice you as follows:",
        "regards": "Kind regards",
        "pos": "Pos.",
        "qty": "Qty",
        "price": "Unit price",
        "carried": "Carried forward",
        "continued": "Continued on page 2",
        "in": "All amounts in {code}",
        "your_order": "Your order of",
        "phone": "Phone",
        "bank": "Bank",
        "register": "Company no. 08123456",
        "director": "Director",
    },
    "de": {
        "number": "Rechnungs-Nr.",
        "date": "Datum",
        "customer": "Kunden-Nr.",
        "order": "Bestell-Nr.",
        "net": "Summe netto",
        "tax": "zzgl. {rate} % MwSt.",
        "total": "Gesamtbetrag",
        "gross": "Brutto",
        "rate": "MwSt.-Satz",
        "vat": "MwSt.",
        "page": "Seite",
        "ship": "Lieferadresse",
        "payable": "Zahlbar an",
        "greeting": "Sehr geehrte Damen und Herren,",
        "intro": "für unsere Leistungen berechnen wir Ihnen:",
        "regards": "Mit freundlichen Grüßen",
        "pos": "Pos.",
        "qty": "Menge",
        "price": "Einzelpreis",
        "carried": "Übertrag",
        "continued": "Fortsetzung auf Seite 2",
        "in": "Alle Beträge in {code}",
        "your_order": "Ihre Bestellung vom",
        "phone": "Telefon",
        "bank": "Bank",
        "register": "Amtsgericht Hamburg HRB 12345",
        "director": "Geschäftsführer",
    },
    "fr": {
        "number": "Facture n°",
        "date": "Date",
        "customer": "Code client",
        "order": "Bon de commande",
        "net": "Total HT",
        "tax": "TVA {rate} %",
        "total": "Total TTC",
        "gross": "TTC",
        "rate": "Taux TVA",
        "vat": "TVA",
        "page": "Page",
        "ship": "Livraison",
        "payable": "Chèques à l'ordre de",
        "greeting": "Madame, Monsieur,",
        "intro": "pour nos prestations, nous vous facturons :",
        "regards": "Cordialement",
        "pos": "N°",
        "qty": "Qté",
        "price": "Prix unitaire",
        "carried": "Report",
        "continued": "Suite page 2",
        "in": "Montants en {code}",
        "your_order": "Votre commande du",
        "phone": "Tél.",
        "bank": "Banque",
        "register": "RCS Lyon 812 345 678",
        "director": "Gérant",
    },
    "nl": {
        "number": "Factuur nr.",
        "date": "Datum",
        "customer": "Klant nr.",
        "order": "Inkoopordernr.",
        "net": "Totaal excl. BTW",
        "tax": "BTW {rate}%",
        "total": "Totaal incl. BTW",
        "gross": "Totaal",
        "rate": "BTW-tarief",
        "vat": "BTW",
        "page": "Pagina",
        "ship": "Afleveradres",
        "payable": "Te betalen aan",
        "greeting": "Geachte heer, mevrouw,",
        "intro": "voor onze diensten brengen wij u in rekening:",
        "regards": "Met vriendelijke groet",
        "pos": "Nr.",
        "qty": "Aantal",
        "price": "Prijs",
        "carried": "Transport",
        "continued": "Vervolg op pagina 2",
        "in": "Alle bedragen in {code}",
        "your_order": "Uw bestelling van",
        "phone": "Tel.",
        "bank": "Bank",
        "register": "KvK 12345678",
        "director": "Directeur",
    },
    "it": {
        "number": "N. fattura",
        "date": "Data",
        "customer": "Cod. cliente",
        "order": "Rif. ordine",
        "net": "Imponibile",
        "tax": "IVA {rate}%",
        "total": "Totale documento",
        "gross": "Totale",
        "rate": "Aliquota",
        "vat": "IVA",
        "page": "Pagina",
        "ship": "Destinazione",
        "payable": "Pagamento a favore di",
        "greeting": "Spettabile cliente,",
        "intro": "per i nostri servizi Le addebitiamo:",
        "regards": "Cordiali saluti",
        "pos": "Pos.",
        "qty": "Q.tà",
        "price": "Prezzo",
        "carried": "Riporto",
        "continued": "Segue a pagina 2",
        "in": "Importi in {code}",
        "your_order": "Vostro ordine del",
        "phone": "Tel.",
        "bank": "Banca",
        "register": "REA BO-123456",
        "director": "Amministratore",
    },
    "es": {
        "number": "Factura nº",
        "date": "Fecha",
        "customer": "Cód. cliente",
        "order": "Nº pedido",
        "net": "Base imponible",
        "tax": "IVA {rate}%",
        "total": "Total factura",
        "gross": "Total",
        "rate": "Tipo IVA",
        "vat": "IVA",
        "page": "Página",
        "ship": "Envío",
        "payable": "Pagadero a",
        "greeting": "Estimado cliente:",
        "intro": "por nuestros servicios le facturamos:",
        "regards": "Atentamente",
        "pos": "Pos.",
        "qty": "Cant.",
        "price": "Precio",
        "carried": "Suma y sigue",
        "continued": "Continúa en la página 2",
        "in": "Importes en {code}",
        "your_order": "Su pedido del",
        "phone": "Tel.",
        "bank": "Banco",
        "register": "Registro Mercantil de Madrid",
        "director": "Administrador",
    },
}


@dataclass(frozen=True)
class Case:
    id: str
    data: dict[str, Any]
    expected: dict[str, str]

    @property
    def lang(self) -> str:
        return str(self.data["lang"])

    @property
    def split(self) -> str:
        return next(name for name, templates in SPLITS.items() if self.data["template"] in templates)


@cache
def cases() -> tuple[Case, ...]:
    raw = json.loads((HERE / "cases.json").read_text())
    return tuple(Case(c["id"], c["print"], c["expected"]) for c in raw["cases"])


class Canvas2:
    """A reportlab canvas addressed from the top-left, with as many pages as a template needs."""

    def __init__(self, font: str) -> None:
        self.buffer = io.BytesIO()
        self.canvas = Canvas(self.buffer, pagesize=A4, invariant=1)
        self.font = font
        self.bold = {"Helvetica": "Helvetica-Bold", "Times-Roman": "Times-Bold"}[font]

    def text(
        self, x: float, top: float, text: str, size: float = 9, *, bold: bool = False, align: str = "left"
    ) -> None:
        font = self.bold if bold else self.font
        width = stringWidth(text, font, size)
        left = {"left": x, "right": x - width, "center": x - width / 2}[align]
        self.canvas.setFont(font, size)
        self.canvas.drawString(left, HEIGHT - top - size, text)

    def rule(self, top: float, left: float = MARGIN, right: float = WIDTH - MARGIN) -> None:
        self.canvas.setLineWidth(0.5)
        self.canvas.line(left, HEIGHT - top, right, HEIGHT - top)

    def box(self, left: float, top: float, right: float, bottom: float) -> None:
        self.canvas.setLineWidth(0.6)
        self.canvas.rect(left, HEIGHT - bottom, right - left, bottom - top)

    def next_page(self) -> None:
        self.canvas.showPage()

    def pdf(self) -> bytes:
        self.canvas.showPage()
        self.canvas.save()
        return self.buffer.getvalue()


def _w(data: dict[str, Any]) -> dict[str, str]:
    return {**_WORDS[data["lang"]], **_GRID[data["lang"]]}


def _amount(value: str, data: dict[str, Any]) -> str:
    return priced(value, data) if data["mark"] else money(value, data["numbers"])


def _tax_label(data: dict[str, Any], rate: Any) -> str:
    return _w(data)["tax"].format(rate=rate)


# --- blocks --------------------------------------------------------------------------------------


def _stacked_letterhead(page: Canvas2, data: dict[str, Any], x: float, align: str) -> float:
    name, street, city = data["vendor"]
    page.text(x, 40, name, 16, bold=True, align=align)
    lines = [street, city, f"{_w(data)['phone']} +49 40 123456", f"billing@{data['domain']}"]
    for index, line in enumerate(lines):
        page.text(x, 62 + index * 11, line, 8, align=align)
    return 62 + 11 * len(lines)


def _right_stack(page: Canvas2, data: dict[str, Any], top: float) -> float:
    """Labels right-aligned against a gap, their values left-aligned after it."""
    for index, (label, value) in enumerate(data["meta"]):
        page.text(WIDTH - MARGIN - 110, top + index * 13, f"{label}:", 9, bold=True, align="right")
        page.text(WIDTH - MARGIN - 100, top + index * 13, value, 9)
    return top + 13 * len(data["meta"])


def _addresses(page: Canvas2, data: dict[str, Any], top: float, ship: bool) -> float:
    words = _w(data)
    buyer = _BUYERS[data["lang"]]
    columns = [(MARGIN, words["to"])] + ([(MARGIN + 220, words["ship"])] if ship else [])
    for x, heading in columns:
        page.text(x, top, heading.upper(), 8, bold=True)
        for index, line in enumerate(buyer):
            page.text(x, top + 12 + index * 11, line, 9)
    return top + 12 + 11 * len(buyer)


def _positions(page: Canvas2, data: dict[str, Any], top: float, lines: list[list[str]], start: int = 1) -> float:
    """Pos | description | qty | unit price | amount, amounts right-aligned."""
    words = _w(data)
    cols = (MARGIN, MARGIN + 35, WIDTH - MARGIN - 190, WIDTH - MARGIN - 100, WIDTH - MARGIN)
    page.rule(top - 4)
    page.text(cols[0], top, words["pos"], 8.5, bold=True)
    page.text(cols[1], top, words["item"], 8.5, bold=True)
    page.text(cols[2], top, words["qty"], 8.5, bold=True, align="right")
    page.text(cols[3], top, words["price"], 8.5, bold=True, align="right")
    page.text(cols[4], top, data.get("amount_header") or words["amount"], 8.5, bold=True, align="right")
    top += 15
    for index, (description, quantity, price, amount) in enumerate(lines, start):
        page.text(cols[0], top, str(index), 9)
        page.text(cols[1], top, description, 9)
        page.text(cols[2], top, quantity, 9, align="right")
        page.text(cols[3], top, money(price, data["numbers"]), 9, align="right")
        page.text(cols[4], top, money(amount, data["numbers"]), 9, align="right")
        top += 13
    page.rule(top)
    return top + 12


def _totals_right(page: Canvas2, data: dict[str, Any], top: float, *, code: bool = False) -> float:
    """Labels right-aligned 120 pt left of the page edge, amounts right-aligned at the edge."""
    words = _w(data)
    rows = [(words["net"], data["net"])]
    rows += [(_tax_label(data, rate), amount) for rate, amount in data["taxes"]]
    rows.append((words["total"] + (f" ({data['currency']})" if code else ""), data["total"]))
    for index, (label, amount) in enumerate(rows):
        last = index == len(rows) - 1
        page.text(WIDTH - MARGIN - 120, top + index * 14, label, 9.5, bold=last, align="right")
        page.text(WIDTH - MARGIN, top + index * 14, _amount(amount, data), 9.5, bold=last, align="right")
    return top + 14 * len(rows)


def _legal_footer(page: Canvas2, data: dict[str, Any]) -> None:
    """Four columns: address, contact, bank, register and VAT id."""
    name, street, city = data["vendor"]
    words = _w(data)
    top = HEIGHT - 70
    page.rule(top - 6)
    columns = [
        [name, street, city],
        [f"{words['phone']} +49 40 123456", f"billing@{data['domain']}", f"www.{data['domain']}"],
        [f"{words['bank']}: Musterbank", f"IBAN {data['iban']}", "BIC MUSTDEFFXXX"],
        [f"{words['director']}: Anna Beispiel", words["register"], f"{words['vat_id']} {data['vat_id']}"],
    ]
    step = (WIDTH - 2 * MARGIN) / 4
    for column, lines in enumerate(columns):
        for index, line in enumerate(lines):
            page.text(MARGIN + column * step, top + index * 9, line, 6.5)


# --- templates -----------------------------------------------------------------------------------


def us(data: dict[str, Any]) -> bytes:
    page = Canvas2(data["font"])
    words = _w(data)
    bottom = _stacked_letterhead(page, data, MARGIN, "left")
    page.text(WIDTH - MARGIN, 38, words["title"], 22, bold=True, align="right")
    meta = _right_stack(page, data, 70)
    top = _addresses(page, data, max(bottom, meta) + 25, ship=True) + 25
    top = _positions(page, data, top, data["lines"])
    top = _totals_right(page, data, top + 6)
    page.text(MARGIN, top + 40, f"{words['payable']} {data['vendor'][0]}.", 9)
    page.text(MARGIN, top + 54, words["thanks"], 9, bold=True)
    return page.pdf()


def din(data: dict[str, Any]) -> bytes:
    page = Canvas2(data["font"])
    words = _w(data)
    name, street, city = data["vendor"]
    if data["letterhead"]:
        page.text(WIDTH - MARGIN, 40, name, 14, bold=True, align="right")
    page.text(MARGIN, 120, f"{name} · {street} · {city}", 6.5)
    for index, line in enumerate(_BUYERS[data["lang"]]):
        page.text(MARGIN, 134 + index * 12, line, 10)
    for index, (label, value) in enumerate(data["meta"]):
        page.text(360, 120 + index * 12, label, 8.5)
        page.text(460, 120 + index * 12, value, 8.5)
    page.text(MARGIN, 230, f"{words['title'].capitalize()} {data['number']}", 12, bold=True)
    page.text(MARGIN, 255, words["greeting"], 10)
    page.text(MARGIN, 268, words["intro"], 10)
    top = _positions(page, data, 295, data["lines"])
    top = _totals_right(page, data, top + 6)
    page.text(MARGIN, top + 30, words["regards"], 10)
    _legal_footer(page, data)
    return page.pdf()


def _cell_table(page: Canvas2, top: float, cells: list[tuple[str, str]], *, left: float, right: float) -> float:
    """A bordered table: a row of labels over a row of values, each centred in its cell."""
    step = (right - left) / len(cells)
    page.box(left, top - 4, right, top + 30)
    page.rule(top + 12, left, right)
    for index, (label, value) in enumerate(cells):
        centre = left + step * (index + 0.5)
        page.text(centre, top, label, 7.5, bold=True, align="center")
        page.text(centre, top + 16, value, 9, align="center")
    return top + 34


def centred(data: dict[str, Any]) -> bytes:
    page = Canvas2(data["font"])
    words = _w(data)
    name, street, city = data["vendor"]
    page.text(WIDTH / 2, 40, name, 17, bold=True, align="center")
    page.text(WIDTH / 2, 62, f"{street}, {city}", 8, align="center")
    page.text(WIDTH / 2, 95, words["title"], 14, bold=True, align="center")
    top = _addresses(page, data, 125, ship=False) + 20
    top = _cell_table(page, top, [tuple(m) for m in data["meta"]], left=MARGIN, right=WIDTH - MARGIN) + 20
    top = _positions(page, data, top, data["lines"]) + 10
    rate, tax = data["taxes"][0]
    cells = [
        (words["net"], _amount(data["net"], data)),
        (words["rate"], f"{rate} %"),
        (words["vat"], _amount(tax, data)),
        (words["gross"], _amount(data["total"], data)),
    ]
    _cell_table(page, top, cells, left=WIDTH / 2 - 40, right=WIDTH - MARGIN)
    page.text(MARGIN, HEIGHT - 60, f"{name} · {words['vat_id']} {data['vat_id']} · IBAN {data['iban']}", 7)
    return page.pdf()


def twopage(data: dict[str, Any]) -> bytes:
    page = Canvas2(data["font"])
    words = _w(data)
    name, street, city = data["vendor"]
    page.text(MARGIN, 40, name, 16, bold=True)
    page.text(MARGIN, 60, f"{street} | {city}", 8)
    top = _addresses(page, data, 95, ship=False)
    for index, (label, value) in enumerate(data["meta"]):
        page.text(WIDTH / 2 + 40, 95 + index * 13, f"{label}:", 9)
        page.text(WIDTH / 2 + 140, 95 + index * 13, value, 9)
    page.text(MARGIN, top + 25, words["title"], 15, bold=True)
    first, rest = data["lines"][:18], data["lines"][18:]
    top = _positions(page, data, top + 55, first)
    carried = sum((Decimal(line[3]) for line in first), Decimal(0))
    page.text(WIDTH - MARGIN - 120, top, words["carried"], 9, align="right")
    page.text(WIDTH - MARGIN, top, money(str(carried), data["numbers"]), 9, align="right")
    page.text(MARGIN, HEIGHT - 60, words["continued"], 8)
    page.next_page()
    page.text(MARGIN, 40, f"{name} · {data['meta'][0][0]} {data['number']} · {words['page']} 2/2", 8)
    page.text(WIDTH - MARGIN - 120, 70, words["carried"], 9, align="right")
    page.text(WIDTH - MARGIN, 70, money(str(carried), data["numbers"]), 9, align="right")
    top = _positions(page, data, 95, rest, start=len(first) + 1)
    _totals_right(page, data, top + 6)
    _legal_footer(page, data)
    return page.pdf()


def column(data: dict[str, Any]) -> bytes:
    page = Canvas2(data["font"])
    words = _w(data)
    name, street, city = data["vendor"]
    page.text(MARGIN, 40, name, 15, bold=True)
    page.text(MARGIN, 58, f"{street} · {city}", 8)
    page.text(WIDTH - MARGIN, 40, words["title"], 18, bold=True, align="right")
    for index, (label, value) in enumerate(data["meta"]):
        page.text(WIDTH - MARGIN - 180, 75 + index * 12, f"{label}: {value}", 9)
    top = _addresses(page, data, 130, ship=False) + 25
    page.text(MARGIN, top, words["in"].format(code=data["currency"]), 8)
    top = _positions(page, data, top + 20, data["lines"])
    top = _totals_right(page, data, top + 6, code=True)
    page.text(MARGIN, HEIGHT - 60, f"{name} · {words['vat_id']} {data['vat_id']} · IBAN {data['iban']}", 7)
    return page.pdf()


def _dotted(page: Canvas2, top: float, label: str, value: str, bold: bool = False) -> None:
    page.text(MARGIN, top, label + " " + "." * 60, 9.5, bold=bold)
    page.text(WIDTH - MARGIN, top, value, 9.5, bold=bold, align="right")


def letter(data: dict[str, Any]) -> bytes:
    page = Canvas2(data["font"])
    words = _w(data)
    name = data["vendor"][0]
    if data["letterhead"]:
        page.text(MARGIN, 40, name.upper(), 13, bold=True)
    for index, line in enumerate(_BUYERS[data["lang"]]):
        page.text(MARGIN, 90 + index * 12, line, 10)
    for index, (label, value) in enumerate(data["meta"]):
        page.text(WIDTH - MARGIN - 170, 90 + index * 12, f"{label} {value}", 9)
    page.text(MARGIN, 160, f"{words['title'].capitalize()} {data['number']}", 12, bold=True)
    page.text(MARGIN, 185, words["greeting"], 10)
    page.text(MARGIN, 198, words["intro"], 10)
    top = 225
    for description, _quantity, _price, amount in data["lines"]:
        _dotted(page, top, description, _amount(amount, data))
        top += 14
    top += 10
    _dotted(page, top, words["net"], _amount(data["net"], data))
    for rate, amount in data["taxes"]:
        top += 14
        _dotted(page, top, _tax_label(data, rate), _amount(amount, data))
    _dotted(page, top + 16, words["total"], _amount(data["total"], data), bold=True)
    page.text(MARGIN, top + 60, words["regards"], 10)
    page.text(MARGIN, top + 74, name, 10)
    _legal_footer(page, data)
    return page.pdf()


TEMPLATES: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "us": us,
    "din": din,
    "centred": centred,
    "twopage": twopage,
    "column": column,
    "letter": letter,
}


def render(case: Case) -> bytes:
    return TEMPLATES[case.data["template"]](case.data)


# --- the cases -----------------------------------------------------------------------------------

_DATES = ("2026-02-11", "2026-08-27", "2025-10-03", "2026-04-19", "2025-05-06", "2026-09-30")
_STYLES = {"en": "en", "de": "de", "fr": "fr", "nl": "de", "it": "de", "es": "de"}
_ITEMS = ("Licence", "Maintenance", "Installation", "Training", "Hosting", "Consulting", "Travel", "Support")


def _lines(lang: str, index: int, count: int) -> list[list[str]]:
    lines = []
    for position in range(count):
        quantity = Decimal(1 + (position * 7 + index) % 5)
        price = (Decimal("17.35") + Decimal(position * 13 + index * 5) * Decimal("3.17")).quantize(Decimal("0.01"))
        item = f"{_ITEMS[position % len(_ITEMS)]} {position + 1}"
        lines.append([item, str(quantity), str(price), str(quantity * price)])
    return lines


def _case(lang: str, template: str, variant: int) -> dict[str, Any]:
    index = list(TEMPLATES).index(template) * 2 + variant
    vendor = _VENDORS[lang][(index + variant) % 3]
    iso = _DATES[(index + len(lang) + ord(lang[0])) % len(_DATES)]
    words = {**_WORDS[lang], **_GRID[lang]}
    number = f"{lang.upper()}-{2026 - variant}-{10311 + 71 * index + ord(lang[1])}"
    printed = printed_date(iso, lang, (index + variant) % 3, variant == 1)
    meta = [[words["number"], number], [words["date"], printed], [words["customer"], f"C{48210 + index * 17}"]]
    if template in ("us", "din", "twopage"):
        meta.append([words["order"], f"PO-{77310 + index}"])
    if template == "din":
        meta.append([words["your_order"], printed])
    if variant == 1:
        meta = [meta[2], *meta[:2], *meta[3:]]
    lines = _lines(lang, index, 24 if template == "twopage" else 3 + index % 3)
    net = sum((Decimal(line[3]) for line in lines), Decimal(0))
    rate = {"en": 20, "de": 19, "fr": 20, "nl": 21, "it": 22, "es": 21}[lang]
    tax = (net * rate / 100).quantize(Decimal("0.01"))
    total = net + tax
    currency, mark, where = [("EUR", "€", "after"), ("EUR", "EUR", "before")][variant]
    if lang == "en":
        currency, mark, where = [("USD", "$", "glued"), ("GBP", "£", "glued")][variant]
    if template == "column":
        mark = ""
    return {
        "id": f"{lang}-{template}-{variant}",
        "print": {
            "template": template,
            "lang": lang,
            "font": ("Helvetica", "Times-Roman")[variant],
            "vendor": list(vendor),
            "domain": vendor[0].split()[0].lower().replace("é", "e").replace("í", "i") + ".example",
            "letterhead": variant == 0,
            "vat_id": f"{lang.upper()}{223456780 + index}",
            "iban": "DE02 1203 0000 0000 2020 51",
            "number": number,
            "meta": meta,
            "lines": lines,
            "net": str(net),
            "taxes": [[rate, str(tax)]],
            "total": str(total),
            "currency": currency,
            "numbers": _STYLES[lang] if lang != "fr" else ("fr", "de")[variant],
            "mark": mark,
            "mark_where": where,
            "amount_header": f"{words['amount']} ({currency})" if template == "column" else None,
        },
        "expected": {
            "invoiceNumber": number,
            "invoiceDate": iso,
            "vendorName": vendor[0],
            "currency": currency,
            "totalAmount": str(total),
        },
    }


def build_cases() -> list[dict[str, Any]]:
    """Six languages × six templates × two variants (fonts, marks, date forms, meta order)."""
    return [_case(lang, template, variant) for lang in _GRID for template in TEMPLATES for variant in (0, 1)]


def main() -> None:
    about = (
        "Generated by render.py (python tests/data/layouts_grid/render.py): six label grids in EN, DE,"
        " FR, NL, IT, ES; `print` is what the page prints, `expected` the five header fields; the"
        " templates `column` and `letter` are held out. All names, numbers and addresses are invented."
    )
    (HERE / "cases.json").write_text(
        json.dumps({"_about": about, "cases": build_cases()}, indent=1, ensure_ascii=False) + "\n"
    )


if __name__ == "__main__":
    main()
