"""A second generated layout set: the shapes real vendors send, in EN, DE, FR, NL, IT and ES.

Built to measure how the text-layer reader generalises, never from the held-out corpus: telecom,
cloud and hotel bills whose layouts differ from tests/data/layouts on purpose —

- a letterhead with its address on the same line ("Name · street · city"), or only a small sender
  line above the recipient, and the seller's name again in a legal footer beside its VAT id;
- invoice numbers beside customer, account, order and booking numbers and a VAT id;
- a meta grid (labels in one row, values under them) or labels beside values;
- a line table whose "Total" column holds quantities (hours, GB) next to the money column, and a
  "Total" row under the table;
- the invoice total in a summary box at the bottom right ("Invoice Total", "Amount due", …);
- amounts with a symbol or code before or after (`€ 717,97`, `EUR 49,99`, `1 234,56 €`) and dates
  in numeric, ISO and month-name forms of each language.

`python tests/data/layouts_more/render.py` rewrites cases.json from `build_cases` (deterministic);
the PDFs are rendered at test and bench time (never committed). Each case's `expected` holds the
five header fields as the normalized invoice holds them. All names, numbers and addresses are
invented.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from tests.data.layouts.render import HEIGHT, MARGIN, WIDTH, Page  # noqa: E402
from tests.data.layouts.render import Case as LayoutCase  # noqa: E402

_MONTHS = {
    "en": ("January February March April May June July August September October November December"),
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
}

_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "number": "Invoice number",
        "date": "Invoice date",
        "due": "Due date",
        "customer": "Customer number",
        "account": "Account ID",
        "order": "Order number",
        "booking": "Booking reference",
        "vat_id": "VAT ID",
        "item": "Description",
        "usage": "Total",
        "unit": "Unit",
        "amount": "Amount",
        "net": "Subtotal",
        "tax": "VAT {rate}%",
        "total": "Invoice Total",
        "due_amount": "Amount due",
        "table_total": "Total",
        "to": "Bill to",
        "period": "Billing period",
        "title": "INVOICE",
        "room": "Room",
        "thanks": "Thank you for choosing us.",
    },
    "de": {
        "number": "Rechnungsnummer",
        "date": "Rechnungsdatum",
        "due": "Fällig am",
        "customer": "Kundennummer",
        "account": "Vertragskonto",
        "order": "Auftragsnummer",
        "booking": "Buchungsnummer",
        "vat_id": "USt-IdNr.",
        "item": "Leistung",
        "usage": "Gesamt",
        "unit": "Einheit",
        "amount": "Betrag",
        "net": "Nettobetrag",
        "tax": "MwSt. {rate} %",
        "total": "Rechnungsbetrag",
        "due_amount": "Zu zahlen",
        "table_total": "Summe",
        "to": "Rechnungsempfänger",
        "period": "Abrechnungszeitraum",
        "title": "RECHNUNG",
        "room": "Zimmer",
        "thanks": "Vielen Dank für Ihren Aufenthalt.",
    },
    "fr": {
        "number": "Numéro de facture",
        "date": "Date de facture",
        "due": "Date d'échéance",
        "customer": "N° client",
        "account": "Compte",
        "order": "N° de commande",
        "booking": "Réservation",
        "vat_id": "N° TVA",
        "item": "Désignation",
        "usage": "Total",
        "unit": "Unité",
        "amount": "Montant",
        "net": "Total HT",
        "tax": "TVA {rate} %",
        "total": "Total TTC",
        "due_amount": "Net à payer",
        "table_total": "Total",
        "to": "Client",
        "period": "Période",
        "title": "FACTURE",
        "room": "Chambre",
        "thanks": "Merci de votre confiance.",
    },
    "nl": {
        "number": "Factuurnummer",
        "date": "Factuurdatum",
        "due": "Vervaldatum",
        "customer": "Klantnummer",
        "account": "Accountnummer",
        "order": "Ordernummer",
        "booking": "Boekingsnummer",
        "vat_id": "BTW-nummer",
        "item": "Omschrijving",
        "usage": "Totaal",
        "unit": "Eenheid",
        "amount": "Bedrag",
        "net": "Subtotaal",
        "tax": "BTW {rate}%",
        "total": "Totaal incl. BTW",
        "due_amount": "Te betalen",
        "table_total": "Totaal",
        "to": "Factuuradres",
        "period": "Periode",
        "title": "FACTUUR",
        "room": "Kamer",
        "thanks": "Bedankt voor uw verblijf.",
    },
    "it": {
        "number": "Numero fattura",
        "date": "Data fattura",
        "due": "Scadenza",
        "customer": "Codice cliente",
        "account": "Conto",
        "order": "Numero ordine",
        "booking": "Prenotazione",
        "vat_id": "Partita IVA",
        "item": "Descrizione",
        "usage": "Totale",
        "unit": "Unità",
        "amount": "Importo",
        "net": "Imponibile",
        "tax": "IVA {rate}%",
        "total": "Totale fattura",
        "due_amount": "Totale da pagare",
        "table_total": "Totale",
        "to": "Destinatario",
        "period": "Periodo",
        "title": "FATTURA",
        "room": "Camera",
        "thanks": "Grazie per averci scelto.",
    },
    "es": {
        "number": "Número de factura",
        "date": "Fecha de factura",
        "due": "Fecha de vencimiento",
        "customer": "Nº cliente",
        "account": "Cuenta",
        "order": "Nº pedido",
        "booking": "Reserva",
        "vat_id": "NIF",
        "item": "Descripción",
        "usage": "Total",
        "unit": "Unidad",
        "amount": "Importe",
        "net": "Base imponible",
        "tax": "IVA {rate}%",
        "total": "Importe total",
        "due_amount": "Total a pagar",
        "table_total": "Total",
        "to": "Cliente",
        "period": "Periodo",
        "title": "FACTURA",
        "room": "Habitación",
        "thanks": "Gracias por su confianza.",
    },
}

# Vendors per language: name (with or without a legal form), street, city.
_VENDORS: dict[str, list[tuple[str, str, str]]] = {
    "en": [
        ("Brightline Telecom Ltd", "14 Canal Street", "Manchester M1 3HU"),
        ("Cloudharbor Hosting", "200 Pine Avenue", "Seattle WA 98101"),
        ("The Lantern Hotel Ltd", "3 Castle Hill", "Edinburgh EH1 2NG"),
    ],
    "de": [
        ("Funkwerk Kommunikation GmbH", "Hafenstraße 12", "20457 Hamburg"),
        ("Rechenhaus Cloud AG", "Leopoldstraße 88", "80802 München"),
        ("Hotel Alpenblick", "Seestraße 4", "83700 Rottach-Egern"),
    ],
    "fr": [
        ("Télécom Azur SAS", "18 rue de la République", "69002 Lyon"),
        ("Nuage Hébergement SARL", "7 boulevard Haussmann", "75009 Paris"),
        ("Hôtel des Remparts", "2 place du Marché", "84000 Avignon"),
    ],
    "nl": [
        ("Polderlink Telecom B.V.", "Keizersgracht 120", "1015 CW Amsterdam"),
        ("Dijkwolk Hosting B.V.", "Stationsplein 9", "3511 ED Utrecht"),
        ("Hotel De Zeeuwse Kust", "Boulevard 21", "4381 KE Vlissingen"),
    ],
    "it": [
        ("Rete Adriatica S.r.l.", "Via Roma 45", "40121 Bologna"),
        ("Nuvola Servizi S.p.A.", "Corso Buenos Aires 12", "20124 Milano"),
        ("Albergo Belvedere", "Via del Lago 3", "22021 Bellagio"),
    ],
    "es": [
        ("Telefonía Ibérica S.L.", "Calle Mayor 22", "28013 Madrid"),
        ("Nube Datos S.A.", "Avenida Diagonal 410", "08037 Barcelona"),
        ("Hostal La Alameda", "Paseo del Prado 8", "41004 Sevilla"),
    ],
}

_BUYERS: dict[str, list[str]] = {
    "en": ["Fabrikam Logistics Ltd", "Accounts Payable", "9 Dock Road, Liverpool L3 4AA"],
    "de": ["Müller & Söhne KG", "Buchhaltung", "Ringstraße 5, 50667 Köln"],
    "fr": ["Boulangerie Martin", "Service comptabilité", "4 rue Victor Hugo, 33000 Bordeaux"],
    "nl": ["Van Dijk Installaties", "Crediteurenadministratie", "Markt 3, 5611 EB Eindhoven"],
    "it": ["Ferri Costruzioni", "Amministrazione", "Via Garibaldi 7, 10122 Torino"],
    "es": ["Construcciones Ruiz", "Contabilidad", "Calle Sol 4, 46001 Valencia"],
}


# The second variant of each language: other spellings of the same labels (number, date, net,
# tax, total, amount due), larger amounts (thousands separators) and other name separators.
_ALT: dict[str, dict[str, str]] = {
    "en": {
        "number": "Invoice #",
        "date": "Date of issue",
        "net": "Net total",
        "tax": "Tax ({rate}%)",
        "total": "Total due",
        "due_amount": "Balance due",
    },
    "de": {
        "number": "Rechnung Nr.",
        "date": "Datum",
        "net": "Summe netto",
        "tax": "USt. {rate} %",
        "total": "Gesamtsumme",
        "due_amount": "Zahlbetrag",
    },
    "fr": {
        "number": "Facture N°",
        "date": "Date d'émission",
        "net": "Montant HT",
        "tax": "TVA ({rate} %)",
        "total": "Montant TTC",
        "due_amount": "Total à payer",
    },
    "nl": {
        "number": "Factuurnr.",
        "date": "Datum",
        "net": "Totaal excl. BTW",
        "tax": "BTW {rate}%",
        "total": "Totaalbedrag",
        "due_amount": "Totaal te betalen",
    },
    "it": {
        "number": "Fattura n.",
        "date": "Data emissione",
        "net": "Totale imponibile",
        "tax": "IVA {rate}%",
        "total": "Importo totale",
        "due_amount": "Totale documento",
    },
    "es": {
        "number": "Nº factura",
        "date": "Fecha de emisión",
        "net": "Subtotal",
        "tax": "IVA ({rate}%)",
        "total": "Total factura",
        "due_amount": "Total a pagar",
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


@cache
def cases() -> tuple[Case, ...]:
    raw = json.loads((HERE / "cases.json").read_text())
    return tuple(Case(c["id"], c["print"], c["expected"]) for c in raw["cases"])


def money(value: str, style: str) -> str:
    text = f"{Decimal(value):,.2f}"
    group, point = {"en": (",", "."), "de": (".", ","), "fr": (" ", ",")}[style]
    return text.replace(",", "\0").replace(".", point).replace("\0", group)


def priced(value: str, data: dict[str, Any]) -> str:
    text = money(value, data["numbers"])
    mark, where = data["mark"], data["mark_where"]
    if where == "before":
        return f"{mark} {text}"
    if where == "glued":
        return f"{mark}{text}"
    return f"{text} {mark}"


_SEP = (" · ", " - ", " | ")
_PAID = {
    "en": "Amount paid",
    "de": "Anzahlung",
    "fr": "Acompte",
    "nl": "Reeds betaald",
    "it": "Acconto",
    "es": "Pagado",
}
_QTY = {"en": "Qty", "de": "Menge", "fr": "Qté", "nl": "Aantal", "it": "Q.tà", "es": "Cant."}

# --- blocks --------------------------------------------------------------------------------------


def _letterhead(page: Page, data: dict[str, Any]) -> float:
    name, street, city = data["vendor"]
    style = data["letterhead"]
    if style == "inline":
        # Name and address on one line, the name in bold at the same size: "Name · street · city".
        page.text(MARGIN, 40, _SEP[data.get("sep", 0)].join((name, street, city)), 12, bold=True)
        return 75.0
    if style == "big-right":
        page.text(WIDTH - MARGIN, 40, name, 18, bold=True, align="right")
        page.text(WIDTH - MARGIN, 64, f"{street} · {city}", 8, align="right")
        return 90.0
    # "sender": no letterhead but the small sender line above the recipient's address.
    return 40.0


def _recipient(page: Page, data: dict[str, Any], top: float) -> float:
    name, street, city = data["vendor"]
    words = _WORDS[data["lang"]]
    if data["letterhead"] in ("sender", "inline"):
        page.text(MARGIN, top, _SEP[data.get("sep", 0)].join((name, street, city)), 6.5)
        top += 12
    else:
        page.text(MARGIN, top, words["to"] + ":", 8)
        top += 12
    for index, line in enumerate(_BUYERS[data["lang"]]):
        page.text(MARGIN, top + index * 12, line, 9.5)
    return top + 12 * 3


def _meta_beside(page: Page, data: dict[str, Any], top: float, x: float) -> float:
    for index, (label, value) in enumerate(data["meta"]):
        page.text(x, top + index * 13, f"{label}:", 9)
        page.text(x + 105, top + index * 13, value, 9)
    return top + 13 * len(data["meta"])


def _meta_grid(page: Page, data: dict[str, Any], top: float) -> float:
    step = (WIDTH - 2 * MARGIN) / len(data["meta"])
    for index, (label, value) in enumerate(data["meta"]):
        page.text(MARGIN + index * step, top, label, 7.5, bold=True)
        page.text(MARGIN + index * step, top + 12, value, 9)
    return top + 30


def _table(page: Page, data: dict[str, Any], top: float) -> float:
    """Description | quantity column headed "Total" (hours, GB) | unit | amount; then a Total row."""
    words = _WORDS[data["lang"]]
    cols = (MARGIN, WIDTH - MARGIN - 210, WIDTH - MARGIN - 150, WIDTH - MARGIN)
    # The third variant: "Qty" over the quantities, "Total" over the money column (line totals).
    usage, amount_header = (
        (_QTY[data["lang"]], words["table_total"])
        if data.get("money_total")
        else (
            words["usage"],
            words["amount"],
        )
    )
    page.rule(top - 4)
    page.text(cols[0], top, words["item"], 8.5, bold=True)
    page.text(cols[1], top, usage, 8.5, bold=True, align="right")
    page.text(cols[2], top, words["unit"], 8.5, bold=True)
    page.text(cols[3], top, amount_header, 8.5, bold=True, align="right")
    top += 15
    quantity_sum = Decimal(0)
    for description, quantity, unit, amount in data["lines"]:
        quantity_sum += Decimal(quantity)
        page.text(cols[0], top, description, 9)
        page.text(cols[1], top, money(quantity, data["numbers"]), 9, align="right")
        page.text(cols[2], top, unit, 9)
        page.text(cols[3], top, money(amount, data["numbers"]), 9, align="right")
        top += 13
    page.rule(top)
    if data.get("table_total_row"):
        top += 4
        page.text(cols[0], top, words["table_total"], 9, bold=True)
        page.text(cols[1], top, money(str(quantity_sum), data["numbers"]), 9, bold=True, align="right")
        page.text(cols[3], top, money(data["net"], data["numbers"]), 9, bold=True, align="right")
        top += 13
    return top + 14


def _summary_box(page: Page, data: dict[str, Any], top: float) -> None:
    """Net, tax rows and the total in a box at the bottom right; the amount due under it."""
    words = {**_WORDS[data["lang"]], **data.get("labels", {})}
    left, right = WIDTH - MARGIN - 220, WIDTH - MARGIN
    rows = [(words["net"], data["net"], False)]
    rows += [(words["tax"].format(rate=rate), amount, False) for rate, amount in data["taxes"]]
    if not data.get("due_below"):
        rows.append((words[data["total_word"]], data["total"], True))
    if paid := data.get("paid"):
        # The fourth variant: a prepayment deducted, the amount due below the total.
        rows.append((_PAID[data["lang"]], paid, False))
        rows.append((words["due_amount"], str(Decimal(data["total"]) - Decimal(paid)), True))
    box_top = max(top, HEIGHT - 230 - 15 * len(rows))
    if data.get("due_below"):
        # The total under the box: its label on one line, the amount large on the next, both right.
        below = box_top + 15 * len(rows) + 18
        page.text(right, below, words[data["total_word"]], 9, align="right")
        page.text(right, below + 13, priced(data["total"], data), 16, bold=True, align="right")
    page.canvas.setLineWidth(0.7)
    page.canvas.rect(left - 8, HEIGHT - box_top - 15 * len(rows) - 4, right - left + 16, 15 * len(rows) + 10)
    for index, (label, amount, bold) in enumerate(rows):
        page.text(left, box_top + 2 + index * 15, label, 9.5, bold=bold)
        page.text(right, box_top + 2 + index * 15, priced(amount, data), 9.5, bold=bold, align="right")


def _footer(page: Page, data: dict[str, Any]) -> None:
    name, street, city = data["vendor"]
    words = _WORDS[data["lang"]]
    top = HEIGHT - 80
    page.text(MARGIN, top - 30, words["thanks"], 9)
    page.rule(top - 6)
    parts = [name, street, city] if data["footer_name"] else [street, city]
    page.text(MARGIN, top, _SEP[data.get("sep", 0)].join(parts), 7)
    page.text(MARGIN, top + 10, f"{words['vat_id']} {data['vat_id']} · IBAN {data['iban']}", 7)


# --- templates -----------------------------------------------------------------------------------


def telecom(data: dict[str, Any]) -> bytes:
    """Letterhead, recipient left, meta beside values right, usage table, summary box."""
    page = _CasePage(data)
    top = _letterhead(page, data)
    bottom = _recipient(page, data, top + 10)
    meta = _meta_beside(page, data, top + 10, WIDTH / 2 + 30)
    top = max(bottom, meta) + 25
    page.text(MARGIN, top, _WORDS[data["lang"]]["title"], 15, bold=True)
    top = _table(page, data, top + 35)
    _summary_box(page, data, top)
    _footer(page, data)
    return page.pdf()


def cloud(data: dict[str, Any]) -> bytes:
    """Title top left, letterhead right, recipient, a grid of meta labels over values, table, box."""
    page = _CasePage(data)
    top = _letterhead(page, data)
    # An inline letterhead takes the top line: the title goes under it.
    page.text(MARGIN, 40 if data["letterhead"] != "inline" else top - 10, _WORDS[data["lang"]]["title"], 20, bold=True)
    top += 25 if data["letterhead"] == "inline" else 0
    top = _recipient(page, data, max(top, 80.0) + 10) + 20
    top = _meta_grid(page, data, top)
    top = _table(page, data, top + 15)
    _summary_box(page, data, top)
    _footer(page, data)
    return page.pdf()


def hotel(data: dict[str, Any]) -> bytes:
    """Letterhead, meta beside values at the left under the recipient, folio table, summary box."""
    page = _CasePage(data)
    top = _letterhead(page, data)
    top = _recipient(page, data, top + 10) + 20
    top = _meta_beside(page, data, top, MARGIN) + 20
    top = _table(page, data, top + 10)
    _summary_box(page, data, top)
    _footer(page, data)
    return page.pdf()


class _CasePage(Page):
    """The layouts set's canvas, with the case's font."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(LayoutCase("more", {"font": data["font"]}, {}, None))


