"""Label vocabulary (English, German, French, Dutch, Italian, Spanish) and label → value pairing.

Owns which printed label means which AnalyzeExpense field type, and how a value is found for it:
the rest of the label's segment, else the next segment on the same row (the value column), else
the rest of the row, else the value printed directly below the label (labels above values, a row
of columns), or the two values stacked around it. `jobs.extract.ocr.page_walk` walks the lines with
this pairing and adds what needs the page around a line (headings, the letter's date, a number
under the title).

The vocabulary is ordered from specific ("Bruttosumme") to generic ("Total"); each field type
keeps the candidates of its most specific entry only. For the invoice number, the issue date and
the total every distinct value of that entry is kept, so two that disagree reach the normalizer
as a conflict and the document goes to review; the other types keep the first in reading order
(a tax row per rate is normal). When no label names the seller, `jobs.extract.ocr.fields` asks
`jobs.extract.ocr.letterhead`, which reads names with this module's `name_of` and `split_words`.

Some producers' text layers drop the spaces between words ("RechnungssummeohneUSt."): every
blank a label pattern spells is optional, so a label matches with or without its spaces.

Confidence is the weakest value word's confidence (tesseract word confidence, or the text
layer's 99). A vendor name found by a guess rather than a seller label is capped below the review
threshold so validation sends it to REVIEW_REQUIRED.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from jobs.contract.currencies import is_iso_currency
from jobs.extract.ocr.lines import Line, Segment, Word
from jobs.extract.ocr.months import month_name_date
from jobs.extract.ocr.page_locale import CODES as _CODES
from jobs.extract.parsing import DATE_IN_TEXT_RE, parse_date, parse_money

# A guess (company-suffix line, first prominent line) never reaches the default threshold of 80.
GUESS_CONFIDENCE_CAP = 60.0
# "Zuschläge" OCR'd as "Zuschlage", "Rechnungsnr" etc.: spellings tolerant of lost diacritics.
_A = "(?:ä|a|ae)"
_U = "(?:ü|u|ue)"
_E = "(?:é|e)"
# French "à" ("Net à payer"), with the accent or without it.
_A_GRAVE = "(?:à|a)"
# tesseract reads the "u" of "Steuer" as "v" often enough on 150-dpi scans to name it here.
_STEUER = "ste[uv]er"
# "N°" as tesseract often reads it: "N’", "N'".
NO_SIGN = "n[°º’']"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A label found on a page with the value paired to it."""

    type: str
    rank: int  # index of the vocabulary entry: lower is more specific
    label: list[Word]
    value: list[Word]
    value_text: str
    confidence: float
    currency: str | None = None
    # A guess or a vetoed reading: the document goes to review whatever the confidence threshold
    # (jobs.extract.ocr.engine adds GUESSED:<field>).
    guess: bool = False


def as_guess(candidate: Candidate) -> Candidate:
    """The candidate as a guess: capped below the review threshold and marked, for a person to confirm."""
    return replace(candidate, confidence=min(candidate.confidence, GUESS_CONFIDENCE_CAP), guess=True)


@dataclass(frozen=True, slots=True)
class _Entry:
    type: str
    pattern: re.Pattern[str]
    value: Callable[[str], str | None]


_ID_TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9/\-_.]*")
_CENTS_RE = re.compile(r"\d[.,]\d{2}(?!\d)")
# A whole amount counts when a currency mark stands beside it ("Rs 1939", "$120", "49 EUR"): a
# bare digit run is an ID, a marked one is money.
_WHOLE = r"(?:\d{1,3}(?:,\d{3})+|\d{1,7})(?![\d.,]*\d)"
_MARKED_WHOLE_RE = re.compile(
    rf"(?:(?<![A-Za-z])(?:Rs\.?|[€£$₹]|{'|'.join(_CODES)}|INR)\s?-?{_WHOLE}"
    rf"|(?<![\w.,]){_WHOLE}\s?(?:€|{'|'.join(_CODES)}|INR)(?![A-Za-z]))"
)
_SYMBOL_CODES = {"€": "EUR", "£": "GBP"}


