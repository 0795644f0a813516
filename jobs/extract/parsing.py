"""Money, number and date parsing for text read off documents (OCR output, free-form fields).

Owns the rules users trip on: currency symbols, thousands separators, decimal commas, textual and
numeric dates. Nothing here guesses silently: an unsettled day/month order comes back as an
`AmbiguousDate` carrying both readings, and an unknown currency stays `None`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

# Symbols that name exactly one currency. Shared ones ("kr", "¥") settle nothing; a bare "$" is
# left to the caller's policy (ExtractionSettings.dollar_sign_currency).
_SYMBOLS: dict[str, str] = {
    "€": "EUR",
    "£": "GBP",
    "₹": "INR",
    "₩": "KRW",
    "₺": "TRY",
    "₽": "RUB",
    "zł": "PLN",
    "Fr.": "CHF",
    "US$": "USD",
    "C$": "CAD",
    "CA$": "CAD",
    "A$": "AUD",
    "AU$": "AUD",
    "NZ$": "NZD",
    "HK$": "HKD",
    "R$": "BRL",
    "S$": "SGD",
}
DOLLAR = "$"
# Shared symbols are dropped from the number without naming a currency (NOK/SEK/DKK; JPY/CNY;
# the rupees of India, Pakistan, Sri Lanka, Nepal: "Rs 1939").
_SHARED_SYMBOL_RE = re.compile(r"(?<![A-Za-z])(?:kr\.?|Kr\.?|¥|￥|Rs\.?)(?![A-Za-z])")
_CODE_RE = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
# Longest symbols first so "US$" wins over "$".
_SYMBOL_RE = re.compile("|".join(re.escape(s) for s in sorted(_SYMBOLS, key=len, reverse=True)))
_THOUSANDS_ONLY = "'’ \u00a0\u202f"
_NUMBER_CHARS_RE = re.compile(r"^[0-9.,'’ \u00a0\u202f]+$")
_PLAIN_DECIMAL_RE = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
_KNOWN_CODES = frozenset(
    {
        "EUR",
        "USD",
        "GBP",
        "CHF",
        "JPY",
        "CNY",
        "CAD",
        "AUD",
        "NZD",
        "SEK",
        "NOK",
        "DKK",
        "PLN",
        "CZK",
        "HUF",
        "RON",
        "BGN",
        "INR",
        "BRL",
        "MXN",
        "ZAR",
        "SGD",
        "HKD",
        "KRW",
        "TRY",
        "RUB",
        "ILS",
        "AED",
        "SAR",
    }
)


@dataclass(frozen=True, slots=True)
class Money:
    amount: Decimal
    currency: str | None  # ISO 4217 code, or "$" when only a bare dollar sign was seen


def plain_decimal(text: str) -> Decimal:
    """An XML Schema decimal ("1234.50"): no separators, no NaN/Infinity (Decimal accepts those)."""
    stripped = text.strip()
    if not _PLAIN_DECIMAL_RE.match(stripped):
        raise ValueError(f"not a decimal number: {text!r}")
    return Decimal(stripped)


def parse_number(text: str) -> Decimal:
    """A human-written number: `1.337,50`, `1,204.50`, `1'234.50`, `1 234,5`, `-3`, `(12.00)`."""
    s = text.strip()
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative, s = True, s[1:-1].strip()
    if s.startswith(("-", "−")):
        negative, s = True, s[1:].strip()
    elif s.startswith("+"):
        s = s[1:].strip()
    if s.endswith("-"):  # accounting style "12.00-"
        negative, s = True, s[:-1].strip()
    if not _NUMBER_CHARS_RE.match(s) or (not s[0].isdigit() and s[0] not in ".,") or not any(c.isdigit() for c in s):
        raise ValueError(f"not a number: {text!r}")
    for ch in _THOUSANDS_ONLY:
        if ch in s:
            s = _drop_grouping(s, ch)
    try:
        value = Decimal(_resolve_dot_comma(s, text))
    except InvalidOperation as exc:
        raise ValueError(f"not a number: {text!r}") from exc
    return -value if negative else value


def _drop_grouping(s: str, sep: str) -> str:
    head, *groups = s.split(sep)
    last = groups[-1] if groups else ""
    # The last group may carry the decimal part: "1'234.50".
    tail_digits = re.split(r"[.,]", last, maxsplit=1)[0]
    if (
        not (1 <= len(head) <= 3 and head.isdigit())
        or any(len(g) != 3 or not g.isdigit() for g in groups[:-1])
        or len(tail_digits) != 3
    ):
        raise ValueError(f"bad digit grouping: {s!r}")
    return s.replace(sep, "")


def _resolve_dot_comma(s: str, original: str) -> str:
    dots, commas = s.count("."), s.count(",")
    if dots and commas:
        decimal_sep = "." if s.rfind(".") > s.rfind(",") else ","
        group_sep = "," if decimal_sep == "." else "."
        if s.count(decimal_sep) != 1:
            raise ValueError(f"not a number: {original!r}")
        whole, frac = s.split(decimal_sep)
        return _check_groups(whole, group_sep, original) + "." + frac
    sep = "." if dots else "," if commas else ""
    if not sep:
        return s
    parts = s.split(sep)
    if len(parts) > 2:
        return _check_groups(s, sep, original)
    whole, frac = parts
    # "1,234" / "1.337": one separator before exactly three digits reads as grouping, the way
    # both US and German invoices print whole amounts; "0,500" cannot be grouping.
    if len(frac) == 3 and 1 <= len(whole) <= 3 and not whole.startswith("0"):
        return whole + frac
    return (whole or "0") + "." + frac


def _check_groups(s: str, sep: str, original: str) -> str:
    head, *groups = s.split(sep)
    if not (1 <= len(head) <= 3) or any(len(g) != 3 for g in groups):
        raise ValueError(f"bad digit grouping: {original!r}")
    return s.replace(sep, "")


def parse_money(text: str) -> Money:
    """`1.337,50 €` → (1337.50, EUR); `$1,204.50` → (1204.50, "$"); `CHF 1'234.50` → CHF."""
    s = text.strip()
    currency: str | None = None
    found = _SYMBOL_RE.search(s)
    if found:
        currency = _SYMBOLS[found.group(0)]
        s = s[: found.start()] + s[found.end() :]
    elif DOLLAR in s:
        currency = DOLLAR
        s = s.replace(DOLLAR, "", 1)
    s = _SHARED_SYMBOL_RE.sub("", s)
    code = _CODE_RE.search(s)
    if code and code.group(1) in _KNOWN_CODES:
        if currency not in (None, DOLLAR) and currency != code.group(1):
            raise ValueError(f"two currencies in {text!r}")
        currency = code.group(1)
        s = s[: code.start()] + s[code.end() :]
    # "$-1,136.16" and "- 12,00 €" put the sign on either side of the symbol.
    return Money(parse_number(s.strip()), currency)


# ---------------------------------------------------------------------------------------- dates

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        ("january", "jan", "januar", "jänner", "jän", "janvier", "janv"),
        ("february", "feb", "februar", "février", "fevrier", "févr", "fevr", "fév", "fev"),
        ("march", "mar", "märz", "maerz", "marz", "mär", "mrz", "mars"),  # "marz": OCR drops the umlaut
        ("april", "apr", "avril", "avr"),
        ("may", "mai"),
        ("june", "jun", "juni", "juin"),
        ("july", "jul", "juli", "juillet", "juil"),
        ("august", "aug", "août", "aout"),
        ("september", "sep", "sept", "septembre"),
        ("october", "oct", "oktober", "okt", "octobre"),
        ("november", "nov", "novembre"),
        ("december", "dec", "dezember", "dez", "décembre", "decembre", "déc"),
    ),
    start=1,
):
    for _name in _names:
        _MONTHS[_name] = _number

_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + ")"
_WEEKDAY = r"(?:[A-Za-zÀ-ÿ]+,?\s+)?"
# English, German and French ordinals: 1st, 2nd, 3rd, 4th, 1er, 2e.
_ORDINAL = r"(?:st|nd|rd|th|er|e)?"
_DAY_MONTH_YEAR_RE = re.compile(
    rf"^{_WEEKDAY}(\d{{1,2}}){_ORDINAL}\.?[\s\-/]*([A-Za-zÀ-ÿ]+)\.?,?[\s\-/.]*(\d{{2}}|\d{{4}})$"
)
# "August 3 , 2014": some producers set a blank before the comma.
_MONTH_DAY_YEAR_RE = re.compile(rf"^{_WEEKDAY}([A-Za-zÀ-ÿ]+)\.?[\s\-]*(\d{{1,2}}){_ORDINAL}\s?,?[\s\-]+(\d{{4}})$")
# Where a date stands in running text (a label's value cell, a heading line): the forms parse_date
# reads, found by a search, with the month names spelled out so ordinary words never match.
DATE_IN_TEXT_RE = re.compile(
    rf"(?<![\w.])(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}[./-]\d{{1,2}}[./-](?:\d{{4}}|\d{{2}})"
    rf"|\d{{1,2}}{_ORDINAL}\.?[\s\-/]*{_MONTH}\.?,?[\s\-/.]*\d{{4}}"
    rf"|{_MONTH}\.?[\s\-]*\d{{1,2}}{_ORDINAL}\s?,?[\s\-]+\d{{4}})(?![\w])",
    re.IGNORECASE,
)
_ISO_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.]+)?(?:Z|[+-]\d{2}:?\d{2})?$")
_COMPACT_RE = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_NUMERIC_RE = re.compile(r"^(\d{1,4})([./\-])(\d{1,2})\2(\d{2}|\d{4})$")


class DateOrder:
    DMY = "DMY"
    MDY = "MDY"


@dataclass(frozen=True, slots=True)
class AmbiguousDate:
    """A numeric date whose day/month order the text alone does not settle."""

    text: str
    day_first: date | None
    month_first: date | None

    def resolve(self, order: str | None) -> date | None:
        if order == DateOrder.DMY:
            return self.day_first
        if order == DateOrder.MDY:
            return self.month_first
        return None


@dataclass(frozen=True, slots=True)
class ParsedDate:
    value: date
    order: str | None = None  # the day/month order this text proves, for settling its siblings


def _year(text: str) -> int:
    year = int(text)
    if len(text) == 2:
        # Invoices are recent: "17" is 2017, "98" is 1998.
        year += 2000 if year < 70 else 1900
    return year


def _make(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_date(text: str) -> ParsedDate | AmbiguousDate:
    """Parse one date; raises ValueError for text that is no date at all."""
    s = " ".join(text.split())
    if m := _ISO_RE.match(s) or _COMPACT_RE.match(s):
        value = _make(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if value is None:
            raise ValueError(f"no such date: {text!r}")
        return ParsedDate(value)
    if m := _NUMERIC_RE.match(s):
        return _numeric(m, text)
    for regex, day_group, month_group in ((_DAY_MONTH_YEAR_RE, 1, 2), (_MONTH_DAY_YEAR_RE, 2, 1)):
        if (m := regex.match(s)) and (month := _MONTHS.get(m.group(month_group).lower())):
            value = _make(_year(m.group(3)), month, int(m.group(day_group)))
            if value is None:
                raise ValueError(f"no such date: {text!r}")
            return ParsedDate(value)
    raise ValueError(f"not a date: {text!r}")


def _numeric(m: re.Match[str], text: str) -> ParsedDate | AmbiguousDate:
    first, sep, second, year_text = m.group(1), m.group(2), m.group(3), m.group(4)
    if len(first) == 4:  # 2026/03/15: year first is never day/month ambiguous
        value = _make(int(first), int(second), int(year_text)) if len(year_text) == 2 else None
        if value is None:
            raise ValueError(f"no such date: {text!r}")
        return ParsedDate(value)
    if len(first) == 3:
        raise ValueError(f"not a date: {text!r}")
    year = _year(year_text)
    a, b = int(first), int(second)
    day_first, month_first = _make(year, b, a), _make(year, a, b)
    if sep == ".":
        # Dotted numeric dates are day-first wherever they are written (de, fr, ru, ...).
        if day_first is None:
            raise ValueError(f"no such date: {text!r}")
        return ParsedDate(day_first, DateOrder.DMY)
    if month_first is None:
        if day_first is None:
            raise ValueError(f"no such date: {text!r}")
        return ParsedDate(day_first, DateOrder.DMY)
    if day_first is None:
        return ParsedDate(month_first, DateOrder.MDY)
    if day_first == month_first:
        return ParsedDate(day_first)
    return AmbiguousDate(text, day_first, month_first)


def symbol_currency(code: str | None, dollar_sign_currency: str | None) -> str | None:
    """Map what `parse_money` found to an ISO code; a bare "$" only by the configured policy."""
    if code == DOLLAR:
        return dollar_sign_currency
    return code
