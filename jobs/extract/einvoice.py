"""Shared reading of EN 16931 XML (UBL and CII): typed field access that records bad values.

A `FieldReader` turns XPath results into Decimal/date/str and collects `INVALID_VALUE:<field>`
reasons instead of raising, so one garbled amount sends the invoice to review, not to FAILED.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable, Mapping
from decimal import Decimal

from lxml import etree

from jobs.contract.currencies import is_iso_currency
from jobs.contract.invoice import DocumentType
from jobs.extract.parsing import AmbiguousDate, parse_date, plain_decimal
from jobs.extract.text import clean

# UNTDID 1001 codes EN 16931 allows for credit notes. 389 ("Gutschrift" in German) is a
# self-billed *invoice*, not a credit note, despite the name.
CREDIT_NOTE_CODES = frozenset({"81", "83", "381", "396", "532"})
# The invoice type codes that correct an earlier invoice: 384 (corrected invoice) may total below zero.
CORRECTED_INVOICE_CODES = frozenset({"384"})


# Markers in a declared specification id (BT-24), most specific first: the Factur-X BASIC id
# also names EN 16931, and the XRechnung extension also names XRechnung.
_PROFILE_MARKERS = (
    ("extension:xrechnung", "XRECHNUNG-EXTENSION"),
    ("xrechnung", "XRECHNUNG"),
    ("peppol", "PEPPOL-BIS-3"),
    ("basicwl", "BASIC-WL"),
    ("minimum", "MINIMUM"),
    ("extended", "EXTENDED"),
    ("comfort", "COMFORT"),
    ("basic", "BASIC"),
    ("en16931", "EN16931"),
)


def profile_of(specification: str | None) -> str | None:
    """The profile a specification id declares (`urn:factur-x.eu:1p0:minimum` → MINIMUM), or None."""
    if not specification:
        return None
    lowered = specification.lower()
    return next((profile for marker, profile in _PROFILE_MARKERS if marker in lowered), None)


def document_type(type_code: str | None) -> DocumentType:
    return DocumentType.CREDIT_NOTE if (type_code or "").strip() in CREDIT_NOTE_CODES else DocumentType.INVOICE


class Dialect:
    """The namespaces of one XML syntax and its compiled XPath expressions (compiled once per thread)."""

    def __init__(self, namespaces: dict[str, str]) -> None:
        self.namespaces = namespaces
        self._local = threading.local()

    def xpath(self, path: str) -> etree.XPath:
        cache: dict[str, etree.XPath] | None = getattr(self._local, "cache", None)
        if cache is None:
            cache = self._local.cache = {}
        compiled = cache.get(path)
        if compiled is None:
            compiled = cache[path] = etree.XPath(path, namespaces=self.namespaces)
        return compiled


class FieldSet:
    """Several fields below one element, read by one XPath union instead of one XPath per field.

    Each path is a chain of two or more child steps without predicates (`ram:A/ram:B`); a node the
    union returns is told apart by its own and its parent's tag, so no two paths may end in the
    same two steps. A field's value is what FieldReader.text would read for its path: the first
    non-empty text in document order. Each XPath evaluation has a fixed cost however little it
    finds, so one union reads a group of paths sooner than one XPath per path (less so for long
    paths from the root; figures in docs/tuning.md).
    """

    def __init__(self, dialect: Dialect, paths: Mapping[str, str]) -> None:
        self._xpath = dialect.xpath
        self._union = " | ".join(paths.values())
        self._names = {_last_two_tags(path, dialect.namespaces): name for name, path in paths.items()}
        if len(self._names) != len(paths):
            raise ValueError(f"two paths end in the same two steps: {dict(paths)}")

    def read(self, node: etree._Element) -> dict[str, str]:
        values: dict[str, str] = {}
        for found in self._xpath(self._union)(node):
            name = self._names[(found.getparent().tag, found.tag)]
            if name not in values and (value := clean(found.text)):
                values[name] = value
        return values


def _last_two_tags(path: str, namespaces: Mapping[str, str]) -> tuple[str, str]:
    steps = path.split("/")
    if len(steps) < 2 or any(step.count(":") != 1 or "[" in step for step in steps):
        raise ValueError(f"not a chain of two or more prefixed child steps: {path}")
    parent, leaf = (f"{{{namespaces[prefix]}}}{local}" for prefix, local in (step.split(":") for step in steps[-2:]))
    return parent, leaf


class FieldReader:
    """XPath access relative to one element, with the reasons for values that do not parse."""

    def __init__(self, dialect: Dialect) -> None:
        self._xpath = dialect.xpath
        self.reasons: list[str] = []

    def nodes(self, node: etree._Element, path: str) -> list[etree._Element]:
        found: list[etree._Element] = self._xpath(path)(node)
        return found

    def text(self, node: etree._Element, path: str) -> str | None:
        for found in self._xpath(path)(node):
            value = clean(found.text if isinstance(found, etree._Element) else str(found))
            if value:
                return value
        return None

    def fields(self, node: etree._Element, fields: FieldSet) -> dict[str, str]:
        return fields.read(node)

    def decimal(self, node: etree._Element, path: str, field: str) -> Decimal | None:
        return self.to_decimal(self.text(node, path), field)

    def to_decimal(self, raw: str | None, field: str) -> Decimal | None:
        """`raw` (a text this reader read) as a Decimal; None, with the reason, if it is not one."""
        if raw is None:
            return None
        try:
            return plain_decimal(raw)
        except ValueError:
            self.reasons.append(f"INVALID_VALUE:{field}")
            return None

    def date(self, node: etree._Element, path: str, field: str) -> dt.date | None:
        return self.to_date(self.text(node, path), field)

    def to_date(self, raw: str | None, field: str) -> dt.date | None:
        if raw is None:
            return None
        try:
            parsed = parse_date(raw)
        except ValueError:
            self.reasons.append(f"INVALID_VALUE:{field}")
            return None
        if isinstance(parsed, AmbiguousDate):
            self.reasons.append("AMBIGUOUS_DATE")
            return None
        return parsed.value

    def currency(self, node: etree._Element, path: str) -> str | None:
        return self.to_currency(self.text(node, path))

    def to_currency(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        code = raw.upper()
        if not is_iso_currency(code):
            self.reasons.append("INVALID_VALUE:currency")
            return None
        return code

    def amounts(self, node: etree._Element, nodes_path: str, amount_path: str, field: str) -> list[Decimal]:
        values = (self.decimal(found, amount_path, field) for found in self.nodes(node, nodes_path))
        return [value for value in values if value is not None]


def settle_total(
    stated: Decimal | None, parts: Iterable[Decimal], tolerance: Decimal, reasons: list[str]
) -> Decimal | None:
    """The document-level allowance (or charge) total: the stated BT-107/108, else the sum of the
    individual ones; a stated total that disagrees with the sum breaks BR-CO-11/12.
    """
    values = list(parts)
    if not values:
        return stated
    computed = sum(values, Decimal(0))
    if stated is None:
        return computed
    if abs(computed - stated) > tolerance:
        reasons.append("TOTALS_MISMATCH")
    return stated


def unit_price(price: Decimal | None, base_quantity: Decimal | None) -> Decimal | None:
    """BT-146 is the price per BT-149 units; LineItem.unitPrice is per one unit."""
    if price is None or base_quantity is None or base_quantity in (0, 1):
        return price
    return price / base_quantity
