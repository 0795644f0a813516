"""Validation: an extracted invoice plus the reader's findings → status and machine-readable reasons.

Reasons: MISSING_FIELD:<f>, LOW_CONFIDENCE:<f>, TOTALS_MISMATCH (EN 16931 BR-CO-10/13/15, on the lines a
hierarchy counts, and BR-DEX-02 for each parent line), NEGATIVE_TOTAL (an invoice whose total is
below zero, unless it is a corrected invoice, 384, or a credit note: our rule, not the standard's),
CURRENCY_WITHDRAWN (a withdrawn ISO 4217 code, HRK say, on an invoice dated on or after its
withdrawal: jobs.contract.currencies), and whatever the reader reported (CONFLICTING_VALUES:<f>,
AMBIGUOUS_DATE, MULTIPLE_DOCUMENTS, INVALID_VALUE:<f>). No reasons → PROCESSED, any reason → REVIEW_REQUIRED.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from jobs.contract.currencies import in_use_on
from jobs.contract.invoice import DocumentType, Invoice, ValidationResult
from jobs.contract.status import Status
from jobs.extract.einvoice import CORRECTED_INVOICE_CODES
from jobs.extract.line_tree import counted_line_sum
from jobs.extract.settings import ExtractionSettings

REQUIRED_FIELDS = ("invoiceNumber", "invoiceDate", "vendorName", "currency", "totalAmount")
# Reasons validate() derives from the invoice itself (a reader's own findings are passed in).
DERIVED_REASONS = ("MISSING_FIELD:", "LOW_CONFIDENCE:", "TOTALS_MISMATCH", "NEGATIVE_TOTAL", "CURRENCY_WITHDRAWN")


def validate(invoice: Invoice, findings: Iterable[str], settings: ExtractionSettings) -> ValidationResult:
    reasons = list(findings)
    for name in REQUIRED_FIELDS:
        value = getattr(invoice, name)
        if value is None or value == "":
            reasons.append(f"MISSING_FIELD:{name}")
        elif invoice.confidence.get(name, 100.0) < settings.confidence_threshold:
            reasons.append(f"LOW_CONFIDENCE:{name}")
    reasons += totals_reasons(invoice, settings.totals_tolerance)
    reasons += sign_reasons(invoice)
    if invoice.currency and not in_use_on(invoice.currency, invoice.invoiceDate):
        reasons.append("CURRENCY_WITHDRAWN")  # readers accept every ISO code; the date decides here
    unique = list(dict.fromkeys(reasons))
    return ValidationResult(status=Status.REVIEW_REQUIRED if unique else Status.PROCESSED, reasons=unique)


def totals_reasons(invoice: Invoice, tolerance: Decimal) -> list[str]:
    """BR-CO-10, BR-CO-13 and BR-CO-15, each checked only when all its operands were read."""

    def off(a: Decimal, b: Decimal) -> bool:
        return abs(a - b) > tolerance

    line_sum = counted_line_sum(invoice.lineItems, tolerance)
    mismatched = not line_sum.groups_consistent  # BR-DEX-02: a parent line is the sum beneath it
    if line_sum.total is not None and invoice.subtotal is not None:
        mismatched |= off(line_sum.total, invoice.subtotal)  # BR-CO-10, on the lines the standard counts
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


def sign_reasons(invoice: Invoice) -> list[str]:
    """NEGATIVE_TOTAL for an invoice that is no correction (BT-3 not 384) and totals below zero.

    Not an EN 16931 rule: the standard constrains sums (BR-CO-10..16), never their sign, and a
    credit note or a corrected invoice below zero is what correcting downwards looks like. The
    rule is ours: an invoice (380, or a scan with no type code) that asks for less than nothing
    is money owed the other way, or a misread minus, so a person looks before it is paid.
    """
    if invoice.totalAmount is None or invoice.totalAmount >= 0 or invoice.documentType is not DocumentType.INVOICE:
        return []
    return [] if (invoice.typeCode or "").strip() in CORRECTED_INVOICE_CODES else ["NEGATIVE_TOTAL"]
