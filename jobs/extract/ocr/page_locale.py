"""Conventions of a whole page set rather than of one label: the order of numeric dates and the
currency printed beside the amounts.

Owns the two page-level readings the label pairing leaves open: German, French, Dutch, Italian
and Spanish pages print numeric dates day first, and an invoice whose labels state no currency is
in the one currency its amounts are printed with (two settle nothing); "Rs" is India's rupee only
on a page that names India.
"""

from __future__ import annotations

import re

from jobs.extract.ocr.lines import Page
from jobs.extract.parsing import DateOrder

_E = "(?:é|e)"
# The ISO codes a currency label or an amount cell is read for.
CODES = ("EUR", "USD", "GBP", "CHF", "JPY", "CAD", "AUD", "SEK", "NOK", "DKK", "PLN", "CZK")


# Words that mark a page as German, French, Dutch, Italian or Spanish: their numeric dates are day first.
_DAY_FIRST_RE = re.compile(
    rf"\b(?:rechnung\w*|datum|betrag|mwst|ust|summe|netto|brutto|facture|montant|tva|ttc|ht|d{_E}signation|qt{_E}"
    r"|factuur\w*|bedrag|btw|totaal|fattura|importo|iva|imponibile|totale|factura|importe|fecha)\b",
    re.IGNORECASE,
)
_ENGLISH_RE = re.compile(r"\b(?:invoice|date|amount|subtotal|total|vat|tax|due|description|qty)\b", re.IGNORECASE)


def date_order(pages: list[Page]) -> str | None:
    """DMY when the page is German, French, Dutch, Italian or Spanish (their numeric dates are day
    first), else unsettled.
    """
    text = " ".join(line.text for page in pages for line in page.lines)
    return DateOrder.DMY if len(_DAY_FIRST_RE.findall(text)) > len(_ENGLISH_RE.findall(text)) else None


# Codes and symbols printed beside an amount: "Steuerbetrag in EUR 37,62", "59,50 €", "EUR 49,99",
# and a whole amount beside its rupee sign ("Rs 1939").
_AMOUNT_RE = re.compile(r"\d[.,]\d{2}(?!\d)|(?<![A-Za-z])Rs\.?\s?-?\d")
# "Rs" is the rupee of India, Pakistan, Sri Lanka, Nepal and more: it is INR only on pages that name
# India (its GSTIN, its country name) and no other rupee's country.
_RUPEE_RE = re.compile(r"(?<![A-Za-z])Rs\.?\s?-?\d")
_INDIA_RE = re.compile(r"\b(?:India|GSTIN)\b")
_OTHER_RUPEE_RE = re.compile(r"\b(?:Pakistan|Sri\s+Lanka|Nepal|Mauritius|Seychelles|Maldives|Indonesia)\b")
_PAGE_CODE_RE = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
_PAGE_SYMBOLS = {"€": "EUR", "£": "GBP", "₹": "INR", "zł": "PLN"}
# Codes that are no English word in capitals (ISO 4217 also holds ALL, TOP, CUP, MOP, …).
_PAGE_CODES = frozenset(
    (*CODES, "INR", "CNY", "HUF", "RON", "BGN", "BRL", "MXN", "ZAR", "SGD", "HKD", "NZD", "TRY", "ISK")
)


# A sentence stating the amounts' currency, anywhere on a line ("Alle Beträge in CHF", "Tous les
# montants en CHF"): it counts like a code beside an amount, so a conversion line in EUR beside it
# leaves two currencies and settles nothing.
_AMOUNTS_IN_RE = re.compile(
    r"\b(?:betr(?:ä|ae|a)ge|preise|amounts|prices|figures|montants|prix|bedragen|prijzen|importi|prezzi|importes"
    r"|precios)\b[^:\d]{0,30}?\b(?:in|en|sind\s+in|are\s+in|exprim[ée]s\s+en|expressed\s+in)\s+(?P<code>(?-i:[A-Z]{3}))\b",
    re.IGNORECASE,
)


def page_currency(pages: list[Page]) -> str | None:
    """The one currency the pages print beside their amounts, when no label states it.

    Every ISO code or unambiguous symbol on a row that also prints an amount counts, and so does the
    code of a sentence stating the amounts' currency ("Alle Beträge in CHF"); exactly one
    distinct currency is evidence enough (the amounts are in it), two or more settle nothing (an
    invoice in GBP with its tax also in EUR).
    """
    found: set[str] = set()
    rupees = False
    for page in pages:
        for line in page.lines:
            text = line.text
            if (stated := _AMOUNTS_IN_RE.search(text)) and stated.group("code") in _PAGE_CODES:
                found.add(stated.group("code"))
            if not _AMOUNT_RE.search(text):
                continue
            found.update(code for code in _PAGE_CODE_RE.findall(text) if code in _PAGE_CODES)
            found.update(code for symbol, code in _PAGE_SYMBOLS.items() if symbol in text)
            rupees = rupees or bool(_RUPEE_RE.search(text))
    if rupees and _indian(pages):
        found.add("INR")
    return next(iter(found)) if len(found) == 1 else None


def _indian(pages: list[Page]) -> bool:
    text = " ".join(line.text for page in pages for line in page.lines)
    return bool(_INDIA_RE.search(text)) and not _OTHER_RUPEE_RE.search(text)
