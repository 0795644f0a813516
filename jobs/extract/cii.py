"""UN/CEFACT Cross Industry Invoice (Factur-X, ZUGFeRD 2.x, XRechnung CII) → Invoice."""

from __future__ import annotations

from decimal import Decimal

from lxml import etree

from jobs.contract.invoice import Invoice, LineItem
from jobs.extract.einvoice import Dialect, FieldReader, document_type, settle_total, unit_price

RSM_NS = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
ROOT_TAGS = frozenset({f"{{{RSM_NS}}}CrossIndustryInvoice"})
NAMESPACES = {
    "rsm": RSM_NS,
    "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
    "udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
}
_DOC = "rsm:ExchangedDocument"
_TX = "rsm:SupplyChainTradeTransaction"
_AGREEMENT = f"{_TX}/ram:ApplicableHeaderTradeAgreement"
_SETTLEMENT = f"{_TX}/ram:ApplicableHeaderTradeSettlement"
_SUMS = f"{_SETTLEMENT}/ram:SpecifiedTradeSettlementHeaderMonetarySummation"
_SELLER = f"{_AGREEMENT}/ram:SellerTradeParty"
_ALLOWANCE_CHARGE = (
    f"{_SETTLEMENT}/ram:SpecifiedTradeAllowanceCharge[normalize-space(ram:ChargeIndicator/udt:Indicator)='{{}}']"
)


DIALECT = Dialect(NAMESPACES)


def read_cii(root: etree._Element, tolerance: Decimal) -> tuple[Invoice, list[str]]:
    r = FieldReader(DIALECT)
    currency = r.currency(root, f"{_SETTLEMENT}/ram:InvoiceCurrencyCode")
    # BT-110 carries the invoice currency; BT-111 (tax currency) is a second TaxTotalAmount.
    tax_path = (
        f"{_SUMS}/ram:TaxTotalAmount[@currencyID='{currency}' or not(@currencyID)]" if currency
        else f"{_SUMS}/ram:TaxTotalAmount"
    )
    reasons: list[str] = []
    allowance_total = settle_total(
        r.decimal(root, f"{_SUMS}/ram:AllowanceTotalAmount", "allowanceTotal"),
        r.amounts(root, _ALLOWANCE_CHARGE.format("false"), "ram:ActualAmount", "allowanceTotal"),
        tolerance, reasons,
    )
    charge_total = settle_total(
        r.decimal(root, f"{_SUMS}/ram:ChargeTotalAmount", "chargeTotal"),
        r.amounts(root, _ALLOWANCE_CHARGE.format("true"), "ram:ActualAmount", "chargeTotal"),
        tolerance, reasons,
    )
    invoice = Invoice(
        documentType=document_type(r.text(root, f"{_DOC}/ram:TypeCode")),
        invoiceNumber=r.text(root, f"{_DOC}/ram:ID"),
        invoiceDate=r.date(root, f"{_DOC}/ram:IssueDateTime/udt:DateTimeString", "invoiceDate"),
        dueDate=r.date(
            root, f"{_SETTLEMENT}/ram:SpecifiedTradePaymentTerms/ram:DueDateDateTime/udt:DateTimeString", "dueDate"
        ),
        vendorName=r.text(root, f"{_SELLER}/ram:Name"),
        vendorTaxId=r.text(root, f"{_SELLER}/ram:SpecifiedTaxRegistration/ram:ID[@schemeID='VA']")
        or r.text(root, f"{_SELLER}/ram:SpecifiedTaxRegistration/ram:ID"),
        buyerName=r.text(root, f"{_AGREEMENT}/ram:BuyerTradeParty/ram:Name"),
        currency=currency,
        subtotal=r.decimal(root, f"{_SUMS}/ram:LineTotalAmount", "subtotal"),
        allowanceTotal=allowance_total,
        chargeTotal=charge_total,
        taxExclusiveAmount=r.decimal(root, f"{_SUMS}/ram:TaxBasisTotalAmount", "taxExclusiveAmount"),
        tax=r.decimal(root, tax_path, "tax"),
        totalAmount=r.decimal(root, f"{_SUMS}/ram:GrandTotalAmount", "totalAmount"),
        prepaidAmount=r.decimal(root, f"{_SUMS}/ram:TotalPrepaidAmount", "prepaidAmount"),
        amountDue=r.decimal(root, f"{_SUMS}/ram:DuePayableAmount", "amountDue"),
        lineItems=[
            _line(r, node, position)
            for position, node in enumerate(r.nodes(root, f"{_TX}/ram:IncludedSupplyChainTradeLineItem"), 1)
        ],
    )
    return invoice, r.reasons + reasons


def _line(r: FieldReader, node: etree._Element, position: int) -> LineItem:
    line_id = r.text(node, "ram:AssociatedDocumentLineDocument/ram:LineID")
    net = "ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice"
    price = r.decimal(node, f"{net}/ram:ChargeAmount", "lineItems.unitPrice")
    base_quantity = r.decimal(node, f"{net}/ram:BasisQuantity", "lineItems.unitPrice")
    settlement = "ram:SpecifiedLineTradeSettlement"
    return LineItem(
        lineNumber=int(line_id) if line_id and line_id.isdigit() else position,
        description=r.text(node, "ram:SpecifiedTradeProduct/ram:Name")
        or r.text(node, "ram:SpecifiedTradeProduct/ram:Description"),
        quantity=r.decimal(node, "ram:SpecifiedLineTradeDelivery/ram:BilledQuantity", "lineItems.quantity"),
        unitPrice=unit_price(price, base_quantity),
        amount=r.decimal(
            node, f"{settlement}/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount",
            "lineItems.amount",
        ),
        taxRate=r.decimal(node, f"{settlement}/ram:ApplicableTradeTax/ram:RateApplicablePercent", "lineItems.taxRate"),
    )
