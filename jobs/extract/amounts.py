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

from jobs.contract.invoice import FailureCode, Invoice
from jobs.contract.item import DYNAMODB_MAX_DIGITS, dynamodb_number_problem
from jobs.extract.result import DocumentRejectedError

MONEY_FIELDS = ("subtotal", "allowanceTotal", "chargeTotal", "taxExclusiveAmount", "tax", "totalAmount",
                "prepaidAmount", "amountDue")
_LINE_NUMBERS = ("quantity", "unitPrice", "amount", "taxRate")
# ISO 4217 minor units that differ from 2.
_MINOR_UNITS = {"JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "BHD": 3, "JOD": 3, "KWD": 3, "OMR": 3, "TND": 3}


def normalize_amounts(invoice: Invoice) -> Invoice:
    """The invoice with storable, padded amounts; DocumentRejectedError(MALFORMED) otherwise."""
    minor = _MINOR_UNITS.get(invoice.currency or "", 2)
    for where, value in _numbers(invoice):
        if problem := _problem(value, minor):
            raise DocumentRejectedError(FailureCode.MALFORMED, f"{where} is out of range: {problem}")
    exponent = Decimal(1).scaleb(-minor)

    def padded(value: Decimal | None) -> Decimal | None:
        if value is None:
            return None
        if value.is_zero() and value.is_signed():
            value = value.copy_abs()
        # Only pad: quantizing 3.3333 to the cent would change the amount.
        if int(value.as_tuple().exponent) <= -minor:
            return value
        return value.quantize(exponent)

    updates: dict[str, Any] = {name: padded(getattr(invoice, name)) for name in MONEY_FIELDS}
    updates["lineItems"] = [
        line if padded(line.amount) is line.amount else line.model_copy(update={"amount": padded(line.amount)})
        for line in invoice.lineItems
    ]
    return invoice.model_copy(update=updates)


def _numbers(invoice: Invoice) -> Iterator[tuple[str, Decimal]]:
    for name in MONEY_FIELDS:
        if (value := getattr(invoice, name)) is not None:
            yield name, value
    for index, line in enumerate(invoice.lineItems):
        for name in _LINE_NUMBERS:
            if (value := getattr(line, name)) is not None:
                yield f"lineItems[{index}].{name}", value


def _problem(value: Decimal, minor: int) -> str | None:
    if not value.is_finite() or value.is_zero():
        return dynamodb_number_problem(value)
    exponent = int(value.as_tuple().exponent)
    adjusted = value.adjusted()
    # The common case decided from two integers; the exact digit count only when it can matter.
    if not (-130 <= adjusted <= 125) or len(value.as_tuple().digits) > DYNAMODB_MAX_DIGITS:
        if problem := dynamodb_number_problem(value):
            return problem
    digits = adjusted + 1 + max(minor, -exponent)
    if digits > getcontext().prec:
        return f"{digits} significant digits (the totals checks compute {getcontext().prec} exactly)"
    return None
