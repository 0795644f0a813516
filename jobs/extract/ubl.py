"""UBL 2.1 Invoice and CreditNote (Peppol BIS 3, XRechnung UBL) → Invoice.

Sub-lines (the XRechnung extension's cac:SubInvoiceLine / cac:SubCreditNoteLine, nested to any
depth) are flattened into the line list with their parent's id, so the totals rules count the
top-level lines and check each parent against the lines directly beneath it (BR-DEX-02).
"""

from __future__ import annotations

from decimal import Decimal

from lxml import etree

from jobs.contract.invoice import DocumentType, Invoice, LineItem
from jobs.extract.einvoice import Dialect, FieldReader, document_type, profile_of, settle_total, unit_price

INVOICE_NS = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
CREDIT_NOTE_NS = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
ROOT_TAGS = frozenset({f"{{{INVOICE_NS}}}Invoice", f"{{{CREDIT_NOTE_NS}}}CreditNote"})
NAMESPACES = {
    "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
}
_SELLER = "cac:AccountingSupplierParty/cac:Party"
_BUYER = "cac:AccountingCustomerParty/cac:Party"
_TOTALS = "cac:LegalMonetaryTotal"
_ALLOWANCE_CHARGE = "cac:AllowanceCharge[normalize-space(cbc:ChargeIndicator)='{}']"
_CAC = NAMESPACES["cac"]
# Nesting deeper than this is not an invoice structure but an attack on the reader's stack.
_MAX_SUB_LINE_DEPTH = 32
DIALECT = Dialect(NAMESPACES)


def read_ubl(root: etree._Element, tolerance: Decimal) -> tuple[Invoice, list[str]]:
    r = FieldReader(DIALECT)
    credit_note = str(root.tag).endswith("}CreditNote")
    type_code = r.text(root, "cbc:CreditNoteTypeCode" if credit_note else "cbc:InvoiceTypeCode")
    doc_type = DocumentType.CREDIT_NOTE if credit_note else document_type(type_code)
    currency = r.currency(root, "cbc:DocumentCurrencyCode")
    # BT-110 is the TaxTotal in the document currency; a second TaxTotal may carry BT-111.
    tax_path = f"cac:TaxTotal/cbc:TaxAmount[@currencyID='{currency}']" if currency else "cac:TaxTotal/cbc:TaxAmount"
    reasons: list[str] = []
    allowance_total = settle_total(
        r.decimal(root, f"{_TOTALS}/cbc:AllowanceTotalAmount", "allowanceTotal"),
        r.amounts(root, _ALLOWANCE_CHARGE.format("false"), "cbc:Amount", "allowanceTotal"),
        tolerance,
        reasons,
    )
    charge_total = settle_total(
        r.decimal(root, f"{_TOTALS}/cbc:ChargeTotalAmount", "chargeTotal"),
        r.amounts(root, _ALLOWANCE_CHARGE.format("true"), "cbc:Amount", "chargeTotal"),
        tolerance,
        reasons,
    )
    line_tag = "cac:CreditNoteLine" if credit_note else "cac:InvoiceLine"
    quantity_tag = "cbc:CreditedQuantity" if credit_note else "cbc:InvoicedQuantity"
    sub_tag = f"{{{_CAC}}}{'SubCreditNoteLine' if credit_note else 'SubInvoiceLine'}"
    lines: list[LineItem] = []
    for node in r.nodes(root, line_tag):
        _lines(r, node, quantity_tag, sub_tag, None, 0, lines)
    specification = r.text(root, "cbc:CustomizationID")
    invoice = Invoice(
        documentType=doc_type,
        typeCode=type_code,
        specification=specification,
        profile=profile_of(specification),
        invoiceNumber=r.text(root, "cbc:ID"),
        invoiceDate=r.date(root, "cbc:IssueDate", "invoiceDate"),
        # Invoice has cbc:DueDate; CreditNote carries it on PaymentMeans.
        dueDate=r.date(root, "cbc:DueDate | cac:PaymentMeans/cbc:PaymentDueDate", "dueDate"),
        # BT-27 is the legal registration name; the trading name (BT-28) is only a fallback.
        vendorName=r.text(root, f"{_SELLER}/cac:PartyLegalEntity/cbc:RegistrationName")
        or r.text(root, f"{_SELLER}/cac:PartyName/cbc:Name"),
        vendorTaxId=r.text(root, f"{_SELLER}/cac:PartyTaxScheme[cac:TaxScheme/cbc:ID='VAT']/cbc:CompanyID")
        or r.text(root, f"{_SELLER}/cac:PartyTaxScheme/cbc:CompanyID"),
        buyerName=r.text(root, f"{_BUYER}/cac:PartyLegalEntity/cbc:RegistrationName")
        or r.text(root, f"{_BUYER}/cac:PartyName/cbc:Name"),
        currency=currency,
        subtotal=r.decimal(root, f"{_TOTALS}/cbc:LineExtensionAmount", "subtotal"),
        allowanceTotal=allowance_total,
        chargeTotal=charge_total,
        taxExclusiveAmount=r.decimal(root, f"{_TOTALS}/cbc:TaxExclusiveAmount", "taxExclusiveAmount"),
        tax=r.decimal(root, tax_path, "tax"),
        totalAmount=r.decimal(root, f"{_TOTALS}/cbc:TaxInclusiveAmount", "totalAmount"),
        prepaidAmount=r.decimal(root, f"{_TOTALS}/cbc:PrepaidAmount", "prepaidAmount"),
        amountDue=r.decimal(root, f"{_TOTALS}/cbc:PayableAmount", "amountDue"),
        lineItems=lines,
    )
    return invoice, r.reasons + reasons


def _lines(
    r: FieldReader,
    node: etree._Element,
    quantity_tag: str,
    sub_tag: str,
    parent: str | None,
    depth: int,
    out: list[LineItem],
) -> None:
    """Append the line and, depth first, its sub-lines."""
    line_id = r.text(node, "cbc:ID")
    price = r.decimal(node, "cac:Price/cbc:PriceAmount", "lineItems.unitPrice")
    base_quantity = r.decimal(node, "cac:Price/cbc:BaseQuantity", "lineItems.unitPrice")
    position = len(out) + 1
    subs = list(node.iterchildren(sub_tag)) if depth < _MAX_SUB_LINE_DEPTH else []
    out.append(
        LineItem(
            lineNumber=int(line_id) if line_id and line_id.isdigit() and parent is None else position,
            lineId=line_id,
            parentLineId=parent,
            description=r.text(node, "cac:Item/cbc:Name") or r.text(node, "cac:Item/cbc:Description"),
            quantity=r.decimal(node, quantity_tag, "lineItems.quantity"),
            unitPrice=unit_price(price, base_quantity),
            amount=r.decimal(node, "cbc:LineExtensionAmount", "lineItems.amount"),
            taxRate=r.decimal(node, "cac:Item/cac:ClassifiedTaxCategory/cbc:Percent", "lineItems.taxRate"),
        )
    )
    for sub in subs:
        _lines(r, sub, quantity_tag, sub_tag, line_id, depth + 1, out)