def read_identifier(text: str) -> str | None:
    tokens: list[str] = _ID_TOKEN_RE.findall(text)
    for found in tokens:
        token = found.rstrip(".-/")
        if any(ch.isdigit() for ch in token) and not DATE_IN_TEXT_RE.fullmatch(token):
            return token
    return None


# OCR reads the French ordinal "1er" as "ler" or "Ier".
_FIRST_OF_MONTH_RE = re.compile(r"(?<!\w)[lI]er(?=\s)")


def read_date(text: str) -> str | None:
    text = _FIRST_OF_MONTH_RE.sub("1er", text)
    for match in DATE_IN_TEXT_RE.finditer(text):
        try:
            parse_date(match.group(0))
        except ValueError:
            continue
        return match.group(0)
    return month_name_date(text)


# OCR reads the Swiss thousands apostrophe of 1'103.16 as a degree sign.
_DEGREE_GROUPING_RE = re.compile(r"(?<=\d)°(?=\d{3}\b)")


def _money(text: str) -> str | None:
    text = _DEGREE_GROUPING_RE.sub("'", text)
    # Invoice amounts print their cents; a bare digit run next to a money label is an ID or a
    # reference ("USt-IdNr DE136695976" read as "USt ... 136695976"), not an amount.
    shape = _CENTS_RE if _CENTS_RE.search(text) else _MARKED_WHOLE_RE
    if not shape.search(text):
        return None
    # The value cell may carry a currency code or symbol on either side: try the widest first.
    tokens = text.split()
    for size in range(min(len(tokens), 3), 0, -1):
        for start in (len(tokens) - size, 0):
            candidate = " ".join(tokens[start : start + size])
            if not shape.search(candidate):
                continue
            try:
                parse_money(candidate)
            except ValueError:
                continue
            return candidate
    return None


def money_in(text: str) -> str | None:
    """The amount a cell prints, with its currency mark, if it prints one with cents."""
    return _money(text)


def _unsigned_money(text: str) -> str | None:
    # "Erhaltene Anzahlungen -50,00": a paid amount is printed as a deduction.
    found = _money(text)
    return found.lstrip("-−").strip() if found else None


# A currency label's value is a code or a symbol and nothing else: "Währung der Umsatzsteuerbuchung
# : EUR" names the tax's currency, not the invoice's.
_STATED_CURRENCY_RE = re.compile(r"^[:\s]*([A-Za-z]{3}|€|£)[.\s]*$")


def _stated_currency(text: str) -> str | None:
    match = _STATED_CURRENCY_RE.match(text)
    if match is None:
        return None
    code = match.group(1).upper()
    return code if is_iso_currency(code) else _SYMBOL_CODES.get(code)


def name_of(text: str) -> str | None:
    """A printed name (a vendor's): the text without edge punctuation, if it has two letters or more."""
    cleaned = text.strip(" :|-,;")
    return cleaned if sum(ch.isalpha() for ch in cleaned) >= 2 else None


# The nouns of the other dates an invoice prints: due, delivery, order, payment, service.
_OTHER_DATE_NOUN = (
    rf"(?:{_E}ch{_E}ance|livraison|commande|paiement|r{_E}glement|delivery|order|payment|supply|shipment|dispatch"
    rf"|due|lieferung|leistung|bestellung|zahlung|f{_A}lligkeit|consegna|scadenza|ordine|pagamento|entrega"
    r"|vencimiento|pedido|pago|levering|bestelling|betaling)"
)


def _entries(kind: str, value: Callable[[str], str | None], *patterns: str) -> list[_Entry]:
    return [_Entry(kind, re.compile(_spaces_optional(p), re.IGNORECASE), value) for p in patterns]


def _spaces_optional(pattern: str) -> str:
    # "\s+" between label words becomes "\s*": glued text layers print labels without blanks.
    return pattern.replace(r"\s+", r"\s*")


