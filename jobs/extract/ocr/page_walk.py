"""The walk over a page set's lines, and the conventions that need the page around a line.

Owns `label_candidates`: every line's labelled candidates (`labels`), kept per field type by the
rank of their vocabulary entry, plus what no single label says —

- a heading line with type, number and date ("Rechnung Nr. 4711 vom 05.06.2018", "Rechnung des
  Versicherers Nr. … vom …"), on a title printed large also after other words and with its date
  wrapped onto the next line;
- the letter's date at the right margin ("Hamburg, 3. März 2026"), alone or beside a title, at the
  lowest date rank;
- a bare number label ("No.:", "N° :") in the block under an invoice title printed large.
"""

from __future__ import annotations

import re
from statistics import median

from jobs.extract.ocr.labels import (
    ALTERNATIVES,
    BELOW_LINES,
    CONFLICTING,
    FIRST_RANK,
    NO_SIGN,
    VOCABULARY,
    Candidate,
    line_candidates,
    make_candidate,
    read_date,
    read_identifier,
    split_words,
)
from jobs.extract.ocr.lines import Line, Page, Segment, Word
from jobs.extract.ocr.total_row import HEADER_ROWS, row_total
from jobs.extract.parsing import DATE_IN_TEXT_RE

_E = "(?:é|e)"

# The letter-style title's date ("Beitragsrechnung      24. Januar 2014"), the least specific date.
_LETTER_DATE_RANK = max(rank for rank, entry in enumerate(VOCABULARY) if entry.type == "INVOICE_RECEIPT_DATE")

# A column header's cells are read down this many rows at most.
_COLUMN_ROWS = 8

# A line whose type is this much larger than the page's body text is a title.
_TITLE_PROMINENCE = 1.3
# A wrapped heading's second line holds the date alone ("05.03.2018").
_DATE_ONLY_RE = re.compile(r"^[\w.,/\- ]{6,30}$")

# "Rechnung des Versicherers Nr. …", "Invoice of the Supplier No. …": the issuer named between the
# type and its number marker, only when a number marker follows (so no "Rechnung des Monats 2026").
_ISSUER = (
    r"(?:\s+(?:des|der|von|of\s+the|du|de\s+la|de\s+l')\s*[^\W\d]+"
    rf"(?=\s*(?:nr\.?|nummer|no\.?|number|n[°º]|num{_E}ro|#)(?:[\s:]|$)))?"
)
# "Rechnung Nr. 4711 vom 05.06.2018", "Teilrechnung (326) Nr. 4711.2 vom …", "INVOICE No. X dated D",
# "Gutschrift (Selbst ausgestellte Rechnung) (389) Nr. 471102 vom 05.03.2018",
# "Credit Note CN/2026/08 of 12 May 2026", "Facture n° F-17 du 4 février 2026", "Avoir n° A-3 du …".
_HEADING_RE = re.compile(
    rf"^(?P<label>(?:\w*rechnung(?:s?korrektur)?|gutschrift|(?:tax\s+)?invoice|credit\s+note|debit\s+note|facture|avoir)"
    rf"(?:\s*\([^()]{{1,40}}\))*{_ISSUER}\s*(?:nr\.?|nummer|no\.?|number|n[°º]|num{_E}ro|#)?\s*:?)\s*"
    rf"(?P<number>[A-Za-z0-9][\w/.\-]*)(?:\s+(?P<connector>vom|from|of|dated|du|le)(?:\s+(?P<date>.+))?)?$",
    re.IGNORECASE,
)


def label_candidates(pages: list[Page]) -> dict[str, list[Candidate]]:
    """The labelled candidates kept per field type over all pages (see the module doc)."""
    kept: dict[str, list[Candidate]] = {}
    for page in pages:
        body = median(w.height for line in page.lines for w in line.words) if page.lines else 1.0
        for index, line in enumerate(page.lines):
            below = page.lines[index + 1] if index + 1 < len(page.lines) else None
            prominent = median(w.height for w in line.words) >= _TITLE_PROMINENCE * body
            under = page.lines[index + 1 : index + 1 + _COLUMN_ROWS]
            above = page.lines[index - 1] if index else None
            candidates = [*_heading_candidates(line, below, prominent), *_read_rows(line, under, page.lines[:index])]
            if page.number == 1 and (letter_date := _margin_date(line, page, above)) is not None:
                candidates.append(letter_date)
            if prominent and _TITLE_ALONE_RE.match(line.text.strip()):
                candidates += _numbers_under_title(line, page.lines[index + 1 : index + 1 + _TITLE_BLOCK_ROWS])
            for candidate in candidates:
                _keep(kept, candidate)
    return kept


