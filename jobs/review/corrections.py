"""A reviewer's corrections of a document's header fields, read and checked like an extraction.

`parse` turns `field=value` pairs into typed values with the extraction's own parsers (dates,
money, currency codes, names), so a reviewer's `1.337,50 €` or `15.03.2026` means what it means
in a document. `apply` puts them on the invoice as it stands, pads and bounds the amounts
(jobs.extract.amounts) and validates the result with jobs.extract.validate: the reasons the
document keeps are those the corrected invoice still earns. A value the extraction itself could
not accept (an impossible date, a number that is none, a currency that is no ISO 4217 code, a
name with no visible character, a value beyond the model's bounds) is refused, naming the field.
A value it accepts with a reason is accepted with that reason: a negative total on an invoice
that is no correction keeps NEGATIVE_TOTAL, which the reviewer may settle. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from jobs.contract import Correction, Invoice, ValidationResult
from jobs.contract.currencies import WITHDRAWN_CODES, in_use_on, is_iso_currency
from jobs.errors import ReviewRefusedError
from jobs.extract.amounts import normalize_amounts
from jobs.extract.parsing import AmbiguousDate, parse_date, parse_money, symbol_currency
from jobs.extract.result import DocumentRejectedError
from jobs.extract.settings import ExtractionSettings
from jobs.extract.text import clean
from jobs.extract.validate import DERIVED_REASONS, validate

# The header fields a reviewer may set, by the short names the CLI takes and their own names.
FIELDS = {
    "vendor": "vendorName",
    "number": "invoiceNumber",
    "date": "invoiceDate",
    "currency": "currency",
    "total": "totalAmount",
}
_NAMES = {**FIELDS, **{name: name for name in FIELDS.values()}}
# Reader findings that are about one field even though they do not name it.
_FIELD_OF_FINDING = {"AMBIGUOUS_DATE": "invoiceDate"}


@dataclass(frozen=True)
class Corrected:
    invoice: Invoice
    validation: ValidationResult
    corrections: tuple[Correction, ...]  # only the fields whose value changed


def parse(pairs: list[str]) -> dict[str, str]:
    """`field=value` pairs → {field's own name: value text}; unknown or repeated fields refused."""
    changes: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        field = _NAMES.get(name.strip())
        if not sep or field is None:
            known = ", ".join(FIELDS)
            raise ReviewRefusedError(f"unknown field {name.strip()!r} in {pair!r}: set one of {known} (field=value)")
        if field in changes:
            raise ReviewRefusedError(f"{field} is set twice")
        changes[field] = value
    if not changes:
        raise ReviewRefusedError("nothing to correct: give --set field=value")
    return changes


def apply(
    invoice: Invoice | None,
    findings: list[str],
    changes: dict[str, str],
    *,
    settings: ExtractionSettings,
    actor: str,
    now: datetime,
) -> Corrected:
    """The invoice with `changes` applied, validated like an extraction.

    `findings` are the reasons the document had; the reader's own (anything validate does not
    derive) are kept unless they concern a corrected field, which the reviewer settled.
    """
    base = invoice or Invoice()
    values = {field: _value(field, text, base, changes) for field, text in changes.items()}
    confidence = {k: v for k, v in base.confidence.items() if k not in values}  # the reviewer's word is sure
    try:
        checked = Invoice.model_validate({**base.model_dump(), **values, "confidence": confidence})
        checked = normalize_amounts(checked)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ReviewRefusedError(f"{where}: {first['msg']}") from exc
    except DocumentRejectedError as exc:
        raise ReviewRefusedError(exc.message) from exc
    _check_currency_date(checked, values)
    kept = [r for r in findings if not r.startswith(DERIVED_REASONS) and _concerns(r) not in values]
    corrections = tuple(
        Correction(
            field=field, before=_text(getattr(base, field)), after=_text(getattr(checked, field)), by=actor, at=now
        )
        for field in values
        if getattr(base, field) != getattr(checked, field)
    )
    return Corrected(checked, validate(checked, kept, settings), corrections)


def _check_currency_date(invoice: Invoice, values: dict[str, Any]) -> None:
    """A withdrawn code (HRK) the reviewer's currency or date puts after its withdrawal is refused."""
    code = invoice.currency
    if code and ("currency" in values or "invoiceDate" in values) and not in_use_on(code, invoice.invoiceDate):
        raise ReviewRefusedError(
            f"currency {code!r} is an ISO 4217 code withdrawn on {WITHDRAWN_CODES[code]}: "
            f"the invoice is dated {invoice.invoiceDate or 'nowhere'}"
        )


def _value(field: str, text: str, base: Invoice, changes: dict[str, str]) -> Any:
    """One field's value read from the reviewer's text as an extraction would read it."""
    if field in ("vendorName", "invoiceNumber"):
        value = clean(text)
        if value is None and text.strip():
            # A zero-width space or a BOM alone would look like no name on every screen.
            raise ReviewRefusedError(f"{field} {text!r} has no visible characters")
        if value is None:
            raise ReviewRefusedError(f"{field} cannot be empty")
        return value
    if field == "invoiceDate":
        try:
            parsed = parse_date(text)
        except ValueError as exc:
            raise ReviewRefusedError(f"invoiceDate: {exc}") from exc
        if isinstance(parsed, AmbiguousDate):
            raise ReviewRefusedError(
                f"invoiceDate {text!r} reads as {parsed.day_first} or {parsed.month_first}: write it as YYYY-MM-DD"
            )
        return parsed.value
    if field == "currency":
        code = text.strip().upper()
        if not is_iso_currency(code):
            raise ReviewRefusedError(f"currency {text!r} is not an ISO 4217 currency code")
        return code
    return _total(text, changes.get("currency", base.currency or ""))


def _total(text: str, currency: str) -> Decimal:
    try:
        money = parse_money(text)
    except ValueError as exc:
        raise ReviewRefusedError(f"totalAmount: {exc}") from exc
    said = symbol_currency(money.currency, None)
    if said is not None and currency and said != currency.strip().upper():
        raise ReviewRefusedError(f"totalAmount {text!r} is in {said}, the invoice in {currency.strip().upper()}")
    return money.amount


def _concerns(reason: str) -> str | None:
    """The field a reader's finding is about (`INVALID_VALUE:invoiceDate`), if any."""
    return _FIELD_OF_FINDING.get(reason) or (reason.partition(":")[2] or None)


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value.isoformat() if isinstance(value, date) else str(value)