VOCABULARY: list[_Entry] = [
    *_entries(
        "INVOICE_RECEIPT_ID",
        read_identifier,
        r"^(?:(?:invoice|inv\.?|bill)\s*(?:no\.?|number|num\.?|#|nr\.?|id)"
        r"|rechnungs?[-\s]?(?:nummer|nr\.?|no\.?)|beleg[-\s]?(?:nummer|nr\.?)"
        rf"|facture\s*(?:{NO_SIGN}|no\.?|num{_E}ro)|{NO_SIGN}\s*(?:de\s+)?facture|num{_E}ro\s+de\s+facture"
        rf"|factuur\s*(?:nummer|nr\.?|no\.?)|n[°º.]\s*(?:de\s+)?factura|fattura\s*(?:n\.?|nr\.?|n[°º]|numero)|(?:numero|n\.|nr\.?)\s+(?:della\s+)?fattura"
        rf"|factura\s*(?:n[°º.]?|no\.?|n{_U}m(?:\.|ero|\u00e9ro)?)|n[u\u00fa]mero\s+de\s+(?:la\s+)?factura"
        r"|(?:credit\s+note|gutschrift|creditnota|nota\s+di\s+credito)\s*(?:no\.?|nr\.?|number|#))\s*:?",
    ),
    *_entries(
        "INVOICE_RECEIPT_DATE",
        read_date,
        rf"^(?:invoice\s+date|date\s+of\s+(?:invoice|issue)|issue\s+date|date\s+issued|issued(?:\s+on)?"
        rf"|rechnungsdatum|belegdatum|ausstellungsdatum|ausgestellt\s+am|datum\s+der\s+rechnung"
        rf"|date\s+de\s+(?:la\s+)?facture|date\s+d'{_E}mission|{_E}mise?\s+le|date\s+de\s+facturation"
        r"|beleg[-\s]?datum|factuurdatum|datum\s+factuur|data\s+(?:della\s+)?fattura|data\s+(?:di\s+)?emissione"
        r"|fecha\s+(?:de\s+)?(?:la\s+)?factura|fecha\s+de\s+(?:emisi[o\u00f3]n|expedici[o\u00f3]n))\s*:?",
        # A bare "Date" qualified by another date's noun ("Date d'échéance", "Date de livraison",
        # "Date of delivery", "Datum der Lieferung") names that date, never the invoice's.
        r"^(?:date|datum|data|fecha)\s*:?(?=\s|$)"
        rf"(?!\s+(?:d['’]|(?:de|du|des|of|der|di|del|della|van|da|for)\s+(?:la\s+|l['’]|the\s+)?){_OTHER_DATE_NOUN})",
        # A letter-style title with the date beside it: "Beitragsrechnung      24. Januar 2014".
        r"^(?:\w*rechnung|invoice|facture|factuur|fattura|factura)$",
    ),
    *_entries(
        "DUE_DATE",
        read_date,
        rf"^(?:due\s+date|payment\s+due|f{_A}lligkeit(?:sdatum)?|zahlbar\s+bis|date\s+d'{_E}ch{_E}ance|{_E}ch{_E}ance"
        r"|vervaldatum|scadenza|data\s+(?:di\s+)?scadenza|fecha\s+de\s+vencimiento|vencimiento)\s*:?",
    ),
    *_entries(
        "TOTAL",
        _money,
        r"^(?:bruttosumme|gesamtbetrag(?!\s*(?:der|netto|ohne|exkl))(?:\s+brutto)?|gesamtsumme(?:\s+brutto)?"
        r"|rechnungsbetrag|rechnungsbeitrag|rechnungssumme\s+brutto|endbetrag|summe\s+brutto|gesamt\s+brutto"
        r"|bruttobetrag|total\s+ttc|montant\s+ttc|grand\s+total|invoice\s+total"
        r"|total\s+amount|total\s+incl\.?(?:\s+vat)?|montant\s+total(?!\s*(?:ht|hors))"
        r"|totaal\s+(?:bedrag\s+)?(?:incl\.?|inclusief)(?:\s+btw)?|factuurbedrag|totaalbedrag"
        r"|totale\s+(?:fattura|documento|complessivo)|importo\s+totale"
        r"|importe\s+total|total\s+factura|endsumme|rechnungsendbetrag|invoice\s+amount"
        r"|(?:gross(?:\s+(?:amount|total))?|brutto|ttc)(?!\w))\s*:?",
        r"^(?:total|totaal|totale)(?!\s*(?:ht\b|net|excl|hors|tva|vat|tax|mwst|ust|btw|iva|imponibile))\s*:?",
    ),
    *_entries(
        "SUBTOTAL",
        _money,
        r"^(?:rechnungssumme\s+ohne\s+ust\.?|nettosumme|summe\s+netto|gesamt\s+netto|zwischensumme"
        r"|subtotal|sub[-\s]total|net\s+(?:total|amount)|total\s+net|total\s+ht|montant\s+ht|sous[-\s]total"
        r"|total\s+excl\.?(?:\s+vat)?|amount\s+excl\.?(?:\s+vat)?|nettobetrag|rechnungssumme\s+netto"
        r"|totaal\s+(?:excl\.?|exclusief)(?:\s+btw)?|subtotaal|imponibile|totale\s+imponibile|base\s+imponible)\s*:?",
    ),
    *_entries(
        "TAX",
        _money,
        rf"^(?:{_STEUER}betrag|mwst\.?(?:-betrag)?|mehrwert{_STEUER}|ust\.?(?:-betrag)?(?![-\s.]*[il1]d)|total\s+vat"
        rf"|vat(?:\s+amount)?|total\s+tax|tax(?:\s+amount)?|sales\s+tax|montant\s+tva|total\s+tva|tva"
        r"|btw(?:[-\s]?bedrag)?|totaal\s+btw|iva|totale\s+iva|imposta|cuota\s+iva|summe\s+(?:mwst|ust)\.?"
        # The rate first after "plus": "zzgl. 19 % USt", "plus 20 % VAT", "+ 20 % TVA" (a bare
        # "19 % VAT" is a line item's tax category, printed on every position).
        r"|(?:zzgl\.?\s+|plus\s+|\+\s*)\d{1,2}(?:[.,]\d{1,2})?\s*%\s+(?:mwst|ust|vat|tva|btw|iva|tax)\.?(?![-\s.]*[il1]d))\s*:?",
    ),
    *_entries(
        # "Zahlbetrag" is what is left to pay after prepayments, not the invoice total.
        "AMOUNT_DUE",
        _money,
        rf"^(?:zahlbetrag|zu\s+zahlen(?:der\s+betrag)?|offener\s+betrag|amount\s+due|balance\s+due|total\s+due"
        rf"|net\s+{_A_GRAVE}\s+payer|montant\s+d{_U}|reste\s+{_A_GRAVE}\s+payer"
        # "… to pay" is what is left after a prepayment: the total only when net + tax make it
        # (jobs.extract.ocr.fields).
        rf"|total\s+{_A_GRAVE}?\s*payer|totale\s+da\s+pagare|total\s+a\s+pagar"
        r"|(?:totaal\s+)?te\s+betalen|importo\s+dovuto|saldo\s+(?:a\s+pagar|dovuto))\s*:?",
    ),
    *_entries(
        "AMOUNT_PAID",
        _unsigned_money,
        rf"^(?:erhaltene\s+anzahlungen?|anzahlung|amount\s+paid|prepaid|acompte|d{_E}j{_A}\s+pay{_E})\s*:?",
    ),
    *_entries(
        "CURRENCY",
        _stated_currency,
        rf"^(?:(?:rechnungs)?w{_A}hrung|currency|devise|monnaie|valuta|moneda|divisa|betr{_A}ge\s+in)\s*:?",
    ),
    *_entries(
        "VENDOR_NAME",
        name_of,
        rf"^(?:vendor|seller|supplier|lieferant|verk{_A}ufer|fournisseur|vendeur|leverancier|verkoper"
        r"|fornitore|venditore|cedente|proveedor|vendedor|emisor|issuer|issued\s+by|bill(?:ed)?\s+from|sold\s+by"
        r"|verkauft\s+von|vendu\s+par|venduto\s+da|vendido\s+por|verkocht\s+door"
        rf"|{_E}metteur|aussteller)\s*(?:name)?\s*:",
    ),
]
_RANKS = {id(entry): rank for rank, entry in enumerate(VOCABULARY)}
FIRST_RANK = {entry.type: _RANKS[id(entry)] for entry in reversed(VOCABULARY)}
# The bare "Total" entry: it also heads quantity columns and a line table's sum row.
GENERIC_TOTAL_RANK = max(rank for rank, entry in enumerate(VOCABULARY) if entry.type == "TOTAL")
# Types whose disagreeing candidates of one rank must reach the normalizer as a conflict.
CONFLICTING = frozenset({"INVOICE_RECEIPT_ID", "INVOICE_RECEIPT_DATE", "TOTAL"})
# Types whose every distinct value of one rank is kept as an alternative, for the totals check
# to choose from (jobs.extract.ocr.fields): a tax row per rate, a column header's cell.
ALTERNATIVES = frozenset({"SUBTOTAL", "TAX"})
# A value printed below its label sits within this many line heights.
BELOW_LINES = 2.2
# Money labels whose value may be a column of cells under them (a summary table).
_COLUMN_TYPES = frozenset({"TOTAL", "SUBTOTAL", "TAX", "AMOUNT_DUE"})
# Money types whose values may stack around their label, each kept for the totals check (net,
# tax) or as a conflict (total): which of the stacked amounts is meant is never guessed.
_STACKABLE = frozenset({"TOTAL", "SUBTOTAL", "TAX"})
# A stacked value row's centre sits within this many line heights of its label's.
_STACK_OFFSET = 0.8