def _read_rows(line: Line, under: list[Line], above: list[Line]) -> list[Candidate]:
    """The line's labelled candidates, a total read as its table's total row reads (`total_row`)."""
    found: list[Candidate] = []
    for candidate in line_candidates(line, under, above[-1] if above else None):
        if candidate.type == "TOTAL":
            if (as_row := row_total(candidate, line, above[-HEADER_ROWS:])) is None:
                continue
            candidate = as_row
        found.append(candidate)
    return found


# A letter's date at the right margin, alone or after its town ("Hamburg, 3. März 2026",
# "Lyon, le 14 juin 2026"), in the upper part of page 1; the words beside it on its row, if any,
# name no other date (a delivery date, a period, a due date) and end in no label's colon ("Stand:").
_TOWN_PREFIX_RE = re.compile(r"^(?:[^\W\d][\w.\- ]{1,30},\s*(?:le|den|am|the)?\s*)?$", re.IGNORECASE)
_OTHER_DATE_RE = re.compile(
    r"dat(?:e|um|a)|fecha|liefer|leistung|livr|deliver|period|zeitraum|f[aä]llig|due|[eé]ch[eé]ance|bis|until|vom|from",
    re.IGNORECASE,
)
_MARGIN_DATE_AREA = 0.5  # share of page 1, from the top
_RIGHT_MARGIN = 0.6  # the date's right edge lies beyond this share of the page width


def _margin_date(line: Line, page: Page, above: Line | None) -> Candidate | None:
    """The letter's date printed at the right margin (see above), at the letter-title date's rank."""
    if line.top > page.height * _MARGIN_DATE_AREA:
        return None
    last = line.segments[-1]
    if last.right < page.width * _RIGHT_MARGIN or last.left < page.width / 2 or _under_a_cell(last, line, above):
        return None
    if any(_OTHER_DATE_RE.search(s.text) or s.text.rstrip().endswith(":") for s in line.segments[:-1]):
        return None
    text = last.text
    found = read_date(text)
    if found is None:
        return None
    # A month-name date comes back in ISO form: its town prefix ends before its first digit.
    cut = text.find(found) if found in text else next((i for i, ch in enumerate(text) if ch.isdigit()), 0)
    after = text[cut + len(found) :] if found in text else ""
    if not _TOWN_PREFIX_RE.match(text[:cut].strip()) or after.strip(" ."):
        return None
    return make_candidate("INVOICE_RECEIPT_DATE", _LETTER_DATE_RANK, [], last.words, found)


# An invoice title alone on its row, printed large ("INVOICE", "RECHNUNG", "FACTURE"), and the bare
# number label of the block under it ("No.: 2026-17", "Nr. 4711", "N° : F-17"): the invoice's number.
_TITLE_ALONE_RE = re.compile(r"^(?:tax\s+)?(?:invoice|rechnung|facture|factuur|fattura|factura)$", re.IGNORECASE)
_BARE_NUMBER_RE = re.compile(rf"^(?:{NO_SIGN}|no\.?|nr\.?|number|num{_E}ro|nummer)\s*:?$", re.IGNORECASE)
_TITLE_BLOCK_ROWS = 4
_TITLE_BLOCK_REACH = 6.0


def _numbers_under_title(title: Line, rows: list[Line]) -> list[Candidate]:
    """The bare number labels in the block under an invoice title, in its column (see above)."""
    height = max(title.bottom - title.top, 1.0)
    # The block sits under the title, starting at its left or up to a few title heights before it
    # (a title set flush right over a left-aligned block of labels).
    left, right = title.segments[0].left - _TITLE_BLOCK_REACH * height, title.segments[-1].right
    found: list[Candidate] = []
    bottom = title.bottom
    for row in rows:
        if row.top - bottom > 2.5 * height:
            break
        bottom = row.bottom
        for index, segment in enumerate(row.segments):
            if not left <= segment.left <= right:
                continue
            label, rest = _bare_label(segment)
            following = row.segments[index + 1].words if index + 1 < len(row.segments) else []
            for value_words in (rest, following):
                if label and value_words and (value := read_identifier(" ".join(w.text for w in value_words))):
                    found.append(
                        make_candidate(
                            "INVOICE_RECEIPT_ID", FIRST_RANK["INVOICE_RECEIPT_ID"], label, value_words, value
                        )
                    )
                    break
    return found


