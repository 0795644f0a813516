"""The seller's name when no label names it: a seller block, the letterhead, a company-suffix line.

Owns reading the vendor from page layout. In order:

1. A seller block: a heading ("Verkäufer", "Seller", "From", …) alone on its row with a "Name:"
   line below (confident), or just its first line, joined to the next when the name wraps before
   its legal form; a guess unless a legal form, the name printed again, or the seller's postal
   address and registration under it (street, postcode and town, then a VAT id) confirm it.
2. The letterhead: the most prominent text at the top of page 1 (word height at least 1.35× the
   page's median), one line or wrapped over two, that is no document title. It is confident when
   something confirms it — the same name printed again elsewhere (the footer, the bank block's
   account holder, a sender line) or a company-form suffix (GmbH, Ltd, SARL, …); prominence alone
   is a guess.
3. A company-suffix line in the top 40 % of page 1: a guess.

A guess keeps at most GUESS_CONFIDENCE_CAP, below the review threshold, so validation sends the
document to REVIEW_REQUIRED instead of storing a name nothing confirmed.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from difflib import SequenceMatcher
from statistics import median

from jobs.extract.ocr.labels import GUESS_CONFIDENCE_CAP, VOCABULARY, Candidate, as_guess, name_of, split_words
from jobs.extract.ocr.lines import Line, Page, Segment, Word

_A = "(?:ä|a|ae)"
_SELLER_HEADING_RE = re.compile(
    rf"^(?:verk{_A}ufer|seller|vendor|supplier|lieferant|rechnungs(?:er)?steller|vendeur|fournisseur|from|von"
    r"|leverancier|verkoper|fornitore|venditore|cedente|proveedor|vendedor|emisor|issuer|issued\s+by"
    r"|bill(?:ed)?\s+from|[ée]metteur|aussteller)\s*:?$",
    re.IGNORECASE,
)
# "Nummer : 12345676", "Globale Nummer: 4000001123452 (GLN)" under a seller heading: a key, no name.
_KEY_VALUE_RE = re.compile(r"^[^:]{1,40}:\s*\S")
_NAME_LABEL_RE = re.compile(r"^(?:name|firma|company|raison\s+sociale|nom)\s*:?\s*", re.IGNORECASE)
_BLOCK_LOOKAHEAD = 4
# Legal forms (DE, AT, CH, UK, US, FR, NL, BE, IT, ES, Nordics): a name carrying one is a company's.
COMPANY_RE = re.compile(
    r"\b(?:GmbH|GMBH|LTD\.?|INC\.?|LIMITED|AG|KG|KGaA|OHG|UG|Ltd\.?|Limited|LLC|LLP|PLC|plc|Inc\.?|Corp\.?|SARL|SAS|SASU|EURL|S\.A\.S?\.?"
    r"|GbR|e\.K\.|e\.V\.|a\.G\.|B\.V\.|BV|N\.V\.|NV|BVBA|VOF|S\.r\.l\.|SRL|Srl|S\.p\.A\.|SpA|S\.L\.U?\.?|SLU?|SA"
    r"|Oy|AB|ApS|A/S|ASA)(?=\W|$)"
)
# Document titles are printed large at the top too; they are never the seller.
_TITLE_RE = re.compile(
    r"\b(?:\w*rechnung|gutschrift|invoice|facture|avoir|credit\s+note|receipt|quittung|re[cç]u|statement)\b",
    re.IGNORECASE,
)
_PIECES_RE = re.compile(r"\s*[·|•,;]\s*|\s+[-–—−]\s+")
_LABEL_PREFIX_RE = re.compile(r"^[^:]{1,40}:\s*")
# Account-holder labels of a bank block, and how alike an OCR reading must be to count.
_HOLDER_LABELS = ("kontoinhaber", "inhaber", "titulaire", "account holder", "beneficiary", "begunstigter")
_HOLDER_SIMILARITY = 0.8
# Whom a payment is made out to names the seller: "Make all checks payable to NAME.".
_PAYEE_RE = re.compile(
    r"^(?:make\s+(?:all\s+)?(?:checks|cheques)\s+payable\s+to|payable\s+to|zahlbar\s+an"
    r"|ch[eè]ques?\s+[aà]\s+l'ordre\s+de|te\s+betalen\s+aan|(?:pagamento\s+)?a\s+favore\s+di|pagadero\s+a)"
    r"\s+(?P<name>.+?)\.?$",
    re.IGNORECASE,
)
_LETTERHEAD_AREA = 0.25  # share of page 1, from the top
_PROMINENCE = 1.35  # word height over the page's median word height
_SUFFIX_AREA = 0.4
_RANK = len(VOCABULARY)


def vendor_name(pages: list[Page]) -> Candidate | None:
    """The seller from the page layout; a confident reading wins over an earlier guess, and two
    confident readings that name different sellers are a guess (a person decides).
    """
    found = [
        _without_address(c)
        for c in (
            _seller_block(pages),
            _letterhead(pages),
            _sender_line(pages),
            _legal_footer(pages),
            _suffix_line(pages),
        )
        if c is not None
    ]
    confident = [c for c in found if c.confidence > GUESS_CONFIDENCE_CAP]
    if len({folded(c.value_text) for c in confident}) > 1:
        return as_guess(confident[0])
    if confident:
        return _in_its_own_case(confident[0], pages)
    return as_guess(_in_its_own_case(found[0], pages)) if found else None


def _in_its_own_case(candidate: Candidate, pages: list[Page]) -> Candidate:
    """A name set in capitals (a letterhead's style) is spelled as the page prints it elsewhere in
    mixed case ("CLOUDHARBOR HOSTING" over "Kind regards, Cloudharbor Hosting"): capitals are type.
    """
    if not candidate.value_text.isupper():
        return candidate
    wanted = folded(candidate.value_text)
    spelled = (
        name
        for page in pages
        for line in page.lines
        for segment in line.segments
        for piece in _PIECES_RE.split(segment.text)
        if not (name := piece.strip(" :")).isupper() and folded(name) == wanted
    )
    if (mixed := next(spelled, None)) is None:
        return candidate
    return Candidate(candidate.type, candidate.rank, candidate.label, candidate.value, mixed, candidate.confidence)


# Separators between a name and its address on one line: "ACME Ltd · 1 Road · City", "ACME - Road 1 - City".
_SEPARATOR_WORDS = frozenset({"·", "•", "|", "-", "–", "—", "−"})


def _name_pieces(words: list[Word]) -> list[list[Word]]:
    """A line's words cut at its separators ("·", "|", a lone dash, a trailing comma)."""
    pieces: list[list[Word]] = [[]]
    for word in words:
        if word.text in _SEPARATOR_WORDS:
            pieces.append([])
            continue
        text = word.text.rstrip(",;")
        if text:
            pieces[-1].append(replace(word, text=text))
        if text != word.text:
            pieces.append([])
    return [piece for piece in pieces if piece]


def _address_piece(piece: list[Word]) -> bool:
    return any(ch.isdigit() for w in piece for ch in w.text)


def _without_address(candidate: Candidate) -> Candidate:
    """A name printed with its address on the same line keeps only the name: the first piece, when
    every piece after it holds a digit or follows one that does (a street number, a postcode).
    """
    pieces = _name_pieces(candidate.value)
    if len(pieces) < 2 or _address_piece(pieces[0]) or not _address_piece(pieces[1]):
        return candidate
    value = name_of(" ".join(w.text for w in pieces[0]))
    if value is None:
        return candidate
    return Candidate(candidate.type, candidate.rank, candidate.label, pieces[0], value, candidate.confidence)


_SENDER_AREA = 0.4


def _sender_line(pages: list[Page]) -> Candidate | None:
    """The small sender line above a window envelope's recipient ("ACME Ltd · 1 Road · City"):
    a name, then address pieces, in one column, in type no larger than the body's, in the top 40 % of
    page 1.
    Confident when a legal form or the name printed elsewhere confirms it, else a guess.
    """
    if not pages or not pages[0].lines:
        return None
    page = pages[0]
    body = median(w.height for line in page.lines for w in line.words) or 1.0
    for line in page.lines:
        if line.top > page.height * _SENDER_AREA:
            break
        # One printed column, the row's first: across a gap the words are other blocks' lines
        # side by side (the seller's town beside the buyer's street), not one sender line.
        first = line.segments[0]
        pieces = _name_pieces(first.words)
        if (
            len(pieces) < 3
            or median(w.height for w in first.words) > body
            or not _is_name(" ".join(w.text for w in pieces[0]))
            or not all(_address_piece(p) for p in pieces[1:])
        ):
            continue
        value = name_of(" ".join(w.text for w in pieces[0]))
        if value is None:
            continue
        confidence = min(w.confidence for w in pieces[0])
        if not (COMPANY_RE.search(value) or _printed_again(value, pages, {id(s) for s in line.segments})):
            confidence = min(confidence, GUESS_CONFIDENCE_CAP)
        return Candidate("VENDOR_NAME", _RANK, [], pieces[0], value, confidence)
    return None


# A footer that names the seller beside its registration: VAT id, trade register, bank account.
_REGISTRATION_RE = re.compile(
    r"\b(?:USt\.?[-\s]?Id|VAT|TVA|BTW|IVA|P\.\s?IVA|CIF|NIF|HRB|HRA|Handelsreg|Amtsgericht|IBAN|KvK|SIRE[NT]|RCS"
    r"|Registro|Company\s+(?:No|number|registration)|GSTIN|CIN|ABN|ACN|EIN)",
    re.IGNORECASE,
)
_FOOTER_AREA = 0.8  # the bottom fifth of a page


def _legal_footer(pages: list[Page]) -> Candidate | None:
    """The seller in the legal footer: a name with a legal form in the bottom fifth of the first or
    last page (of the page, or of its printed area when it ends higher: a receipt's short page), on
    a footer that also prints a registration (VAT id, trade register, IBAN, GSTIN).
    """
    for page in pages[:1] + pages[1:][-1:]:
        if not page.lines:
            continue
        printed_top, printed_bottom = page.lines[0].top, page.lines[-1].bottom
        start = min(page.height * _FOOTER_AREA, printed_bottom - (1 - _FOOTER_AREA) * (printed_bottom - printed_top))
        footer = [line for line in page.lines if line.top > start]
        if not any(_REGISTRATION_RE.search(line.text) for line in footer):
            continue
        for line in footer:
            for segment in line.segments:
                words = _name_with_its_form(segment.words) or segment.words
                value = name_of(" ".join(w.text for w in words))
                if value and COMPANY_RE.search(value) and _is_name(value) and not _KEY_VALUE_RE.match(value):
                    confidence = min(w.confidence for w in words)
                    return Candidate("VENDOR_NAME", _RANK, [], words, value, confidence)
    return None


_NAME_WORDS = 6


def _name_with_its_form(words: list[Word]) -> list[Word]:
    """The name that opens a footer sentence, up to its legal form: "Free SAS" of "Free SAS au
    capital de 3.441.812 Euros − B 421 938 861 RCS Paris", "Muster GmbH, Sitz Berlin". The sentence
    must go on in lower case or after a separator ("Muster GmbH & Co. KG" is one name); nothing when
    the opening words hold a digit or run longer than a name.
    """
    if not words or not words[0].text[:1].isupper():
        return []
    for end in range(1, min(len(words), _NAME_WORDS) + 1):
        text = " ".join(w.text for w in words[:end])
        if any(ch.isdigit() for ch in text):
            return []
        match = COMPANY_RE.search(text.rstrip(",;"))
        if match is None or match.end() != len(text.rstrip(",;")):
            continue
        after = words[end].text if end < len(words) else ""
        if text.endswith((",", ";")) or not after or after[:1].islower() or after in _SEPARATOR_WORDS:
            return words[:end]
    return []


def _seller_block(pages: list[Page]) -> Candidate | None:
    for page in pages:
        lines = page.lines
        for index, line in enumerate(lines):
            if not _SELLER_HEADING_RE.match(line.text.strip()):
                continue
            block = lines[index + 1 : index + 1 + _BLOCK_LOOKAHEAD]
            named = [ln for ln in block if _NAME_LABEL_RE.match(ln.text)]
            unnamed = [ln for ln in block if not _KEY_VALUE_RE.match(ln.text)][:1]
            for candidate_line in named or unnamed:
                label, value_words = _name_value(candidate_line)
                rest = lines[lines.index(candidate_line) + 1 : index + 1 + _ADDRESS_LOOKAHEAD]
                wrapped = [] if named else _legal_form_continuation(value_words, rest)
                value_words = value_words + wrapped
                value = name_of(" ".join(w.text for w in value_words))
                if value:
                    confidence = min(w.confidence for w in value_words)
                    # The first name line under the heading is a layout guess unless its legal form
                    # (GmbH, Ltd, a.G.) says it is a company, the name is printed again elsewhere, or
                    # the block under it is the seller's postal address and registration.
                    if not named and not (
                        COMPANY_RE.search(value)
                        or _printed_again(value, pages, {id(s) for s in candidate_line.segments})
                        or (_is_name(value) and _address_block(rest[1 if wrapped else 0 :]))
                    ):
                        confidence = min(confidence, GUESS_CONFIDENCE_CAP)
                    return Candidate("VENDOR_NAME", _RANK, label, value_words, value, confidence)
    return None


# A block's address lines: "Musterstraße 12", "Marktstr. 153"; "DE 12345 Beispielstadt", "75008 Paris".
_STREET_RE = re.compile(r"^[^\W\d][^\d:]{2,40}\s\d{1,4}\s?[a-zA-Z]?(?:[-/]\d{1,4})?$")
_POSTCODE_RE = re.compile(r"^(?:[A-Z]{1,2}[-\s]?)?\d{4,5}\s+[^\W\d][^\d:]{1,40}$")
# How far below the seller heading its address and registration are looked for.
_ADDRESS_LOOKAHEAD = 9


def _address_block(lines: list[Line]) -> bool:
    """The lines under a seller's name are its postal address and registration, in the order a
    letter prints them: at most one more name line (a person, a department), a street with its
    number, a postcode and town, then the seller's VAT id or tax number before another heading.
    """
    kinds = [
        "street" if _STREET_RE.match(text) else "town" if _POSTCODE_RE.match(text) else "other"
        for text in (line.text.strip() for line in lines)
    ]
    try:
        street = kinds.index("street")
    except ValueError:
        return False
    if street > 1 or kinds[street + 1 : street + 2] != ["town"]:
        return False
    after = lines[street + 2 :]
    for line in after:
        if _SELLER_HEADING_RE.match(line.text.strip()) or _OTHER_PARTY_RE.match(line.text.strip()):
            return False
        if _REGISTRATION_RE.search(line.text):
            return True
    return False


# The heading of the next party's block ends the seller's.
_OTHER_PARTY_RE = re.compile(
    r"^(?:k[aä]ufer|k[aä]ufer/\w+|buyer|customer|kunde|rechnungsempf[aä]nger|acheteur|client|koper|klant"
    r"|acquirente|cliente|comprador)\b.*:?$",
    re.IGNORECASE,
)


def _legal_form_continuation(words: list[Word], rest: list[Line]) -> list[Word]:
    """The second line of a seller's name wrapped before its legal form ("MVM Musterhafter" /
    "Versicherungsverein Musterstadt a.G."): directly under the first, in its column and type,
    carrying the legal form the first line lacks, and no digit or key.
    """
    if not words or not rest or COMPANY_RE.search(" ".join(w.text for w in words)):
        return []
    following = rest[0]
    text = following.text
    height = max(median(w.height for w in words), 1.0)
    if (
        len(following.segments) == 1
        and 0 <= following.top - max(w.bottom for w in words) < 0.6 * height
        and abs(following.segments[0].left - words[0].left) < 0.5 * height
        and abs(_height(following.segments[0]) - height) < 0.15 * height
        and COMPANY_RE.search(text)
        and not any(ch.isdigit() or ch == ":" for ch in text)
    ):
        return following.words
    return []


def _name_value(line: Line) -> tuple[list[Word], list[Word]]:
    match = _NAME_LABEL_RE.match(line.text)
    if match is None:
        return [], line.words
    return split_words(line.words, len(match.group(0).rstrip()))


def _letterhead(pages: list[Page]) -> Candidate | None:
    if not pages or not pages[0].lines:
        return None
    page = pages[0]
    body = median(w.height for line in page.lines for w in line.words) or 1.0
    prominent = [
        (line, segment)
        for line in page.lines
        if line.top < page.height * _LETTERHEAD_AREA
        for segment in line.segments
        if _height(segment) >= _PROMINENCE * body and _is_name(segment.text)
    ]
    if not prominent:
        return None
    line, first = max(prominent, key=lambda pair: _height(pair[1]))
    parts = [first]
    # A name wrapped over two lines: a prominent segment just above or below, alike in size
    # (descenders make either line the taller one).
    for other_line, other in prominent:
        gap = max(other_line.top - line.bottom, line.top - other_line.bottom)
        if (
            other is not first
            and 0 <= gap < 0.8 * _height(first)
            and abs(_height(other) - _height(first)) < 0.2 * _height(first)
        ):
            parts = [other, first] if other_line.top < line.top else [first, other]
            break
    words = [w for part in parts for w in part.words]
    value = name_of(" ".join(part.text for part in parts))
    if value is None:
        return None
    confidence = min(w.confidence for w in words)
    if not (_printed_again(value, pages, {id(part) for part in parts}) or COMPANY_RE.search(value)):
        confidence = min(confidence, GUESS_CONFIDENCE_CAP)
    return Candidate("VENDOR_NAME", _RANK, [], words, value, confidence)


def _height(segment: Segment) -> float:
    return float(median(w.height for w in segment.words))


def _is_name(text: str) -> bool:
    letters = sum(ch.isalpha() for ch in text)
    digits = sum(ch.isdigit() for ch in text)
    return (
        letters >= 3
        and digits <= letters / 4
        and not _TITLE_RE.search(text)
        and not any(entry.pattern.search(text) for entry in VOCABULARY)
    )


def _printed_again(name: str, pages: list[Page], exclude: set[int]) -> bool:
    """The whole name printed again as a piece of its own: a footer line, "Account holder: NAME",
    "Make all checks payable to NAME.", "NAME · street · city" (a part of a longer name, as one
    line of a wrapped one, does not count).
    """
    wanted = folded(name)
    return any(
        (
            wanted in (folded(_LABEL_PREFIX_RE.sub("", piece)), _after_holder_label(piece))
            # Small print may lose accents the letterhead kept, never the other way round: a
            # footer with accents the letterhead lacks says the letterhead was misread.
            and _accents(piece) <= _accents(name)
        )
        or wanted == _after_payee_label(piece, name)
        for page in pages
        for line in page.lines
        for segment in line.segments
        if id(segment) not in exclude
        for piece in _PIECES_RE.split(segment.text)
    )


def _accents(text: str) -> int:
    return sum(unicodedata.combining(ch) > 0 for ch in unicodedata.normalize("NFD", text))


def _after_holder_label(piece: str) -> str | None:
    """The name after an account-holder label whose colon small print lost under OCR
    ("Kontonnhaber Bauunternehmen Krause"): the label is recognised up to two misread letters.
    """
    words = folded(piece).split()
    for size in (1, 2):
        label = " ".join(words[:size]).rstrip(":")
        if len(words) > size and any(
            SequenceMatcher(None, label, known).ratio() >= _HOLDER_SIMILARITY for known in _HOLDER_LABELS
        ):
            return " ".join(words[size:])
    return None


def _after_payee_label(piece: str, name: str) -> str | None:
    """The name a payment is made out to, with no accent the name read elsewhere lacks."""
    match = _PAYEE_RE.match(piece.strip())
    if match is None or _accents(match.group("name")) > _accents(name):
        return None
    return folded(match.group("name"))


def folded(text: str) -> str:
    """Case, spacing and accents folded: small print loses accents under OCR more than large print."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(ch for ch in decomposed if not unicodedata.combining(ch)).split())


def _suffix_line(pages: list[Page]) -> Candidate | None:
    """No seller label at all: a company-suffix line near the top of page 1, capped confidence."""
    if not pages:
        return None
    page = pages[0]
    for index, line in enumerate(page.lines):
        if line.top > page.height * _SUFFIX_AREA:
            break
        if COMPANY_RE.search(line.text):
            words = line.segments[0].words if COMPANY_RE.search(line.segments[0].text) else line.words
            words = _name_start(page.lines[:index], words) + words
            value = name_of(" ".join(w.text for w in words))
            if value:
                confidence = min(min(w.confidence for w in words), GUESS_CONFIDENCE_CAP)
                return Candidate("VENDOR_NAME", _RANK + 1, [], words, value, confidence)
    return None


def _name_start(above: list[Line], words: list[Word]) -> list[Word]:
    """The first line of a name wrapped onto a legal-form line ("MVM Musterhafter" /
    "Versicherungsverein Musterstadt a.G."): directly above, in the same column and type, no
    digits or key, and the first line of its block.
    """
    if not above:
        return []
    previous = above[-1]
    first = previous.segments[0]
    height = max(median(w.height for w in words), 1.0)
    starts_block = len(above) == 1 or previous.top - above[-2].bottom > height
    if (
        len(previous.segments) == 1
        and starts_block
        and 0 <= words[0].top - previous.bottom < 0.6 * height
        and abs(first.left - words[0].left) < 0.5 * height
        and abs(_height(first) - height) < 0.15 * height
        and not any(ch.isdigit() or ch == ":" for ch in first.text)
        and _is_name(first.text)
    ):
        return first.words
    return []
