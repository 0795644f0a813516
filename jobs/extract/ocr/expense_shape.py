"""Paired fields → an AnalyzeExpense-shaped response, so jobs/extract/textract.py reads every engine.

Owns the dict layout only: Type / LabelDetection / ValueDetection with Textract's relative
BoundingBox geometry (0-1 of the page), PageNumber, a Currency code on money fields when the
document states one (a currency label, else the one currency printed beside its amounts), and
LineItemGroups (left empty: line items are not read from layout yet).
"""

from __future__ import annotations

from typing import Any

from jobs.extract.ocr.labels import Candidate, currency_of
from jobs.extract.ocr.lines import Page, Word
from jobs.extract.ocr.page_locale import date_order, page_currency

_MONEY_TYPES = frozenset({"TOTAL", "SUBTOTAL", "TAX", "AMOUNT_DUE", "AMOUNT_PAID", "DISCOUNT"})


def expense_response(pages: list[Page], candidates: list[Candidate], engine: str) -> dict[str, Any]:
    sizes = {page.number: (page.width, page.height) for page in pages}
    # A stated currency (a "Währung" label) wins; else the one currency printed beside the amounts.
    currency = currency_of(candidates) or page_currency(pages)
    fields = [_summary_field(c, sizes, currency) for c in candidates if c.type != "CURRENCY"]
    response: dict[str, Any] = {
        "DocumentMetadata": {"Pages": len(pages)},
        "ExpenseDocuments": [{"ExpenseIndex": 1, "SummaryFields": fields, "LineItemGroups": []}],
        "Engine": engine,  # not a Textract key: says which local engine produced this shape
    }
    if order := date_order(pages):
        response["DateOrder"] = order  # not a Textract key: the page's language settles numeric dates
    return response


def _summary_field(candidate: Candidate, sizes: dict[int, tuple[float, float]], currency: str | None) -> dict[str, Any]:
    page = candidate.value[0].page
    width, height = sizes.get(page, (1.0, 1.0))
    field: dict[str, Any] = {
        "Type": {"Text": candidate.type, "Confidence": round(candidate.confidence, 2)},
        "ValueDetection": {
            "Text": candidate.value_text,
            "Geometry": _geometry(candidate.value, width, height),
            "Confidence": round(candidate.confidence, 2),
        },
        "PageNumber": page,
    }
    if candidate.label:
        field["LabelDetection"] = {
            "Text": " ".join(w.text for w in candidate.label),
            "Geometry": _geometry(candidate.label, width, height),
            "Confidence": round(sum(w.confidence for w in candidate.label) / len(candidate.label), 2),
        }
    if currency and candidate.type in _MONEY_TYPES:
        field["Currency"] = {"Code": currency}
    return field


def _geometry(words: list[Word], width: float, height: float) -> dict[str, Any]:
    left, top = min(w.left for w in words), min(w.top for w in words)
    right, bottom = max(w.right for w in words), max(w.bottom for w in words)
    return {
        "BoundingBox": {
            "Left": round(left / width, 5),
            "Top": round(top / height, 5),
            "Width": round((right - left) / width, 5),
            "Height": round((bottom - top) / height, 5),
        }
    }
