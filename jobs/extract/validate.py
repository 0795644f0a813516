"""Validation: an extracted invoice plus the reader's findings → status and machine-readable reasons.

Reasons: MISSING_FIELD:<f>, LOW_CONFIDENCE:<f>, TOTALS_MISMATCH (EN 16931 BR-CO-10/13/15), and
whatever the reader reported (CONFLICTING_VALUES:<f>, AMBIGUOUS_DATE, MULTIPLE_DOCUMENTS,
INVALID_VALUE:<f>). No reasons → PROCESSED, any reason → REVIEW_REQUIRED.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from jobs.contract.invoice import Invoice, ValidationResult
from jobs.contract.status import Status
from jobs.extract.settings import ExtractionSettings

REQUIRED_FIELDS = ("invoiceNumber", "invoiceDate", "vendorName", "currency", "totalAmount")


def validate(invoice: Invoice, findings: Iterable[str], settings: ExtractionSettings) -> ValidationResult:
    reasons = list(findings)
    for name in REQUIRED_FIELDS:
        value = getattr(invoice, name)
        if value is None or value == "":
            reasons.append(f"MISSING_FIELD:{name}")
        elif invoice.confidence.get(name, 100.0) < settings.confidence_threshold:
            reasons.append(f"LOW_CONFIDENCE:{name}")
    reasons += totals_reasons(invoice, settings.totals_tolerance)
    unique = list(dict.fromkeys(reasons))
    return ValidationResult(status=Status.REVIEW_REQUIRED if unique else Status.PROCESSED, reasons=unique)


def totals_reasons(invoice: Invoice, tolerance: Decimal) -> list[str]:
    """BR-CO-10, BR-CO-13 and BR-CO-15, each checked only when all its operands were read."""
    def off(a: Decimal, b: Decimal) -> bool:
        return abs(a - b) > tolerance

    mismatched = False
    line_sum = _line_sum(invoice)
    if line_sum is not None and invoice.subtotal is not None:
        mismatched |= off(line_sum, invoice.subtotal)  # BR-CO-10
    tax_exclusive = invoice.taxExclusiveAmount
    if invoice.subtotal is not None:
        computed = invoice.subtotal - (invoice.allowanceTotal or 0) + (invoice.chargeTotal or 0)
        if tax_exclusive is not None:
            mismatched |= off(tax_exclusive, computed)  # BR-CO-13
        else:
            tax_exclusive = computed
    if tax_exclusive is not None and invoice.tax is not None and invoice.totalAmount is not None:
        mismatched |= off(invoice.totalAmount, tax_exclusive + invoice.tax)  # BR-CO-15
    return ["TOTALS_MISMATCH"] if mismatched else []


def _line_sum(invoice: Invoice) -> Decimal | None:
    amounts = [line.amount for line in invoice.lineItems]
    if not amounts or any(amount is None for amount in amounts):
        return None
    return sum(amounts, Decimal(0))  # type: ignore[arg-type]
