"""The normalized invoice, the validation result and the extraction outcome (pure pydantic models).

Every extractor (Textract, UBL, CII, Factur-X, normalized JSON) produces these; the ingest job
writes them into result.json and summarises them on the DynamoDB item.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from jobs.contract.status import Status


class DocumentFormat(StrEnum):
    TEXTRACT_EXPENSE = "TEXTRACT_EXPENSE"
    UBL = "UBL"
    CII = "CII"
    FACTURX_PDF = "FACTURX_PDF"
    ZUGFERD1 = "ZUGFERD1"  # ZUGFeRD 1.0 XML (urn:ferd:CrossIndustryDocument:invoice:1p0), before EN 16931
    ZUGFERD1_PDF = "ZUGFERD1_PDF"  # a PDF/A-3 carrying ZUGFeRD-invoice.xml
    NORMALIZED_JSON = "NORMALIZED_JSON"
    PDF = "PDF"  # a PDF without an embedded e-invoice
    IMAGE = "IMAGE"
    UNKNOWN = "UNKNOWN"


class DocumentType(StrEnum):
    INVOICE = "INVOICE"
    CREDIT_NOTE = "CREDIT_NOTE"


class LineStatus(StrEnum):
    """What a line is in a line hierarchy (CII LineStatusReasonCode; UBL sub-lines are DETAIL)."""

    DETAIL = "DETAIL"  # an ordinary line, counted unless its parent stands for it
    GROUP = "GROUP"  # restates the sum of the lines below it
    INFORMATION = "INFORMATION"  # for information only: never counted


class FailureCode(StrEnum):
    MALFORMED = "MALFORMED"
    UNSUPPORTED_FORMAT = "UNSUPPORTED_FORMAT"
    NEEDS_OCR = "NEEDS_OCR"
    TOO_LARGE = "TOO_LARGE"
    UNSAFE_XML = "UNSAFE_XML"
    ENCRYPTED = "ENCRYPTED"
    EMPTY = "EMPTY"
    INTERNAL = "INTERNAL"
    # The raw object is in an archive storage class (GLACIER, DEEP_ARCHIVE): retried once restored.
    ARCHIVED = "ARCHIVED"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Bounds on free text: a field beyond them is a malformed document, not data to store.
SHORT_TEXT = 256
NAME_TEXT = 512
LONG_TEXT = 4096


class LineItem(_Model):
    lineNumber: int
    # The document's own line id and its parent's: a hierarchy (CII ParentLineID, UBL
    # SubInvoiceLine) as written, so the totals rules count each amount once.
    lineId: str | None = Field(default=None, max_length=SHORT_TEXT)
    parentLineId: str | None = Field(default=None, max_length=SHORT_TEXT)
    lineStatus: LineStatus | None = None
    description: str | None = Field(default=None, max_length=LONG_TEXT)
    quantity: Decimal | None = None
    unitPrice: Decimal | None = None
    amount: Decimal | None = None
    taxRate: Decimal | None = None


class Invoice(_Model):
    documentType: DocumentType = DocumentType.INVOICE
    # BT-3 as the document writes it (UNTDID 1001: 380 commercial invoice, 381 credit note, 384
    # corrected invoice, …); None where the reader cannot know it (Textract, OCR).
    typeCode: str | None = Field(default=None, max_length=SHORT_TEXT)
    # The specification the document declares (BT-24, e.g. urn:cen.eu:en16931:2017) and its
    # profile read from it (MINIMUM, BASIC-WL, BASIC, COMFORT, EN16931, EXTENDED, XRECHNUNG, …).
    specification: str | None = Field(default=None, max_length=SHORT_TEXT)
    profile: str | None = Field(default=None, max_length=SHORT_TEXT)
    invoiceNumber: str | None = Field(default=None, max_length=SHORT_TEXT)
    invoiceDate: date | None = None
    dueDate: date | None = None
    vendorName: str | None = Field(default=None, max_length=NAME_TEXT)
    vendorTaxId: str | None = Field(default=None, max_length=SHORT_TEXT)
    buyerName: str | None = Field(default=None, max_length=NAME_TEXT)
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    subtotal: Decimal | None = None
    allowanceTotal: Decimal | None = None
    chargeTotal: Decimal | None = None
    taxExclusiveAmount: Decimal | None = None  # EN 16931 BT-109, checked by BR-CO-13/15
    tax: Decimal | None = None
    totalAmount: Decimal | None = None
    prepaidAmount: Decimal | None = None
    amountDue: Decimal | None = None
    lineItems: list[LineItem] = Field(default_factory=list)
    confidence: dict[str, float] = Field(default_factory=dict)


class ValidationResult(_Model):
    status: Status
    reasons: list[str] = Field(default_factory=list)
    errorCode: FailureCode | None = None
    errorMessage: str | None = None

    @classmethod
    def failure(cls, code: FailureCode, message: str) -> ValidationResult:
        return cls(status=Status.FAILED, errorCode=code, errorMessage=message)


class ExtractionOutcome(_Model):
    """What the extraction library returns for one document: never an exception."""

    format: DocumentFormat
    engine: str
    raw: Any = None  # JSON-compatible raw extraction output, kept verbatim in result.json
    invoice: Invoice | None = None
    validation: ValidationResult

    @classmethod
    def failure(
        cls, code: FailureCode, message: str, fmt: DocumentFormat = DocumentFormat.UNKNOWN, engine: str = "none"
    ) -> ExtractionOutcome:
        """A document that could not be read: `engine` names who gave up on it."""
        return cls(format=fmt, engine=engine, validation=ValidationResult.failure(code, message))
