"""What an extractor hands back before validation, and the typed rejection of a bad document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobs.contract.invoice import DocumentFormat, FailureCode, Invoice
from jobs.errors import DocuFlowError


class DocumentRejectedError(DocuFlowError):
    """The document cannot be read at all; becomes a FAILED outcome, never escapes extract_document."""

    def __init__(
        self, code: FailureCode, message: str, document_format: DocumentFormat = DocumentFormat.UNKNOWN
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.format = document_format


class UnusableAttachmentError(DocumentRejectedError):
    """A PDF's embedded invoice XML cannot be used (broken XML, a standard we do not read): the
    page content may still be, so extract_document falls back to it and records this reason.
    """

    def __init__(self, attachment: str, cause: DocumentRejectedError, document_format: DocumentFormat) -> None:
        super().__init__(cause.code, f"embedded {attachment}: {cause.message}", document_format)
        self.attachment = attachment

    def record(self) -> dict[str, str | bool]:
        """What result.json keeps about the attachment that was not used."""
        return {"attachment": self.attachment, "used": False, "failureCode": str(self.code), "reason": self.message}


@dataclass(slots=True)
class Extraction:
    """An invoice read from one document plus what the reader itself noticed (conflicts, ambiguity)."""

    format: DocumentFormat
    engine: str
    raw: Any
    invoice: Invoice
    reasons: list[str] = field(default_factory=list)