def make_candidate(kind: str, rank: int, label: list[Word], value_words: list[Word], value: str) -> Candidate:
    used = _words_for(value_words, value)
    return Candidate(
        type=kind, rank=rank, label=label, value=used, value_text=value, confidence=min(w.confidence for w in used)
    )


def line_candidates(line: Line, under: list[Line], above: Line | None = None) -> list[Candidate]:
    found: list[Candidate] = []
    for index, segment in enumerate(line.segments):
        text = segment.text
        for entry in VOCABULARY:
            match = entry.pattern.search(text)
            if match is not None:
                found += _entry_candidates(entry, match, line, index, under, above)
    return found


def _entry_candidates(
    entry: _Entry, match: re.Match[str], line: Line, index: int, under: list[Line], above: Line | None
) -> list[Candidate]:
    """The value a label of `line.segments[index]` pairs with (see the module doc), or its stacked values."""
    below = under[0] if under else None
    segments = line.segments
    segment = segments[index]
    # A trailing blank the label pattern took must not pull the value's first word into it.
    label_end = match.start() + len(match.group(0).rstrip())
    label_words, rest = split_words(segment.words, label_end)
    following = segments[index + 1].words if index + 1 < len(segments) else []
    # Last on the row: everything after the label, for a value OCR split into pieces
    # ("Monday," | "16 March 2026" in a monospaced font).
    options: list[tuple[list[Word], str | None]] = [
        (rest, None),
        (following, None),
        ([w for other in segments[index + 1 :] for w in other.words], None),
    ]
    # A value glued to its label ("Facture n°562044387") is the rest of the cut word: the next
    # cell ("du 02 Juillet 2015") must not give the "02".
    if len(" ".join(w.text for w in label_words)) > label_end:
        options.insert(0, (label_words[-1:] + rest, segment.text[label_end:]))
    # A seller heading alone on its row heads a block (letterhead.py reads it): the line
    # under it may be a "Nummer: 123" row, not the name.
    # A header cell may hold the next column's header too ("MwSt-Betrag MwSt-%"): with no
    # digit after the label, the cells under it are still its column.
    no_digit_after = not any(ch.isdigit() for w in rest for ch in w.text)
    if entry.type in _COLUMN_TYPES and no_digit_after:
        options.append((_column_value(segment, line, under), None))
    elif not rest and entry.type != "VENDOR_NAME" and (cell := _below(segment, line, below)) is not None:
        options.append((cell.words, None))
    rank = _RANKS[id(entry)]
    for value_words, text in options:
        value = (
            entry.value(text if text is not None else " ".join(w.text for w in value_words)) if value_words else None
        )
        if value is not None:
            return [make_candidate(entry.type, rank, label_words or segment.words[:1], value_words, value)]
    # The label may run on without its value ("Steuerbetrag in", the currency beside each row).
    if entry.type not in _STACKABLE or len(segments) != 1 or not no_digit_after:
        return []
    return [
        make_candidate(entry.type, rank, label_words, value_words, value)
        for value_words in _straddling(segment, line, above, below)
        if (value := entry.value(" ".join(w.text for w in value_words))) is not None
    ]


