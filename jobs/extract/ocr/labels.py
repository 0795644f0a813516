"""Label vocabulary (English, German, French) and label → value pairing on rebuilt lines.

Owns which printed label means which AnalyzeExpense field type, and how a value is found for it:
the rest of the label's segment, else the next segment on the same row (the value column). Every
field type keeps only its best candidate — the earliest vocabulary entry, then the first in
reading order — because two different candidates would read as a conflict downstream and the
vocabulary is ordered from specific ("Bruttosumme") to generic ("Total").

Confidence is the weakest value word's confidence (tesseract word confidence, or the text
layer's 99). The vendor name found by a guess rather than a seller label is capped below the
review threshold so validation sends it to REVIEW_REQUIRED.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from jobs.extract.ocr.lines import Line, Page, Word
from jobs.extract.parsing import parse_date, parse_money

# A guess (company-suffix line, first prominent line) never reaches the default threshold of 80.
GUESS_CONFIDENCE_CAP = 60.0
# "Zuschläge" OCR'd as "Zuschlage", "Rechnungsnr" etc.: spellings tolerant of lost diacritics.
_A = "(?:ä|a|ae)"
_U = "(?:ü|u|ue)"
_E = "(?:é|e)"
# tesseract reads the "u" of "Steuer" as "v" often enough on 150-dpi scans to name it here.
_STEUER = "ste[uv]er"


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


@dataclass(frozen=True, slots=True)
class _Entry:
    type: str
    pattern: re.Pattern[str]
    value: Callable[[str], str | None]


_ID_TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9/\-_.]*")
_DATE_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}"
    r"|\d{1,2}\.?\s+[A-Za-zÀ-ÿ]+\.?,?\s+\d{4}|[A-Za-zÀ-ÿ]+\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}"
)
_CENTS_RE = re.compile(r"\d[.,]\d{2}(?!\d)")
_CODES = ("EUR", "USD", "GBP", "CHF", "JPY", "CAD", "AUD", "SEK", "NOK", "DKK", "PLN", "CZK")
_CODE_RE = re.compile(rf"\b({'|'.join(_CODES)})\b")
_SYMBOL_CODES = {"€": "EUR", "£": "GBP"}


def _identifier(text: str) -> str | None:
    for token in _ID_TOKEN_RE.findall(text):
        token = token.rstrip(".-/")
        if any(ch.isdigit() for ch in token) and not _DATE_RE.fullmatch(token):
            return token
    return None


def _date(text: str) -> str | None:
    for match in _DATE_RE.finditer(text):
        try:
            parse_date(match.group(0))
        except ValueError:
            continue
        return match.group(0)
    return None


def _money(text: str) -> str | None:
    # Invoice amounts print their cents; a bare digit run next to a money label is an ID or a
    # reference ("USt-IdNr DE136695976" read as "USt ... 136695976"), not an amount.
    if not _CENTS_RE.search(text):
        return None
    # The value cell may carry a currency code or symbol on either side: try the widest first.
    tokens = text.split()
    for size in range(min(len(tokens), 3), 0, -1):
        for start in (len(tokens) - size, 0):
            candidate = " ".join(tokens[start:start + size])
            if not _CENTS_RE.search(candidate):
                continue
            try:
                parse_money(candidate)
            except ValueError:
                continue
            return candidate
    return None


def _unsigned_money(text: str) -> str | None:
    # "Erhaltene Anzahlungen -50,00": a paid amount is printed as a deduction.
    found = _money(text)
    return found.lstrip("-−").strip() if found else None


def _currency(text: str) -> str | None:
    if match := _CODE_RE.search(text.upper()):
        return match.group(1)
    return next((code for symbol, code in _SYMBOL_CODES.items() if symbol in text), None)


def _name(text: str) -> str | None:
    cleaned = text.strip(" :|-")
    return cleaned if sum(ch.isalpha() for ch in cleaned) >= 2 else None


def _entries(kind: str, value: Callable[[str], str | None], *patterns: str) -> list[_Entry]:
    return [_Entry(kind, re.compile(p, re.IGNORECASE), value) for p in patterns]


# German document titles print the number inline: "Handelsrechnung (380) Nr. 471102 vom 05.06.2018".
_TITLE = r"\w*(?:rechnung|gutschrift|invoice|facture)\)?\s*(?:\(\d+\)\s*)?(?:nr\.?|nummer|no\.?|n°|nº|#)"
VOCABULARY: list[_Entry] = [
    *_entries(
        "INVOICE_RECEIPT_ID", _identifier,
        r"^(?:invoice|inv\.?|bill)\s*(?:no\.?|number|num\.?|#|nr\.?|id)\s*:?",
        r"^rechnungs?[-\s]?(?:nummer|nr\.?|no\.?)\s*:?",
        rf"^(?:facture\s*(?:n°|nº|no\.?|num{_E}ro)|n°\s*(?:de\s+)?facture|num{_E}ro\s+de\s+facture)\s*:?",
        r"^(?:credit\s+note|gutschrift)\s*(?:no\.?|nr\.?|number|#)\s*:?",
        _TITLE,
    ),
    *_entries(
        "INVOICE_RECEIPT_DATE", _date,
        rf"^(?:invoice\s+date|date\s+of\s+invoice|rechnungsdatum|belegdatum|ausstellungsdatum"
        rf"|date\s+de\s+(?:la\s+)?facture|date\s+d'{_E}mission|date\s+de\s+facturation)\s*:?",
        _TITLE + r"\s*\S+\s+(?:vom|from|du)\b",
        r"^(?:date|datum)\s*:?(?=\s|$)",
    ),
    *_entries(
        "DUE_DATE", _date,
        rf"^(?:due\s+date|payment\s+due|f{_A}lligkeit(?:sdatum)?|zahlbar\s+bis|date\s+d'{_E}ch{_E}ance|{_E}ch{_E}ance)\s*:?",
    ),
    *_entries(
        "TOTAL", _money,
        rf"^(?:bruttosumme|gesamtbetrag(?!\s+der)|gesamtsumme|rechnungsbetrag|endbetrag|summe\s+brutto"
        rf"|bruttobetrag|total\s+ttc|montant\s+ttc|total\s+{_A}?\s*payer|grand\s+total|invoice\s+total"
        rf"|total\s+amount|total\s+incl\.?(?:\s+vat)?)\s*:?",
        r"^total(?!\s*(?:ht\b|net|excl|hors|tva|vat|tax|mwst|ust))\s*:?",
    ),
    *_entries(
        "SUBTOTAL", _money,
        r"^(?:rechnungssumme\s+ohne\s+ust\.?|nettosumme|summe\s+netto|gesamt\s+netto|zwischensumme"
        r"|subtotal|sub[-\s]total|net\s+total|total\s+net|total\s+ht|montant\s+ht|sous[-\s]total"
        r"|total\s+excl\.?(?:\s+vat)?|amount\s+excl\.?(?:\s+vat)?|nettobetrag)\s*:?",
    ),
    *_entries(
        "TAX", _money,
        rf"^(?:{_STEUER}betrag|mwst\.?(?:-betrag)?|mehrwert{_STEUER}|ust\.?(?:-betrag)?(?![-\s.]*[il1]d)|total\s+vat"
        rf"|vat(?:\s+amount)?|total\s+tax|tax(?:\s+amount)?|sales\s+tax|montant\s+tva|total\s+tva|tva)\s*:?",
    ),
    *_entries(
        # "Zahlbetrag" is what is left to pay after prepayments, not the invoice total.
        "AMOUNT_DUE", _money,
        rf"^(?:zahlbetrag|zu\s+zahlen(?:der\s+betrag)?|offener\s+betrag|amount\s+due|balance\s+due|total\s+due"
        rf"|net\s+{_A}\s+payer|montant\s+d{_U}|reste\s+{_A}\s+payer)\s*:?",
    ),
    *_entries(
        "AMOUNT_PAID", _unsigned_money,
        rf"^(?:erhaltene\s+anzahlungen?|anzahlung|amount\s+paid|prepaid|acompte|d{_E}j{_A}\s+pay{_E})\s*:?",
    ),
    *_entries("CURRENCY", _currency, rf"^(?:w{_A}hrung|currency|devise|monnaie)\s*:?"),
    *_entries(
        "VENDOR_NAME", _name,
        rf"^(?:vendor|seller|supplier|lieferant|verk{_A}ufer|fournisseur|vendeur)\s*(?:name)?\s*:",
    ),
]
_RANKS = {id(entry): rank for rank, entry in enumerate(VOCABULARY)}

# A seller block: a heading alone on its row, its "Name:" (or first) line just below.
_SELLER_HEADING_RE = re.compile(
    rf"^(?:verk{_A}ufer|seller|vendor|supplier|lieferant|rechnungssteller|vendeur|fournisseur|from|von)\s*:?$",
    re.IGNORECASE,
)
_NAME_LABEL_RE = re.compile(r"^(?:name|firma|company|raison\s+sociale|nom)\s*:?\s*", re.IGNORECASE)
_BLOCK_LOOKAHEAD = 4
_COMPANY_RE = re.compile(
    r"\b(?:GmbH|AG|KG|Ltd\.?|Limited|LLC|Inc\.?|SARL|SAS|S\.A\.|GbR|e\.K\.|B\.V\.|BV|S\.r\.l\.|SRL|Oy|AB)(?=\W|$)"
)


def pair_fields(pages: list[Page]) -> list[Candidate]:
    """The best candidate per field type over all pages, in vocabulary order."""
    best: dict[str, Candidate] = {}
    for page in pages:
        for line in page.lines:
            for candidate in _line_candidates(line):
                current = best.get(candidate.type)
                if current is None or candidate.rank < current.rank:
                    best[candidate.type] = candidate
    if "VENDOR_NAME" not in best and (vendor := _seller_block(pages) or _vendor_guess(pages)):
        best["VENDOR_NAME"] = vendor
    return sorted(best.values(), key=lambda c: c.rank)


def _line_candidates(line: Line) -> list[Candidate]:
    found: list[Candidate] = []
    segments = line.segments
    for index, segment in enumerate(segments):
        text = segment.text
        for entry in VOCABULARY:
            match = entry.pattern.search(text)
            if match is None:
                continue
            label_words, rest = _split_words(segment.words, match.end())
            following = segments[index + 1].words if index + 1 < len(segments) else []
            for value_words in (rest, following):
                value_text = " ".join(w.text for w in value_words)
                value = entry.value(value_text) if value_words else None
                if value is None:
                    continue
                used = _words_for(value_words, value)
                found.append(Candidate(
                    type=entry.type, rank=_RANKS[id(entry)], label=label_words or segment.words[:1],
                    value=used, value_text=value, confidence=min(w.confidence for w in used),
                ))
                break
    return found


def _split_words(words: list[Word], offset: int) -> tuple[list[Word], list[Word]]:
    """Words before the label match's end and words after it (a word cut by the match goes left)."""
    position = 0
    for index, word in enumerate(words):
        position += len(word.text) + (1 if index else 0)
        if position >= offset:
            return words[: index + 1], words[index + 1:]
    return words, []


