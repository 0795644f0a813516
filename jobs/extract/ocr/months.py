"""Dates written with Dutch, Italian or Spanish month names, for the label reader.

jobs.extract.parsing reads English, German and French month names; a plain PDF from a Dutch,
Italian or Spanish vendor prints "3 maart 2026", "15 gennaio 2026" or "5 de enero de 2026".
This module finds such a date in a value cell and gives it as ISO text (2026-03-03), which every
reader after it parses without knowing the language. Owned here because only the page readers
meet these spellings; the e-invoice formats carry ISO dates.
"""

from __future__ import annotations

import re
from datetime import date

_NAMES: tuple[tuple[str, ...], ...] = (
    ("januari", "gennaio", "enero", "genn", "ene"),
    ("februari", "febbraio", "febrero"),
    ("maart", "marzo", "mrt"),
    ("aprile", "abril", "abr"),
    ("mei", "maggio", "mayo", "magg"),
    ("juni", "giugno", "junio", "giu"),
    ("juli", "luglio", "julio", "lug"),
    ("augustus", "agosto", "ago"),
    ("september", "settembre", "septiembre", "setiembre", "sett", "set"),
    ("oktober", "ottobre", "octubre", "okt", "ott"),
    ("november", "noviembre"),
    ("december", "dicembre", "diciembre", "dic"),
)
MONTHS: dict[str, int] = {name: number for number, names in enumerate(_NAMES, start=1) for name in names}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
# "3 maart 2026", "15 gennaio 2026", "5 de enero de 2026", "1° marzo 2026", "3. mrt. 2026".
_DATE_RE = re.compile(
    rf"(?<!\w)(\d{{1,2}})(?:°|º|\.)?\s*(?:de\s+)?({_MONTH})\.?,?\s*(?:de\s+|del\s+)?(\d{{4}})(?!\w)",
    re.IGNORECASE,
)


def month_name_date(text: str) -> str | None:
    """The first Dutch/Italian/Spanish month-name date in the text, as ISO text; None without one."""
    for match in _DATE_RE.finditer(text):
        try:
            return date(int(match.group(3)), MONTHS[match.group(2).lower()], int(match.group(1))).isoformat()
        except ValueError:
            continue
    return None