def _straddling(label: Segment, line: Line, above: Line | None, below: Line | None) -> list[list[Word]]:
    """The two values of a cell stacked around its label, half a line above and half a line below
    ("GBP 163,16" / "Steuerbetrag in" / "EUR 183,14": one amount per currency), right of the label.
    """
    if above is None or below is None:
        return []
    height = max(line.bottom - line.top, 1.0)
    centre = (line.top + line.bottom) / 2
    rows = [
        other.words
        for other in (above, below)
        if abs((other.top + other.bottom) / 2 - centre) < _STACK_OFFSET * height
        and other.segments[0].left > label.right
    ]
    return rows if len(rows) == 2 else []


def _column_value(label: Segment, line: Line, under: list[Line]) -> list[Word]:
    """The amount a column header labels: its one cell, or of several cells the last when it is the
    sum of those above it (a summary table's total row); otherwise nothing, a person decides.
    """
    cells: list[Segment] = []
    above = line
    for row in under:
        cell = _below(label, above, row)
        if cell is None or _money(cell.text) is None:
            break
        cells.append(cell)
        above = row
    if len(cells) <= 1:
        return cells[0].words if cells else []
    amounts = [parse_money(_money(c.text) or "").amount for c in cells]
    return cells[-1].words if abs(sum(amounts[:-1]) - amounts[-1]) <= Decimal("0.01") else []