def _bare_label(segment: Segment) -> tuple[list[Word], list[Word]]:
    """A segment's leading bare number label ("No.:", "N° :") and the words after it."""
    for size in (1, 2):
        label = segment.words[:size]
        if _BARE_NUMBER_RE.match(" ".join(w.text for w in label)):
            return label, segment.words[size:]
    return [], []


def _under_a_cell(segment: Segment, line: Line, above: Line | None) -> bool:
    """Text on the row just above, over the segment or close to its left: the segment is a cell of
    a grid (a value under its label), not a date standing alone at the margin.
    """
    if above is None:
        return False
    height = max(line.bottom - line.top, 1.0)
    if line.top - above.bottom > BELOW_LINES * height:
        return False
    return any(s.right > segment.left - 3 * height and s.left < segment.right for s in above.segments)


def _keep(kept: dict[str, list[Candidate]], candidate: Candidate) -> None:
    current = kept.get(candidate.type)
    if current is None or candidate.rank < current[0].rank:
        kept[candidate.type] = [candidate]
    elif (
        candidate.rank == current[0].rank
        and (candidate.type in CONFLICTING or candidate.type in ALTERNATIVES)
        and all(c.value_text != candidate.value_text for c in current)
    ):
        current.append(candidate)


def _heading_candidates(line: Line, below: Line | None = None, prominent: bool = False) -> list[Candidate]:
    """A heading line's number and date; on a title printed large, the heading may follow other
    words ("Buchungshilfe - KEINE Rechnung Nr. 471102 vom") and its date wrap onto the next line.
    """
    words = line.words
    starts = range(len(words)) if prominent else range(1)
    for start in starts:
        found = _heading_at(words[start:], below)
        if found:
            return found
    return []


def _heading_at(words: list[Word], below: Line | None) -> list[Candidate]:
    match = _HEADING_RE.match(" ".join(w.text for w in words))
    if match is None or not any(ch.isdigit() for ch in match.group("number")):
        return []
    number = match.group("number").rstrip(".-/")
    if DATE_IN_TEXT_RE.fullmatch(number):
        return []
    label, rest = split_words(words, len(match.group("label").rstrip()))
    if not rest:
        return []
    found = [make_candidate("INVOICE_RECEIPT_ID", FIRST_RANK["INVOICE_RECEIPT_ID"], label, rest, number)]
    if not match.group("connector") and (date_text := _connected_date(words, below)) and below is not None:
        found.append(
            make_candidate("INVOICE_RECEIPT_DATE", FIRST_RANK["INVOICE_RECEIPT_DATE"], label, below.words, date_text)
        )
    elif match.group("date") and (date_text := read_date(match.group("date"))):
        found.append(make_candidate("INVOICE_RECEIPT_DATE", FIRST_RANK["INVOICE_RECEIPT_DATE"], label, rest, date_text))
    elif match.group("connector") and (date_text := _wrapped_date(words, below)) and below is not None:
        found.append(
            make_candidate("INVOICE_RECEIPT_DATE", FIRST_RANK["INVOICE_RECEIPT_DATE"], label, below.words, date_text)
        )
    return found


_CONNECTED_DATE_RE = re.compile(r"^(?:vom|from|of|dated|du|le)\s+(?P<date>[\w.,/\- ]{6,30})$", re.IGNORECASE)


def _connected_date(words: list[Word], below: Line | None) -> str | None:
    """The date a heading wraps onto the next line with its connector ("… Nr. 47110818" / "vom 31.10.2018")."""
    if below is None or not _wrapped(words, below) or not (match := _CONNECTED_DATE_RE.match(below.text.strip())):
        return None
    return read_date(match.group("date"))


def _wrapped_date(words: list[Word], below: Line | None) -> str | None:
    """The date alone on the line a heading ending in "vom"/"of"/"du" wraps onto."""
    if below is None or not _wrapped(words, below) or not _DATE_ONLY_RE.fullmatch(below.text.strip()):
        return None
    return read_date(below.text)


def _wrapped(words: list[Word], below: Line) -> bool:
    """The next line continues this one: directly under it, in the same type size."""
    height = max(median(w.height for w in words), 1.0)
    top = min(w.top for w in words)
    return 0 <= below.top - top < 2.2 * height and abs(median(w.height for w in below.words) - height) < 0.2 * height
