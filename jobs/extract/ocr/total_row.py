"""Which amount of a table's total row is the invoice total.

A total row often prints one amount per column: "Total facture | 24.99 | 5.00 | 29.99" under
"Montant HT | Montant TVA | Montant TTC". The label pairs with the first amount on its row, which
there is the net, not the total. This module reads the row as its table does: the cell under a
column header naming the gross amount (TTC, brutto, gross, incl., …) is the total. Without such a
header, three amounts of which the first two add up to the third give the third (net + tax =
gross is the evidence). Anything else on a row with several different amounts is no total: a
person decides rather than the first cell winning.
"""

from __future__ import annotations

import re

from jobs.extract.ocr.labels import Candidate, make_candidate, money_in
from jobs.extract.ocr.lines import Line, Segment
from jobs.extract.parsing import parse_money

# Header words naming a column's amounts; a header naming both (a "TTC" column under "Montant
# HT / TTC") says nothing.
_GROSS_RE = re.compile(r"\b(?:ttc|brutto|gross|incl\.?|inkl\.?|including|ivato|iva\s+incl)\b", re.IGNORECASE)
_NOT_GROSS_RE = re.compile(r"\b(?:ht|hors|netto|net|excl\.?|exkl\.?|excluding|imponibile)\b", re.IGNORECASE)
# How far up a column's header may sit above its total row (the rows of the table between).
HEADER_ROWS = 10


def row_total(candidate: Candidate, line: Line, above: list[Line]) -> Candidate | None:
    """The candidate as its table reads it (see the module doc): unchanged when its row carries
    one amount (or the same amount several times), the gross column's cell, the sum of net and
    tax, or None.
    """
    cells = _amount_cells(candidate, line)
    amounts = [parse_money(text).amount for _, text in cells]
    if len(set(amounts)) <= 1:
        return candidate
    gross = [(cell, text) for cell, text in cells if _is_gross(_header_of(cell, above))]
    if len(gross) == 1:
        return _retarget(candidate, *gross[0])
    if len(cells) == 3 and amounts[0] + amounts[1] == amounts[2] and not gross:
        return _retarget(candidate, *cells[2])
    return None


def _amount_cells(candidate: Candidate, line: Line) -> list[tuple[Segment, str]]:
    """The row's segments right of the label that print an amount, with that amount."""
    label_right = max((w.right for w in candidate.label), default=line.segments[0].left)
    return [
        (segment, text)
        for segment in line.segments
        if segment.left >= label_right and (text := money_in(segment.text)) is not None
    ]


def _header_of(cell: Segment, above: list[Line]) -> str:
    """The text printed over a cell in its column: the header lines met walking up from the row,
    past the table's other rows (cells printing an amount), up to the first line with nothing
    above the cell once a header was found.
    """
    header: list[str] = []
    for line in reversed(above[-HEADER_ROWS:]):
        over = [s for s in line.segments if s.left < cell.right and s.right > cell.left]
        if not over:
            if header:
                break
            continue
        if all(money_in(s.text) is not None for s in over):
            if header:
                break
            continue
        header.insert(0, " ".join(s.text for s in over))
    return " ".join(header)


def _is_gross(header: str) -> bool:
    return bool(_GROSS_RE.search(header)) and not _NOT_GROSS_RE.search(header)


def _retarget(candidate: Candidate, cell: Segment, text: str) -> Candidate:
    if text == candidate.value_text and cell.words == candidate.value:
        return candidate
    return make_candidate(candidate.type, candidate.rank, candidate.label, cell.words, text)
