"""What a reading may not be, whichever rule found it: the vetoes that keep a plausible but wrong
value off a PROCESSED document.

Owns the last look at the paired candidates, after the labels and the layout found them and
before the normalizer judges them. Each veto is a printed fact that contradicts the reading:

- a seller that is a party's heading ("Buyer", "Koper", "Acheteur", "Cliente": the next cell
  after a "Seller:" label whose name is printed below it) or a date ("April 8", the first piece
  of a date line taken for a sender line) is no name at all: dropped, so the layout reads the
  seller again;
- a seller that the pages print in the buyer's block ("Bill to", "Rechnungsempfänger",
  "Facturé à", "Cliente", the column under "Buyer:") is the buyer, however large its type;
- a seller that names a bank ("Deutsche Bank AG" beside the IBAN in the footer) is where the money
  goes, not who invoices;
- an invoice number read out of a longer printed one ("INV 2026 7021" read as "2026", "FA 62051"
  read as "62051") is a part of it;
- a payment reminder ("Mahnung", "Payment reminder", "Relance", "Herinnering", "Sollecito") prints
  the reminded invoice's number, date and amount beside its own and a fee: which of them the
  reader paired is never evidence enough.

A vetoed value keeps at most GUESS_CONFIDENCE_CAP, below the review threshold, so the
document goes to REVIEW_REQUIRED with LOW_CONFIDENCE for that field: a person reads it. Nothing
here raises a confidence or sets a value.
"""

from __future__ import annotations

import re

from jobs.extract.ocr.labels import Candidate, as_guess
from jobs.extract.ocr.letterhead import folded
from jobs.extract.ocr.lines import Line, Page, Segment
from jobs.extract.ocr.months import MONTHS
from jobs.extract.parsing import DATE_IN_TEXT_RE

# The heading of the buyer's block, alone or before the buyer's name in its cell.
_BUYER_HEADING_RE = re.compile(
    r"^(?:bill(?:ed)?\s+to|invoice\s+to|sold\s+to|ship(?:ped)?\s+to|deliver(?:ed|y)?\s+to|customer|client|buyer"
    r"|purchaser|recipient|k[aä]ufer|kunde|rechnungsempf[aä]nger|empf[aä]nger|rechnungsadresse|lieferadresse"
    r"|leistungsempf[aä]nger|acheteur|factur[ée]\s+[aà]|adresse\s+de\s+facturation|destinataire|koper|klant"
    r"|afnemer|factuuradres|acquirente|committente|cessionario(?:\s*/\s*committente)?|destinatario|cliente"
    r"|comprador|facturar\s+a)\b\s*:?",
    re.IGNORECASE,
)
# A seller heading printed where a name was expected is no name either.
_PARTY_WORD_RE = re.compile(
    r"^(?:(?:buyer|customer|client|purchaser|recipient|k[aä]ufer|kunde|rechnungsempf[aä]nger|empf[aä]nger"
    r"|acheteur|destinataire|koper|klant|afnemer|acquirente|committente|cessionario|destinatario|cliente"
    r"|comprador|seller|vendor|supplier|verk[aä]ufer|lieferant|vendeur|fournisseur|verkoper|leverancier"
    r"|fornitore|venditore|cedente|prestatore|proveedor|vendedor|emisor)\b[\s:/]*)+$",
    re.IGNORECASE,
)
# Banks and payment providers: the account a footer names, never the invoice's seller.
_BANK_RE = re.compile(
    r"\b(?:\w*bank\w*|banco|banque|banca|sparkasse|kreissparkasse|raiffeisen\w*|unicredit|bnp\s+paribas"
    r"|barclays|santander|hsbc|rabobank|abn\s+amro|ing(?:-diba)?|kbc|belfius|bbva|caixa\w*|intesa(?:\s+sanpaolo)?"
    r"|lloyds|natwest|cr[ée]dit\s+(?:agricole|mutuel|lyonnais|suisse)|soci[ée]t[ée]\s+g[ée]n[ée]rale|la\s+poste"
    r"|postfinance|ubs|paypal|stripe|klarna|revolut|n26|bunq|knab)\b",
    re.IGNORECASE,
)
# A reminder's title: "1. Mahnung", "Zahlungserinnerung", "Payment reminder", "Relance", "Aanmaning".
_REMINDER_RE = re.compile(
    r"^(?:\d\.\s*|erste|zweite|dritte|letzte|first|second|final|last|premi[eè]re|deuxi[eè]me|eerste|tweede|primo"
    r"|secondo|primer|segundo)?\s*(?:mahnung|zahlungserinnerung|payment\s+reminder|reminder|dunning\s+letter"
    r"|overdue\s+notice|relance|rappel|lettre\s+de\s+rappel|(?:betalings)?herinnering|aanmaning|sollecito"
    r"|avviso\s+di\s+sollecito|recordatorio|requerimiento\s+de\s+pago)\b",
    re.IGNORECASE,
)
_REMINDED_FIELDS = frozenset({"INVOICE_RECEIPT_ID", "INVOICE_RECEIPT_DATE", "TOTAL", "AMOUNT_DUE"})
_TITLE_AREA = 0.4  # share of page 1, from the top
# Month names (EN, DE, FR here; NL, IT, ES from months.py) beside a day: a date, never a name.
_MONTH_NAMES = "|".join(
    sorted(
        {
            *MONTHS,
            *[
                "january",
                "february",
                "march",
                "april",
                "may",
                "june",
                "july",
                "august",
                "september",
                "october",
                "november",
                "december",
            ],
            *["jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"],
            *["januar", "februar", "märz", "maerz", "april", "mai", "juni", "juli", "august", "oktober", "dezember"],
            *[
                "janvier",
                "février",
                "fevrier",
                "mars",
                "avril",
                "juin",
                "juillet",
                "août",
                "aout",
                "septembre",
                "octobre",
                "novembre",
                "décembre",
            ],
        },
        key=len,
        reverse=True,
    )
)
_MONTH_DAY_RE = re.compile(
    rf"(?<!\w)(?:(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?!\d)|\d{{1,2}}\.?\s+(?:{_MONTH_NAMES})(?!\w))", re.IGNORECASE
)
# How far below its heading the buyer's block runs, and how far left of it its lines may start.
_BLOCK_LINES = 5
_COLUMN_SLACK = 2.0  # heading heights
_BLOCK_GAP = 1.5  # heading heights between two lines of one block
# A number's own label words before it are no part of it ("Nr. 4711", "N° 12", "No 7").
_NUMBER_WORDS = frozenset({"nr", "no", "n°", "nº", "num", "#", "nummer", "number", "numéro", "numero", "núm"})
_PREFIX_RE = re.compile(r"^[A-Z]{1,4}[-/]?$")
_DIGIT_GROUP_RE = re.compile(r"^\d[\d/\-.]*$")


