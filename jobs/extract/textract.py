"""Amazon Textract AnalyzeExpense / GetExpenseAnalysis responses → Invoice.

Owns the Textract quirks: a field type repeated with equal or conflicting values, the vendor
given as VENDOR_NAME or as a NAME grouped VENDOR, several ExpenseDocuments for one upload, and
per-value confidences. Conflicts are resolved to the most confident value and reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from jobs.contract.currencies import is_iso_currency
from jobs.contract.invoice import DocumentFormat, FailureCode, Invoice, LineItem
from jobs.extract.parsing import (
    AmbiguousDate,
    DateOrder,
    ParsedDate,
    parse_date,
    parse_money,
    parse_number,
    symbol_currency,
)
from jobs.extract.result import DocumentRejectedError, Extraction
from jobs.extract.settings import ExtractionSettings
from jobs.extract.text import clean

_TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "invoiceNumber": ("INVOICE_RECEIPT_ID",),
    "vendorName": ("VENDOR_NAME", "NAME@VENDOR"),
    "vendorTaxId": ("VENDOR_VAT_NUMBER", "VENDOR_GST_NUMBER", "TAX_PAYER_ID"),
    "buyerName": ("RECEIVER_NAME", "NAME@RECEIVER"),
}
_DATE_FIELDS: dict[str, tuple[str, ...]] = {"invoiceDate": ("INVOICE_RECEIPT_DATE",), "dueDate": ("DUE_DATE",)}
_MONEY_FIELDS: dict[str, tuple[str, ...]] = {
    "subtotal": ("SUBTOTAL",),
    "tax": ("TAX",),
    "totalAmount": ("TOTAL",),
    "amountDue": ("AMOUNT_DUE",),
    "prepaidAmount": ("AMOUNT_PAID",),
    "allowanceTotal": ("DISCOUNT",),
}
# The Invoice field each AnalyzeExpense type fills, for readers that report on their own fields.
FIELD_OF_TYPE: dict[str, str] = {
    kind: name
    for table in (_TEXT_FIELDS, _DATE_FIELDS, _MONEY_FIELDS)
    for name, kinds in table.items()
    for kind in kinds
}
# Other dated fields only lend their day/month order to settle an ambiguous invoice date.
_ORDER_EVIDENCE = ("INVOICE_RECEIPT_DATE", "DUE_DATE", "ORDER_DATE", "DELIVERY_DATE")
# Two buyer names (a company and an "Attn:" person) are normal; two totals are not.
_CONFLICT_CHECKED = frozenset(
    {"invoiceNumber", "vendorName", "invoiceDate", "dueDate", "subtotal", "tax", "totalAmount", "amountDue"}
)
_OK_JOB_STATUSES = frozenset({"SUCCEEDED", "PARTIAL_SUCCESS"})


def is_textract(payload: Any) -> bool:
    pages = payload if isinstance(payload, list) else [payload]
    return bool(pages) and all(isinstance(p, dict) and "ExpenseDocuments" in p for p in pages)


@dataclass(frozen=True, slots=True)
class _Value:
    type: str  # "TOTAL", or "NAME@VENDOR" for a NAME grouped as VENDOR
    text: str
    confidence: float
    currency_code: str | None


def _documents(payload: Any) -> list[dict[str, Any]]:
    # A list is the pages of a paginated GetExpenseAnalysis, concatenated by the uploader.
    pages = payload if isinstance(payload, list) else [payload]
    documents: list[dict[str, Any]] = []
    for page in pages:
        status = page.get("JobStatus")
        if status is not None and status not in _OK_JOB_STATUSES:
            raise DocumentRejectedError(
                FailureCode.MALFORMED, f"Textract job status {status}", DocumentFormat.TEXTRACT_EXPENSE
            )
        docs = page["ExpenseDocuments"]
        if not isinstance(docs, list) or not all(isinstance(d, dict) for d in docs):
            raise DocumentRejectedError(
                FailureCode.MALFORMED, "ExpenseDocuments is not a list of objects", DocumentFormat.TEXTRACT_EXPENSE
            )
        documents += docs
    return documents


def _detection(field: dict[str, Any], key: str) -> dict[str, Any]:
    found = field.get(key)
    return found if isinstance(found, dict) else {}


def _summary_values(documents: Iterable[dict[str, Any]]) -> Iterator[_Value]:
    for document in documents:
        for field in document.get("SummaryFields") or ():
            value = _detection(field, "ValueDetection")
            text = value.get("Text")
            if not isinstance(text, str) or not text.strip():
                continue
            kind = str(_detection(field, "Type").get("Text") or "")
            currency = _detection(field, "Currency").get("Code")
            confidence = float(value.get("Confidence") or 0.0)
            yield _Value(kind, text, confidence, currency if isinstance(currency, str) else None)
            if kind == "NAME":
                for group in field.get("GroupProperties") or ():
                    for group_type in group.get("Types") or ():
                        yield _Value(f"NAME@{group_type}", text, confidence, None)


def _ocr_text(text: str) -> str | None:
    # OCR splits names over lines and picks up stray dashes ("META\n-"): keep lines with content.
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return clean(" ".join(line for line in lines if any(ch.isalnum() for ch in line)))


class _Resolver:
    def __init__(self, values: list[_Value]) -> None:
        self.by_type: dict[str, list[_Value]] = {}
        for value in values:
            self.by_type.setdefault(value.type, []).append(value)
        self.reasons: list[str] = []
        self.confidence: dict[str, float] = {}

    def candidates(self, types: tuple[str, ...]) -> list[_Value]:
        # The first type that is present wins: NAME@VENDOR only stands in for a missing VENDOR_NAME.
        for kind in types:
            if kind in self.by_type:
                return self.by_type[kind]
        return []

    def resolve(self, name: str, types: tuple[str, ...], parse: Callable[[str], Any]) -> Any:
        parsed: list[tuple[Any, float]] = []
        invalid = False
        for candidate in self.candidates(types):
            try:
                result = parse(candidate.text)
            except ValueError:
                invalid = True
                continue
            if result is not None:  # None: readable but unsettled (an ambiguous date), reported by the parser
                parsed.append((result, candidate.confidence))
        if not parsed:
            if invalid:
                self.reasons.append(f"INVALID_VALUE:{name}")
            return None
        best: dict[Any, float] = {}
        votes: Counter[Any] = Counter()
        for result, confidence in parsed:
            best[result] = max(best.get(result, 0.0), confidence)
            votes[result] += 1
        chosen = max(best, key=lambda r: (best[r], votes[r]))
        if len(best) > 1 and name in _CONFLICT_CHECKED:
            self.reasons.append(f"CONFLICTING_VALUES:{name}")
        self.confidence[name] = best[chosen]
        return chosen


def _money_amount(text: str) -> Decimal:
    return parse_money(text).amount


def _optional_money(text: str | None) -> Decimal | None:
    if not text:
        return None
    try:
        return parse_money(text).amount
    except ValueError:
        return None


def _date_parser(orders: set[str], reasons: list[str]) -> Callable[[str], date | None]:
    settled = next(iter(orders)) if len(orders) == 1 else None

    def parse(text: str) -> date | None:
        parsed = parse_date(text)
        if isinstance(parsed, AmbiguousDate):
            resolved = parsed.resolve(settled)
            if resolved is None:
                reasons.append("AMBIGUOUS_DATE")
            return resolved
        return parsed.value

    return parse


def _date_orders(resolver: _Resolver) -> set[str]:
    orders: set[str] = set()
    for kind in _ORDER_EVIDENCE:
        for value in resolver.by_type.get(kind, ()):
            try:
                parsed = parse_date(value.text)
            except ValueError:
                continue
            if isinstance(parsed, ParsedDate) and parsed.order in (DateOrder.DMY, DateOrder.MDY):
                orders.add(parsed.order)
    return orders


def _hinted_order(payload: Any) -> set[str]:
    # Our local engines add "DateOrder" when the page's language settles it (German, French).
    hint = payload.get("DateOrder") if isinstance(payload, dict) else None
    return {hint} if hint in (DateOrder.DMY, DateOrder.MDY) else set()


def _currency(values: list[_Value], settings: ExtractionSettings, reasons: list[str]) -> str | None:
    # Textract's own Currency.Code beats symbols we find in the text; a code that is no ISO 4217
    # code (a misread, or an invented one) is invalid, and then only the symbols can settle it.
    codes = Counter(v.currency_code.strip().upper() for v in values if v.currency_code)
    for code in [code for code in codes if not is_iso_currency(code)]:
        del codes[code]
        reasons.append("INVALID_VALUE:currency")
    if not codes:
        for value in values:
            if value.type in ("TOTAL", "SUBTOTAL", "TAX", "AMOUNT_DUE", "AMOUNT_PAID", "DISCOUNT"):
                try:
                    found = symbol_currency(parse_money(value.text).currency, settings.dollar_sign_currency)
                except ValueError:
                    continue
                if found:
                    codes[found] += 1
    if len(codes) > 1:
        reasons.append("CONFLICTING_VALUES:currency")
    return codes.most_common(1)[0][0] if codes else None


def _line_items(documents: list[dict[str, Any]]) -> list[LineItem]:
    items: list[LineItem] = []
    for document in documents:
        for group in document.get("LineItemGroups") or ():
            for line in group.get("LineItems") or ():
                fields: dict[str, str] = {}
                for field in line.get("LineItemExpenseFields") or ():
                    kind = str(_detection(field, "Type").get("Text") or "")
                    text = _detection(field, "ValueDetection").get("Text")
                    if isinstance(text, str) and text.strip():
                        fields.setdefault(kind, text)
                quantity: Decimal | None
                try:
                    quantity = parse_number(fields["QUANTITY"]) if "QUANTITY" in fields else None
                except ValueError:
                    quantity = None
                description = fields.get("ITEM") or fields.get("EXPENSE_ROW")
                items.append(
                    LineItem(
                        lineNumber=len(items) + 1,
                        description=_ocr_text(description) if description else None,
                        quantity=quantity,
                        unitPrice=_optional_money(fields.get("UNIT_PRICE")),
                        amount=_optional_money(fields.get("PRICE")),
                    )
                )
    return items


def extract_textract(payload: Any, settings: ExtractionSettings) -> Extraction:
    documents = _documents(payload)
    if not documents:
        raise DocumentRejectedError(
            FailureCode.EMPTY, "Textract response has no ExpenseDocuments", DocumentFormat.TEXTRACT_EXPENSE
        )
    values = list(_summary_values(documents))
    resolver = _Resolver(values)
    reasons: list[str] = ["MULTIPLE_DOCUMENTS"] if len(documents) > 1 else []
    fields: dict[str, Any] = {}
    for name, types in _TEXT_FIELDS.items():
        fields[name] = resolver.resolve(name, types, _ocr_text)
    date_reasons: list[str] = []
    parse = _date_parser(_date_orders(resolver) or _hinted_order(payload), date_reasons)
    for name, types in _DATE_FIELDS.items():
        fields[name] = resolver.resolve(name, types, parse)
    for name, types in _MONEY_FIELDS.items():
        fields[name] = resolver.resolve(name, types, _money_amount)
    if fields["allowanceTotal"] is not None:
        fields["allowanceTotal"] = abs(fields["allowanceTotal"])  # printed as "-1,136.16" or "1,136.16"
    invoice = Invoice(
        **fields,
        currency=_currency(values, settings, reasons),
        lineItems=_line_items(documents),
        confidence=resolver.confidence,
    )
    return Extraction(
        DocumentFormat.TEXTRACT_EXPENSE, "textract-json", payload, invoice, reasons + resolver.reasons + date_reasons
    )
