"""UN/CEFACT Cross Industry invoices → Invoice, in both generations.

CrossIndustryInvoice D16B (Factur-X, ZUGFeRD 2.x, XRechnung CII) and its predecessor
CrossIndustryDocument (ZUGFeRD 1.0, profiles BASIC / COMFORT / EXTENDED) carry the same business
terms under different element names and namespaces; one `CiiSyntax` per generation names them,
and one reader reads both. Line hierarchies (ParentLineID, LineStatusReasonCode GROUP / DETAIL /
INFORMATION, D16B EXTENDED) are kept on the lines for the totals rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from lxml import etree

from jobs.contract.invoice import DocumentFormat, Invoice, LineItem, LineStatus
from jobs.extract.einvoice import Dialect, FieldReader, document_type, profile_of, settle_total, unit_price

_LINE_STATUSES = {status.value: status for status in LineStatus}


@dataclass(frozen=True)
class CiiSyntax:
    """The element names one CII generation gives the business terms this reader needs."""

    format: DocumentFormat
    engine: str
    root: str  # the root element, Clark notation
    namespaces: dict[str, str]
    context: str
    document: str
    transaction: str
    agreement: str
    settlement: str
    sums: str
    line_agreement: str
    line_delivery: str
    line_settlement: str
    line_sums: str
    line_rate: str
    dialect: Dialect = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dialect", Dialect(self.namespaces))


D16B = CiiSyntax(
    format=DocumentFormat.CII,
    engine="cii",
    root="{urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100}CrossIndustryInvoice",
    namespaces={
        "rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
        "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
        "udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
    },
    context="rsm:ExchangedDocumentContext",
    document="rsm:ExchangedDocument",
    transaction="rsm:SupplyChainTradeTransaction",
    agreement="ram:ApplicableHeaderTradeAgreement",
    settlement="ram:ApplicableHeaderTradeSettlement",
    sums="ram:SpecifiedTradeSettlementHeaderMonetarySummation",
    line_agreement="ram:SpecifiedLineTradeAgreement",
    line_delivery="ram:SpecifiedLineTradeDelivery",
    line_settlement="ram:SpecifiedLineTradeSettlement",
    line_sums="ram:SpecifiedTradeSettlementLineMonetarySummation",
    line_rate="ram:RateApplicablePercent",
)
ZUGFERD1 = CiiSyntax(
    format=DocumentFormat.ZUGFERD1,
    engine="zugferd1",
    root="{urn:ferd:CrossIndustryDocument:invoice:1p0}CrossIndustryDocument",
    namespaces={
        "rsm": "urn:ferd:CrossIndustryDocument:invoice:1p0",
        "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12",
        "udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15",
    },
    context="rsm:SpecifiedExchangedDocumentContext",
    document="rsm:HeaderExchangedDocument",
    transaction="rsm:SpecifiedSupplyChainTradeTransaction",
    agreement="ram:ApplicableSupplyChainTradeAgreement",
    settlement="ram:ApplicableSupplyChainTradeSettlement",
    sums="ram:SpecifiedTradeSettlementMonetarySummation",
    line_agreement="ram:SpecifiedSupplyChainTradeAgreement",
    line_delivery="ram:SpecifiedSupplyChainTradeDelivery",
    line_settlement="ram:SpecifiedSupplyChainTradeSettlement",
    line_sums="ram:SpecifiedTradeSettlementMonetarySummation",
    line_rate="ram:ApplicablePercent",
)
SYNTAXES = {syntax.root: syntax for syntax in (D16B, ZUGFERD1)}


def read_cii(root: etree._Element, tolerance: Decimal, syntax: CiiSyntax = D16B) -> tuple[Invoice, list[str]]:
    r = FieldReader(syntax.dialect)
    doc, tx = syntax.document, syntax.transaction
    agreement, settlement = f"{tx}/{syntax.agreement}", f"{tx}/{syntax.settlement}"
    sums, seller = f"{settlement}/{syntax.sums}", f"{agreement}/ram:SellerTradeParty"
    allowance_charge = (
        f"{settlement}/ram:SpecifiedTradeAllowanceCharge[normalize-space(ram:ChargeIndicator/udt:Indicator)='{{}}']"
    )
    currency = r.currency(root, f"{settlement}/ram:InvoiceCurrencyCode")
    # BT-110 carries the invoice currency; BT-111 (tax currency) is a second TaxTotalAmount.
    tax_path = (
        f"{sums}/ram:TaxTotalAmount[@currencyID='{currency}' or not(@currencyID)]" if currency
        else f"{sums}/ram:TaxTotalAmount"
    )
    reasons: list[str] = []
    allowance_total = settle_total(
        r.decimal(root, f"{sums}/ram:AllowanceTotalAmount", "allowanceTotal"),
        r.amounts(root, allowance_charge.format("false"), "ram:ActualAmount", "allowanceTotal"),
        tolerance, reasons,
    )
    charge_total = settle_total(
        r.decimal(root, f"{sums}/ram:ChargeTotalAmount", "chargeTotal"),
        r.amounts(root, allowance_charge.format("true"), "ram:ActualAmount", "chargeTotal"),
        tolerance, reasons,
    )
    specification = r.text(root, f"{syntax.context}/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID")
    invoice = Invoice(
        documentType=document_type(r.text(root, f"{doc}/ram:TypeCode")),
        specification=specification,
        profile=profile_of(specification),
        invoiceNumber=r.text(root, f"{doc}/ram:ID"),
        invoiceDate=r.date(root, f"{doc}/ram:IssueDateTime/udt:DateTimeString", "invoiceDate"),
        dueDate=r.date(
            root, f"{settlement}/ram:SpecifiedTradePaymentTerms/ram:DueDateDateTime/udt:DateTimeString", "dueDate"
        ),
        vendorName=r.text(root, f"{seller}/ram:Name"),
        vendorTaxId=r.text(root, f"{seller}/ram:SpecifiedTaxRegistration/ram:ID[@schemeID='VA']")
        or r.text(root, f"{seller}/ram:SpecifiedTaxRegistration/ram:ID"),
        buyerName=r.text(root, f"{agreement}/ram:BuyerTradeParty/ram:Name"),
        currency=currency,
        subtotal=r.decimal(root, f"{sums}/ram:LineTotalAmount", "subtotal"),
        allowanceTotal=allowance_total,
        chargeTotal=charge_total,
        taxExclusiveAmount=r.decimal(root, f"{sums}/ram:TaxBasisTotalAmount", "taxExclusiveAmount"),
        tax=r.decimal(root, tax_path, "tax"),
        totalAmount=r.decimal(root, f"{sums}/ram:GrandTotalAmount", "totalAmount"),
        prepaidAmount=r.decimal(root, f"{sums}/ram:TotalPrepaidAmount", "prepaidAmount"),
        amountDue=r.decimal(root, f"{sums}/ram:DuePayableAmount", "amountDue"),
        lineItems=[
            _line(r, syntax, node, position)
            for position, node in enumerate(r.nodes(root, f"{tx}/ram:IncludedSupplyChainTradeLineItem"), 1)
        ],
    )
    return invoice, r.reasons + reasons


def _line(r: FieldReader, syntax: CiiSyntax, node: etree._Element, position: int) -> LineItem:
    line_id = r.text(node, "ram:AssociatedDocumentLineDocument/ram:LineID")
    # Only EXTENDED lines carry more than their LineID here: skip two lookups on all others.
    document = node.find("ram:AssociatedDocumentLineDocument", syntax.namespaces)
    hierarchy = document is not None and len(document) > 1
    status = r.text(node, "ram:AssociatedDocumentLineDocument/ram:LineStatusReasonCode") if hierarchy else None
    net = f"{syntax.line_agreement}/ram:NetPriceProductTradePrice"
    price = r.decimal(node, f"{net}/ram:ChargeAmount", "lineItems.unitPrice")
    base_quantity = r.decimal(node, f"{net}/ram:BasisQuantity", "lineItems.unitPrice")
    settlement = syntax.line_settlement
    return LineItem(
        lineNumber=int(line_id) if line_id and line_id.isdigit() else position,
        lineId=line_id,
        parentLineId=r.text(node, "ram:AssociatedDocumentLineDocument/ram:ParentLineID") if hierarchy else None,
        lineStatus=_LINE_STATUSES.get(status.upper()) if status else None,
        description=r.text(node, "ram:SpecifiedTradeProduct/ram:Name")
        or r.text(node, "ram:SpecifiedTradeProduct/ram:Description"),
        quantity=r.decimal(node, f"{syntax.line_delivery}/ram:BilledQuantity", "lineItems.quantity"),
        unitPrice=unit_price(price, base_quantity),
        amount=r.decimal(node, f"{settlement}/{syntax.line_sums}/ram:LineTotalAmount", "lineItems.amount"),
        taxRate=r.decimal(node, f"{settlement}/ram:ApplicableTradeTax/{syntax.line_rate}", "lineItems.taxRate"),
    )
