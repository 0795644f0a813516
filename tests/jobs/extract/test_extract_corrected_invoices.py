"""A corrected invoice (UNTDID 1001 code 384) or a credit note may total below zero; an invoice goes to review.

The documents are the corpus's EN16931_Einfach in UBL and CII turned into a correction of it: the
quantities delivered are taken back, so every line, the tax and the totals are negative (prices stay
positive, as BR-27 wants) and the sums still hold (BR-CO-10/13/15).
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from extract_helpers import EINVOICE

from jobs.contract.invoice import DocumentType, Invoice
from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, extract_document
from jobs.extract.validate import validate

_NEGATED = {
    "ubl": (
        "InvoiceTypeCode",
        r"(<cbc:(?:InvoicedQuantity|LineExtensionAmount|TaxExclusiveAmount|TaxInclusiveAmount|PayableAmount"
        r"|TaxAmount|TaxableAmount)\b[^>]*>)(?=[0-9])",
    ),
    "cii": (
        "TypeCode",
        r"(<ram:(?:BilledQuantity|LineTotalAmount|TaxBasisTotalAmount|TaxTotalAmount|GrandTotalAmount"
        r"|DuePayableAmount|BasisAmount|CalculatedAmount)\b[^>]*>)(?=[0-9])",
    ),
}


def _correction(folder: str, type_code: str) -> bytes:
    """EN16931_Einfach as a document of `type_code` taking back everything it invoiced."""
    tag, amounts = _NEGATED[folder]
    text = (EINVOICE / folder / f"EN16931_Einfach.{folder}.xml").read_text(encoding="utf-8")
    prefix = "cbc" if folder == "ubl" else "ram"
    assert f"<{prefix}:{tag}>380<" in text
    typed = text.replace(f"<{prefix}:{tag}>380<", f"<{prefix}:{tag}>{type_code}<", 1)
    return re.sub(amounts, r"\1-", typed).encode()


@pytest.mark.parametrize("folder", ["ubl", "cii"])
def test_a_corrected_invoice_with_a_negative_total_is_processed(corpus: Path, folder: str) -> None:
    outcome = extract_document(_correction(folder, "384"), f"korrektur.{folder}.xml")
    invoice = outcome.invoice
    assert invoice is not None
    assert invoice.totalAmount == Decimal("-529.87") and invoice.tax == Decimal("-56.87")
    assert invoice.documentType is DocumentType.INVOICE and invoice.typeCode == "384"
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons


@pytest.mark.parametrize("folder", ["ubl", "cii"])
def test_a_commercial_invoice_with_a_negative_total_goes_to_review(corpus: Path, folder: str) -> None:
    outcome = extract_document(_correction(folder, "380"), f"rechnung.{folder}.xml")
    assert outcome.invoice is not None and outcome.invoice.typeCode == "380"
    assert outcome.validation.reasons == ["NEGATIVE_TOTAL"]


def test_a_credit_note_coded_381_with_a_negative_total_is_processed(corpus: Path) -> None:
    outcome = extract_document(_correction("cii", "381"), "gutschrift.xml")
    assert outcome.invoice is not None and outcome.invoice.documentType is DocumentType.CREDIT_NOTE
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons


@pytest.mark.parametrize(
    ("document_type", "type_code", "reasons"),
    [
        (DocumentType.INVOICE, "384", []),  # a corrected invoice: correcting downwards is what it is for
        (DocumentType.CREDIT_NOTE, "381", []),
        (DocumentType.CREDIT_NOTE, None, []),
        (DocumentType.INVOICE, "380", ["NEGATIVE_TOTAL"]),
        (DocumentType.INVOICE, None, ["NEGATIVE_TOTAL"]),  # a scan or a Textract reading: no type code
    ],
)
def test_which_documents_may_total_below_zero(
    document_type: DocumentType, type_code: str | None, reasons: list[str]
) -> None:
    invoice = Invoice(
        documentType=document_type,
        typeCode=type_code,
        invoiceNumber="K-1",
        invoiceDate=date(2026, 5, 12),
        vendorName="Lieferant GmbH",
        currency="EUR",
        totalAmount=Decimal("-10.00"),
    )
    assert validate(invoice, [], ExtractionSettings()).reasons == reasons
