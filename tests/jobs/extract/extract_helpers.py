"""Shared test helpers: corpus locations and Textract response builders (imported by the tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]
CORPUS = REPO_ROOT / "tests" / "data" / "corpus"
EINVOICE = CORPUS / "einvoice"
TEXTRACT = CORPUS / "textract"


def summary_field(
    kind: str, text: str, confidence: float = 99.0, groups: tuple[str, ...] = (), currency: str | None = None
) -> dict[str, Any]:
    field: dict[str, Any] = {
        "Type": {"Text": kind, "Confidence": 99.0},
        "ValueDetection": {"Text": text, "Confidence": confidence},
        "PageNumber": 1,
    }
    if groups:
        field["GroupProperties"] = [{"Types": list(groups), "Id": "g1"}]
    if currency:
        field["Currency"] = {"Code": currency}
    return field


def line_item(**fields: str) -> dict[str, Any]:
    return {
        "LineItemExpenseFields": [
            {"Type": {"Text": kind}, "ValueDetection": {"Text": text, "Confidence": 99.0}}
            for kind, text in fields.items()
        ]
    }


def textract_doc(fields: list[dict[str, Any]], lines: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "ExpenseIndex": 1,
        "SummaryFields": fields,
        "LineItemGroups": [{"LineItemGroupIndex": 1, "LineItems": lines or []}],
    }


def textract_bytes(*documents: dict[str, Any], **top: Any) -> bytes:
    return json.dumps({"DocumentMetadata": {"Pages": 1}, "ExpenseDocuments": list(documents), **top}).encode()


def complete_fields(**overrides: str) -> list[dict[str, Any]]:
    """Summary fields of a consistent, confident receipt; override a value by Textract type."""
    values = {
        "INVOICE_RECEIPT_ID": "INV-1",
        "INVOICE_RECEIPT_DATE": "March 15, 2026",
        "VENDOR_NAME": "ACME GmbH",
        "SUBTOTAL": "1.000,00 €",
        "TAX": "190,00 €",
        "TOTAL": "1.190,00 €",
    } | overrides
    return [summary_field(kind, text) for kind, text in values.items() if text]