def _words_for(words: list[Word], value: str) -> list[Word]:
    # Geometry and confidence come only from the words the value was read from.
    pieces = set(value.split())
    used = [w for w in words if w.text in pieces or any(p in w.text for p in pieces)]
    return used or words


def _seller_block(pages: list[Page]) -> Candidate | None:
    for page in pages:
        lines = page.lines
        for index, line in enumerate(lines):
            if not _SELLER_HEADING_RE.match(line.text.strip()):
                continue
            block = lines[index + 1: index + 1 + _BLOCK_LOOKAHEAD]
            named = [ln for ln in block if _NAME_LABEL_RE.match(ln.text)]
            for candidate_line in named or block[:1]:
                label, value_words = _name_value(candidate_line)
                value = _name(" ".join(w.text for w in value_words))
                if value:
                    confidence = min(w.confidence for w in value_words)
                    if not named:  # the first line under the heading: a layout guess
                        confidence = min(confidence, GUESS_CONFIDENCE_CAP)
                    return Candidate("VENDOR_NAME", len(VOCABULARY), label, value_words, value, confidence)
    return None


def _name_value(line: Line) -> tuple[list[Word], list[Word]]:
    match = _NAME_LABEL_RE.match(line.text)
    if match is None:
        return [], line.words
    label, rest = _split_words(line.words, len(match.group(0).rstrip()))
    return label, rest


def _vendor_guess(pages: list[Page]) -> Candidate | None:
    """No seller label at all: a company-suffix line near the top of page 1, capped confidence."""
    if not pages:
        return None
    page = pages[0]
    for line in page.lines:
        if line.top > page.height * 0.4:
            break
        if _COMPANY_RE.search(line.text):
            words = line.segments[0].words if _COMPANY_RE.search(line.segments[0].text) else line.words
            value = _name(" ".join(w.text for w in words))
            if value:
                confidence = min(min(w.confidence for w in words), GUESS_CONFIDENCE_CAP)
                return Candidate("VENDOR_NAME", len(VOCABULARY) + 1, [], words, value, confidence)
    return None


def currency_of(candidates: list[Candidate]) -> str | None:
    return next((c.value_text for c in candidates if c.type == "CURRENCY"), None)