def vetoed(candidates: dict[str, list[Candidate]], pages: list[Page]) -> dict[str, list[Candidate]]:
    """The candidates with each veto applied (see the module doc); the seller's party headings dropped."""
    kept = dict(candidates)
    if "VENDOR_NAME" in kept:
        buyers = _buyer_names(pages)
        sellers = [
            as_guess(c) if _folded(c.value_text) in buyers or _BANK_RE.search(c.value_text) else c
            for c in kept["VENDOR_NAME"]
            if not (is_party_word(c.value_text) or _dated(c.value_text))
        ]
        if sellers:
            kept["VENDOR_NAME"] = sellers
        else:
            del kept["VENDOR_NAME"]
    if _is_reminder(pages):
        for kind in _REMINDED_FIELDS & kept.keys():
            kept[kind] = [as_guess(c) for c in kept[kind]]
    if "INVOICE_RECEIPT_ID" in kept:
        kept["INVOICE_RECEIPT_ID"] = [
            as_guess(c) if _cut_from_longer(c, pages) else c for c in kept["INVOICE_RECEIPT_ID"]
        ]
    return kept


def is_party_word(text: str) -> bool:
    """A party's heading ("Buyer:", "Koper", "Cedente / Prestatore") and nothing else."""
    return bool(_PARTY_WORD_RE.match(text.strip()))


def _is_reminder(pages: list[Page]) -> bool:
    """A reminder's title at the top of page 1, where a document's title is printed."""
    if not pages:
        return False
    page = pages[0]
    return any(
        _REMINDER_RE.match(segment.text)
        for line in page.lines
        if line.top < page.height * _TITLE_AREA
        for segment in line.segments
    )


def _dated(text: str) -> bool:
    """A date in the text: numeric ("08.04.2026") or a month's name beside a day ("April 8", "8 avril")."""
    return bool(DATE_IN_TEXT_RE.search(text) or _MONTH_DAY_RE.search(text))


def _buyer_names(pages: list[Page]) -> set[str]:
    """Every piece of text in a buyer's block: the rest of its heading's cell, and the cells under
    the heading in its column for a few lines (the name, its address).
    """
    names: set[str] = set()
    for page in pages:
        for index, line in enumerate(page.lines):
            for segment in line.segments:
                match = _BUYER_HEADING_RE.match(segment.text)
                if match is None:
                    continue
                if rest := segment.text[match.end() :].strip(" :"):
                    names.add(_folded(rest))
                names.update(_folded(cell.text) for cell in _block_under(segment, line, page.lines[index + 1 :]))
    names.discard("")
    return names


def _block_under(heading: Segment, line: Line, rest: list[Line]) -> list[Segment]:
    """The cells under the heading's cell in its column, line after line while no wider gap than a
    blank line separates them (a block ends where the page's next block begins).
    """
    height = max(w.height for w in heading.words)
    cells: list[Segment] = []
    previous = line
    for below in rest[:_BLOCK_LINES]:
        if below.top - previous.bottom > _BLOCK_GAP * height:
            break
        cells += [
            cell
            for cell in below.segments
            if heading.left - _COLUMN_SLACK * height <= cell.left <= heading.right + _COLUMN_SLACK * height
        ]
        previous = below
    return cells


def _cut_from_longer(candidate: Candidate, pages: list[Page]) -> bool:
    """The number's word sits in a cell between a letter prefix ("FA", "INV", "R-") and digit
    groups ("2026 7021") that the reading left out: the printed number is longer than the read one.
    """
    if not candidate.value:
        return False
    first, last = candidate.value[0], candidate.value[-1]
    for page in pages:
        for line in page.lines:
            for segment in line.segments:
                words = segment.words
                if first not in words or last not in words:
                    continue
                start, end = words.index(first), words.index(last)
                before = words[start - 1].text if start > 0 else ""
                after = words[end + 1].text if end + 1 < len(words) else ""
                return bool(
                    (_PREFIX_RE.match(before) and before.casefold().rstrip(".:") not in _NUMBER_WORDS)
                    or (_DIGIT_GROUP_RE.match(after) and not DATE_IN_TEXT_RE.fullmatch(after))
                )
    return False


def _folded(text: str) -> str:
    """A name as letterhead compares it, without the punctuation a block's line ends with."""
    return folded(text).strip(" :,.")
