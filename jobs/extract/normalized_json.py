"""JSON uploads already in the normalized Invoice shape (a re-upload, or another system's export).

Another system's export is read like a document: its names lose invisible edges (jobs.extract.text)
and a currency that is no ISO 4217 code is an invalid value, as in the XML readers.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from jobs.contract.currencies import is_iso_currency
from jobs.contract.invoice import DocumentFormat, FailureCode, Invoice
from jobs.extract.result import DocumentRejectedError, Extraction
from jobs.extract.text import clean

_FIELDS = frozenset(Invoice.model_fields)
# A JSON object counts as a normalized invoice only if it names at least one of these.
_SIGNATURE = frozenset({"invoiceNumber", "totalAmount", "lineItems", "vendorName", "invoiceDate"})
_NAMES = ("invoiceNumber", "vendorName", "vendorTaxId", "buyerName")


def is_normalized(payload: Any) -> bool:
    if not isinstance(payload, dict):
        return False
    keys = payload.keys()
    return keys <= _FIELDS and bool(keys & _SIGNATURE)


def extract_normalized(data: bytes, payload: dict[str, Any]) -> Extraction:
    # Re-read with Decimal so "12.10" as a JSON number never passes through a binary float.
    exact = json.loads(data, parse_float=Decimal)
    try:
        invoice = Invoice.model_validate(exact)
    except ValidationError as exc:
        errors = "; ".join(f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()[:5])
        raise DocumentRejectedError(
            FailureCode.MALFORMED, f"not a valid normalized invoice: {errors}", DocumentFormat.NORMALIZED_JSON
        ) from exc
    updates: dict[str, Any] = {name: clean(getattr(invoice, name)) for name in _NAMES}
    reasons: list[str] = []
    if invoice.currency is not None and not is_iso_currency(invoice.currency):
        updates["currency"] = None
        reasons.append("INVALID_VALUE:currency")
    return Extraction(
        DocumentFormat.NORMALIZED_JSON, "normalized-json", payload, invoice.model_copy(update=updates), reasons
    )