TEMPLATES: dict[str, Callable[[dict[str, Any]], bytes]] = {"telecom": telecom, "cloud": cloud, "hotel": hotel}


def render(case: Case) -> bytes:
    return TEMPLATES[case.data["template"]](case.data)


# --- the cases -----------------------------------------------------------------------------------

_DATES = ("2026-03-17", "2026-11-05", "2025-07-23", "2026-01-30", "2026-06-14", "2025-12-09")
_STYLES = {"en": "en", "de": "de", "fr": "fr", "nl": "de", "it": "de", "es": "de"}


def _printed_date(iso: str, lang: str, form: int, ordinal: bool = False) -> str:
    year, month, day = (int(p) for p in iso.split("-"))
    name = _MONTHS[lang].split()[month - 1]
    if form == 0 and lang == "en" and ordinal:
        suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
        return f"{day}{suffix} {name} {year}"
    if form == 0:
        return {"en": f"{day} {name} {year}", "de": f"{day}. {name} {year}", "es": f"{day} de {name} de {year}"}.get(
            lang, f"{day} {name} {year}"
        )
    if form == 1:
        return iso
    separator = {"en": "/", "de": ".", "fr": "/", "nl": "-", "it": "/", "es": "/"}[lang]
    # English numeric dates are ambiguous by day and month: print the month name there.
    if lang == "en":
        return f"{name[:3]} {day}, {year}"
    return f"{day:02d}{separator}{month:02d}{separator}{year}"


