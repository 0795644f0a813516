"""Amounts at the extraction boundary: numbers the pipeline can compute and store, printed alike.

Owns two rules every reader's output passes through. An amount DynamoDB cannot hold (more than 38
significant digits, magnitudes outside 1E-130..9.9E+125, not finite) or that the arithmetic
checks cannot compute exactly (more than 28 significant digits once padded to its currency's
minor unit, Decimal's default precision) makes the document MALFORMED, naming the field, instead
of failing a whole DynamoDB transaction later. Amounts are padded to the minor unit (`473` and
`473.00` print alike) and a negative zero loses its sign (`-0` is `0`, as DynamoDB stores it).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal, getcontext
from typing import Any

from jobs.contract.invoice import FailureCode, Invoice, LineItem
from jobs.contract.item import DYNAMODB_MAX_DIGITS, dynamodb_number_problem
from jobs.extract.result import DocumentRejectedError

MONEY_FIELDS = (
    "subtotal",
    "allowanceTotal",
    "chargeTotal",
    "taxExclusiveAmount",
    "tax",
    "totalAmount",
    "prepaidAmount",
    "amountDue",
)
_LINE_NUMBERS = ("quantity", "unitPrice", "amount", "taxRate")
# ISO 4217 minor units that differ from 2.
_MINOR_UNITS = {"JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "BHD": 3, "JOD": 3, "KWD": 3, "OMR": 3, "TND": 3}


def normalize_amounts(invoice: Invoice) -> Invoice:
    """The invoice with storable, padded amounts; DocumentRejectedError(MALFORMED) otherwise."""
    minor = _MINOR_UNITS.get(invoice.currency or "", 2)
    short = _short_enough(minor)
    for name, index, value in _numbers(invoice):
        if problem := _problem(value, minor, short):
            where = name if index is None else f"lineItems[{index}].{name}"
            raise DocumentRejectedError(FailureCode.MALFORMED, f"{where} is out of range: {problem}")
    exponent = Decimal(1).scaleb(-minor)

    def padded(value: Decimal | None) -> Decimal | None:
        if value is None:
            return None
        if value.is_zero() and value.is_signed():
            value = value.copy_abs()
        # Most amounts already have exactly the minor unit's decimals: one cheap same_quantum
        # instead of as_tuple, which builds a named tuple of every digit (docs/tuning.md).
        if value.same_quantum(exponent):
            return value
        # Only pad: quantizing 3.3333 to the cent would change the amount.
        if int(value.as_tuple().exponent) <= -minor:
            return value
        return value.quantize(exponent)

    updates: dict[str, Any] = {name: padded(getattr(invoice, name)) for name in MONEY_FIELDS}
    updates["lineItems"] = [_with_amount(line, padded(line.amount)) for line in invoice.lineItems]
    return invoice.model_copy(update=updates)


def _with_amount(line: LineItem, amount: Decimal | None) -> LineItem:
    return line if amount is line.amount else line.model_copy(update={"amount": amount})


def _numbers(invoice: Invoice) -> Iterator[tuple[str, int | None, Decimal]]:
    """Every number the rules apply to: its field, line index (None on the invoice) and value.

    The location is formatted only for a number with a problem: an f-string per line number
    was a noticeable share of normalize_amounts (docs/tuning.md).
    """
    for name in MONEY_FIELDS:
        if (value := getattr(invoice, name)) is not None:
            yield name, None, value
    for index, line in enumerate(invoice.lineItems):
        for name in _LINE_NUMBERS:
            if (value := getattr(line, name)) is not None:
                yield name, index, value


def _short_enough(minor: int) -> int:
    """The longest printed form (`str`) of a finite number that passes every check without looking
    further: see _problem. The bound holds for the context's precision read now.
    """
    return min(getcontext().prec, DYNAMODB_MAX_DIGITS) - minor


def _problem(value: Decimal, minor: int, short: int) -> str | None:
    if not value.is_finite() or value.is_zero():
        return dynamodb_number_problem(value)
    # Fast path, cheaper than the exact checks below (no as_tuple; docs/tuning.md). A finite number printed
    # without an exponent has its digits before and after the point in its text, so no more
    # significant digits, integer digits or decimals than `len(text)`; if that plus the minor
    # unit fits the precision (≤ 38), and it has an integer digit count well inside DynamoDB's
    # magnitude range (plain notation means adjusted ≥ -6), every check below passes.
    text = str(value)
    if len(text) <= short and "E" not in text and "e" not in text:
        return None
    exponent = int(value.as_tuple().exponent)
    adjusted = value.adjusted()
    # The common case decided from two integers (the digit count is adjusted - exponent + 1);
    # the exact digit count only when it can matter.
    outside_fast_range = not (-130 <= adjusted <= 125) or adjusted - exponent + 1 > DYNAMODB_MAX_DIGITS
    if outside_fast_range and (problem := dynamodb_number_problem(value)):
        return problem
    digits = adjusted + 1 + max(minor, -exponent)
    if digits > getcontext().prec:
        return f"{digits} significant digits (the totals checks compute {getcontext().prec} exactly)"
    return None
