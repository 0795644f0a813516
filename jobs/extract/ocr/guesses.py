"""Best guesses for the header fields no rule read, for the person who reviews the document.

A document whose number, date or total no label, heading or sum gave goes to review either way;
there a filled-in field to confirm is faster than an empty one to type. The guesses are what a
reader's eye goes to on any layout, with no label to say so:

- the total: the one amount due, else the largest amount printed (every other amount on an
  invoice is a part of the total: lines, net, tax);
- the date: the first date printed on page 1 that no label names as another date (due,
  delivery), since a document's date stands in its header;
- the number: the first identifier after a document word ("Invoice", "Rechnung", "Facture", …)
  on its line or in the cell under it.

Every guess is `labels.as_guess`: capped below the review threshold and marked, so the document
goes to review whatever the threshold (GUESSED:<field>); a guess never makes a document PROCESSED.
"""

from __future__ import annotations

import re

from jobs.extract.ocr.labels import VOCABULARY, Candidate, as_guess, money_in, read_date, read_identifier
from jobs.extract.ocr.lines import Line, Page, Segment
from jobs.extract.parsing import parse_money

GUESS_RANK = len(VOCABULARY) + 2  # below every label and the layout's seller readings
# The words that name the document, in the six languages the vocabulary reads.
_DOCUMENT_WORD_RE = re.compile(
    r"\b(?:invoice|inv|bill|receipt|rechnung\w*|beleg|facture|factuur|fattura|factura|credit\s+note|gutschrift|avoir)\b",
    re.IGNORECASE,
)
# Dates a label names as another date (a due date, a delivery date), whatever this module reads.
_NOT_THE_DOCUMENT_DATE = frozenset({"DUE_DATE"})
_MIN_NUMBER = 3  # "5" under "Rechnungsadresse" is a street number, not an invoice's


def guesses_for(readings: list[Candidate], pages: list[Page]) -> list[Candidate]:
    """A guess for each of total, date and number that the readings lack (see the module doc)."""
    kept: dict[str, list[Candidate]] = {}
    for reading in readings:
        kept.setdefault(reading.type, []).append(reading)
    found = []
    if "TOTAL" not in kept:
        found.append(_total(kept, pages))
    if "INVOICE_RECEIPT_DATE" not in kept:
        found.append(_date(kept, pages))
    if "INVOICE_RECEIPT_ID" not in kept:
        found.append(_number(pages))
    return [guess for guess in found if guess is not None]


def _total(kept: dict[str, list[Candidate]], pages: list[Page]) -> Candidate | None:
    dues = kept.get("AMOUNT_DUE", [])
    if len({due.value_text for due in dues}) == 1:
        due = dues[0]
        return as_guess(Candidate("TOTAL", GUESS_RANK, due.label, due.value, due.value_text, due.confidence))
    amounts = [
        (parse_money(text).amount, segment, text)
        for segment in _segments(pages)
        if (text := money_in(segment.text)) is not None
    ]
    if not amounts:
        return None
    _, segment, text = max(amounts, key=lambda found: found[0])
    return as_guess(_candidate("TOTAL", segment, text))


def _date(kept: dict[str, list[Candidate]], pages: list[Page]) -> Candidate | None:
    other = {id(w) for kind in _NOT_THE_DOCUMENT_DATE for c in kept.get(kind, []) for w in c.value}
    for segment in _segments(pages[:1]):
        if any(id(w) in other for w in segment.words):
            continue
        if (text := read_date(segment.text)) is not None:
            return as_guess(_candidate("INVOICE_RECEIPT_DATE", segment, text))
    return None


def _number(pages: list[Page]) -> Candidate | None:
    for page in pages[:1]:
        for index, line in enumerate(page.lines):
            for position, segment in enumerate(line.segments):
                if (word := _DOCUMENT_WORD_RE.search(segment.text)) is None:
                    continue
                options = [(segment.text[word.end() :], segment)]
                options += [(cell.text, cell) for cell in line.segments[position + 1 : position + 2]]
                if (cell := _under(segment, page.lines[index + 1 : index + 2])) is not None:
                    options.append((cell.text, cell))
                for text, source in options:
                    number = read_identifier(text)
                    if number is not None and len(number) >= _MIN_NUMBER and money_in(text) is None:
                        return as_guess(_candidate("INVOICE_RECEIPT_ID", source, number))
    return None


def _under(segment: Segment, below: list[Line]) -> Segment | None:
    """The cell directly under a segment (its left edge within the segment's span)."""
    for line in below:
        for cell in line.segments:
            if segment.left - 1 <= cell.left <= segment.right:
                return cell
    return None


def _segments(pages: list[Page]) -> list[Segment]:
    return [segment for page in pages for line in page.lines for segment in line.segments]


def _candidate(kind: str, segment: Segment, text: str) -> Candidate:
    words = [w for w in segment.words if any(piece in w.text for piece in text.split())] or segment.words
    return Candidate(kind, GUESS_RANK, [], words, text, min(w.confidence for w in words))