def _case(lang: str, index: int) -> dict[str, Any]:
    template = ("telecom", "cloud", "hotel")[index % 3]
    vendor = _VENDORS[lang][index % 3]
    iso = _DATES[(index + len(lang) + ord(lang[0])) % len(_DATES)]
    words = {**_WORDS[lang], **(_ALT[lang] if 6 <= index < 12 else {})}
    number = f"{lang.upper()}{26 + index}-{40117 + 97 * index + ord(lang[1])}"
    meta_keys = {
        "telecom": ("customer", "number", "date", "account", "due"),
        "cloud": ("account", "number", "date", "order", "due"),
        "hotel": ("booking", "room", "number", "date", "customer"),
    }[template]
    due = f"{iso[:8]}{min(int(iso[8:]) + 14, 28):02d}" if int(iso[8:]) < 14 else iso
    values = {
        "customer": f"K{700123 + index * 31}",
        "account": f"{9000 + index}-{431 + index}",
        "order": f"PO-{58120 + index}",
        "booking": f"BK{88412 + index}",
        "room": str(210 + index),
        "number": number,
        "date": _printed_date(iso, lang, (index + 1) % 3, index >= 12),
        "due": _printed_date(due, lang, (index + 1) % 3, index >= 12),
    }
    scale = Decimal("12.37") if 6 <= index < 12 else Decimal(index - 10 if index >= 12 else 1)
    lines = [
        (item, quantity, unit, str((Decimal(amount) * scale).quantize(Decimal("0.01"))))
        for item, quantity, unit, amount in (
            ("Service plan" if lang == "en" else _WORDS[lang]["item"] + " 1", "1.00", "x", "39.90"),
            ("Data" if lang == "en" else _WORDS[lang]["item"] + " 2", f"{12 + index}.50", "GB", "12.60"),
            ("Support hours" if lang == "en" else _WORDS[lang]["item"] + " 3", "3.00", "h", "135.00"),
        )
    ]
    net = sum((Decimal(line[3]) for line in lines), Decimal(0))
    rate = {"en": 20, "de": 19, "fr": 20, "nl": 21, "it": 22, "es": 21}[lang]
    tax = (net * rate / 100).quantize(Decimal("0.01"))
    taxes = [[rate, str(tax)]]
    if index >= 18:
        # Two rates: the last line at the reduced rate.
        reduced = {"en": 5, "de": 7, "fr": "5,5", "nl": 9, "it": 10, "es": 10}[lang]
        full = ((net - Decimal(lines[-1][3])) * rate / 100).quantize(Decimal("0.01"))
        low = (Decimal(lines[-1][3]) * Decimal(str(reduced).replace(",", ".")) / 100).quantize(Decimal("0.01"))
        tax, taxes = full + low, [[rate, str(full)], [reduced, str(low)]]
    total = net + tax
    currency, mark, where = [("EUR", "€", "before"), ("EUR", "EUR", "before"), ("EUR", "€", "after")][index % 3]
    if lang == "en":
        currency, mark, where = [("GBP", "£", "glued"), ("USD", "USD", "before"), ("GBP", "GBP", "after")][index % 3]
    letterhead = ("inline", "big-right", "sender")[(index + index // 3 + (lang in ("fr", "it"))) % 3]
    return {
        "id": f"{lang}-{template}-{letterhead}",
        "print": {
            "template": template,
            "lang": lang,
            "font": ("Helvetica", "Times-Roman", "Helvetica")[index % 3],
            "vendor": list(vendor),
            "letterhead": letterhead,
            "footer_name": index % 2 == 0 or letterhead == "sender",
            "vat_id": f"{lang.upper()}{123456780 + index}",
            "iban": "DE02 1203 0000 0000 2020 51",
            "meta": [[words[key], values[key]] for key in meta_keys],
            "lines": [list(line) for line in lines],
            "table_total_row": index % 2 == 1,
            "net": str(net),
            "taxes": taxes,
            "paid": "50.00" if index >= 18 and index % 2 == 0 else None,
            "total": str(total),
            "total_word": ("total", "due_amount")[index % 2],
            "labels": {k: words[k] for k in ("net", "tax", "total", "due_amount")} if 6 <= index < 12 else {},
            "sep": index // 2 % 3 if index >= 6 else 0,
            "money_total": index >= 12,
            "due_below": index >= 12 and index % 2 == 0,
            "numbers": _STYLES[lang] if lang != "fr" else ("fr", "de")[index % 2],
            "mark": mark,
            "mark_where": where,
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
    """Six languages × 24 variants: each template eight times, letterhead styles, marks and
    separators rotating; the second six of each language with the other label spellings, the
    third with "Total" over the money column, the total under the box, English ordinal dates; the
    fourth with two tax rates and, on every other, a prepayment that leaves an amount due.
    """
    return [_case(lang, index) for lang in _WORDS for index in range(24)]


def main() -> None:
    about = (
        "Generated by render.py (python tests/data/layouts_more/render.py): telecom, cloud and hotel"
        " layouts in EN, DE, FR, NL, IT, ES; `print` is what the page prints, `expected` the five header"
        " fields. All names, numbers and addresses are invented."
    )
    cases_ = build_cases()
    ids = [c["id"] for c in cases_]
    for position, case in enumerate(cases_):
        if ids.count(case["id"]) > 1:
            case["id"] = f"{case['id']}-{position % 24}"
    (HERE / "cases.json").write_text(
        json.dumps({"_about": about, "cases": cases_}, indent=1, ensure_ascii=False) + "\n"
    )


if __name__ == "__main__":
    main()