def _below(label: Segment, line: Line, below: Line | None) -> Segment | None:
    """The segment printed directly under a label that stands alone in its column."""
    if below is None:
        return None
    height = max(line.bottom - line.top, 1.0)
    if below.top - line.bottom > BELOW_LINES * height:
        return None
    near = [s for s in below.segments if s.left < label.right + height and s.right > label.left - height]
    reach = max(label.right - label.left, 3 * height)
    # Flush left under the label first (labels and values share their left edge); only when no
    # cell is, flush right (amounts right-aligned under a right-aligned label, larger than it);
    # last, centred under it (a bordered table's cells), within one line height.
    for alignment in ("left", "right", "centre"):
        aligned = [(_edge_gap(label, s, alignment), s) for s in near]
        limit = height if alignment == "centre" else reach
        if within := [(gap, s) for gap, s in aligned if gap < limit]:
            return min(within, key=lambda pair: pair[0])[1]
    return None


def _edge_gap(label: Segment, cell: Segment, alignment: str) -> float:
    if alignment == "left":
        return abs(cell.left - label.left)
    if alignment == "right":
        return abs(cell.right - label.right)
    return abs(cell.left + cell.right - label.left - label.right) / 2


def split_words(words: list[Word], offset: int) -> tuple[list[Word], list[Word]]:
    """Words before the label match's end and words after it (a word cut by the match goes left)."""
    position = 0
    for index, word in enumerate(words):
        position += len(word.text) + (1 if index else 0)
        if position >= offset:
            return words[: index + 1], words[index + 1 :]
    return words, []


def _words_for(words: list[Word], value: str) -> list[Word]:
    # Geometry and confidence come only from the words the value was read from.
    pieces = set(value.split())
    used = [w for w in words if w.text in pieces or any(p in w.text for p in pieces)]
    return used or words


def currency_of(candidates: list[Candidate]) -> str | None:
    return next((c.value_text for c in candidates if c.type == "CURRENCY"), None)
