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
from jobs.extract.einvoice import (
    Dialect,
    FieldReader,
    FieldSet,
    document_type,
    profile_of,
    settle_total,
    unit_price,
)

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
    header_fields: FieldSet = field(init=False, repr=False, compare=False)
    line_fields: FieldSet = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dialect", Dialect(self.namespaces))
        object.__setattr__(self, "header_fields", FieldSet(self.dialect, self._header_paths()))
        object.__setattr__(self, "line_fields", FieldSet(self.dialect, self._line_paths()))

    @property
    def header_settlement(self) -> str:
        return f"{self.transaction}/{self.settlement}"

    @property
    def header_sums(self) -> str:
        return f"{self.header_settlement}/{self.sums}"

    @property
    def seller(self) -> str:
        return f"{self.transaction}/{self.agreement}/ram:SellerTradeParty"

    def _header_paths(self) -> dict[str, str]:
        """The document's fields read without a predicate (those with one are read by read_cii)."""
        doc, settlement, sums = self.document, self.header_settlement, self.header_sums
        return {
            "currency": f"{settlement}/ram:InvoiceCurrencyCode",
            "allowanceTotal": f"{sums}/ram:AllowanceTotalAmount",
            "chargeTotal": f"{sums}/ram:ChargeTotalAmount",
            "specification": f"{self.context}/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID",
            "typeCode": f"{doc}/ram:TypeCode",
            "invoiceNumber": f"{doc}/ram:ID",
            "invoiceDate": f"{doc}/ram:IssueDateTime/udt:DateTimeString",
            "dueDate": f"{settlement}/ram:SpecifiedTradePaymentTerms/ram:DueDateDateTime/udt:DateTimeString",
            "vendorName": f"{self.seller}/ram:Name",
            "vendorTaxId": f"{self.seller}/ram:SpecifiedTaxRegistration/ram:ID",  # when none has schemeID VA
            "buyerName": f"{self.transaction}/{self.agreement}/ram:BuyerTradeParty/ram:Name",
            "subtotal": f"{sums}/ram:LineTotalAmount",
            "taxExclusiveAmount": f"{sums}/ram:TaxBasisTotalAmount",
            "totalAmount": f"{sums}/ram:GrandTotalAmount",
            "prepaidAmount": f"{sums}/ram:TotalPrepaidAmount",
            "amountDue": f"{sums}/ram:DuePayableAmount",
        }

    def _line_paths(self) -> dict[str, str]:
        document, net = "ram:AssociatedDocumentLineDocument", f"{self.line_agreement}/ram:NetPriceProductTradePrice"
        return {
            "lineId": f"{document}/ram:LineID",
            "parentLineId": f"{document}/ram:ParentLineID",
            "status": f"{document}/ram:LineStatusReasonCode",
            "price": f"{net}/ram:ChargeAmount",
            "baseQuantity": f"{net}/ram:BasisQuantity",
            "name": "ram:SpecifiedTradeProduct/ram:Name",
            "description": "ram:SpecifiedTradeProduct/ram:Description",
            "quantity": f"{self.line_delivery}/ram:BilledQuantity",
            "amount": f"{self.line_settlement}/{self.line_sums}/ram:LineTotalAmount",
            "taxRate": f"{self.line_settlement}/ram:ApplicableTradeTax/{self.line_rate}",
        }


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
    found = r.fields(root, syntax.header_fields)
    settlement, sums = syntax.header_settlement, syntax.header_sums
    allowance_charge = (
        f"{settlement}/ram:SpecifiedTradeAllowanceCharge[normalize-space(ram:ChargeIndicator/udt:Indicator)='{{}}']"
    )
    # Converted in the order the fields were read one by one, so the reasons keep their order.
    currency = r.to_currency(found.get("currency"))
    # BT-110 carries the invoice currency; BT-111 (tax currency) is a second TaxTotalAmount.
    tax_path = (
        f"{sums}/ram:TaxTotalAmount[@currencyID='{currency}' or not(@currencyID)]"
        if currency
        else f"{sums}/ram:TaxTotalAmount"
    )
    reasons: list[str] = []
    allowance_total = settle_total(
        r.to_decimal(found.get("allowanceTotal"), "allowanceTotal"),
        r.amounts(root, allowance_charge.format("false"), "ram:ActualAmount", "allowanceTotal"),
        tolerance,
        reasons,
    )
    charge_total = settle_total(
        r.to_decimal(found.get("chargeTotal"), "chargeTotal"),
        r.amounts(root, allowance_charge.format("true"), "ram:ActualAmount", "chargeTotal"),
        tolerance,
        reasons,
    )
    specification = found.get("specification")
    invoice = Invoice(
        documentType=document_type(found.get("typeCode")),
        typeCode=found.get("typeCode"),
        specification=specification,
        profile=profile_of(specification),
        invoiceNumber=found.get("invoiceNumber"),
        invoiceDate=r.to_date(found.get("invoiceDate"), "invoiceDate"),
        dueDate=r.to_date(found.get("dueDate"), "dueDate"),
        vendorName=found.get("vendorName"),
        vendorTaxId=r.text(root, f"{syntax.seller}/ram:SpecifiedTaxRegistration/ram:ID[@schemeID='VA']")
        or found.get("vendorTaxId"),
        buyerName=found.get("buyerName"),
        currency=currency,
        subtotal=r.to_decimal(found.get("subtotal"), "subtotal"),
        allowanceTotal=allowance_total,
        chargeTotal=charge_total,
        taxExclusiveAmount=r.to_decimal(found.get("taxExclusiveAmount"), "taxExclusiveAmount"),
        tax=r.decimal(root, tax_path, "tax"),
        totalAmount=r.to_decimal(found.get("totalAmount"), "totalAmount"),
        prepaidAmount=r.to_decimal(found.get("prepaidAmount"), "prepaidAmount"),
        amountDue=r.to_decimal(found.get("amountDue"), "amountDue"),
        lineItems=[
            _line(r, syntax, node, position)
            for position, node in enumerate(
                r.nodes(root, f"{syntax.transaction}/ram:IncludedSupplyChainTradeLineItem"), 1
            )
        ],
    )
    return invoice, r.reasons + reasons


def _line(r: FieldReader, syntax: CiiSyntax, node: etree._Element, position: int) -> LineItem:
    found = r.fields(node, syntax.line_fields)
    line_id = found.get("lineId")
    parent_id, status = found.get("parentLineId"), found.get("status")
    if (parent_id or status) and not _carries_hierarchy(syntax, node):
        parent_id = status = None
    # Converted in the order the fields are listed, so INVALID_VALUE reasons keep their order.
    price = r.to_decimal(found.get("price"), "lineItems.unitPrice")
    base_quantity = r.to_decimal(found.get("baseQuantity"), "lineItems.unitPrice")
    return LineItem(
        lineNumber=int(line_id) if line_id and line_id.isdigit() else position,
        lineId=line_id,
        parentLineId=parent_id,
        lineStatus=_LINE_STATUSES.get(status.upper()) if status else None,
        description=found.get("name") or found.get("description"),
        quantity=r.to_decimal(found.get("quantity"), "lineItems.quantity"),
        unitPrice=unit_price(price, base_quantity),
        amount=r.to_decimal(found.get("amount"), "lineItems.amount"),
        taxRate=r.to_decimal(found.get("taxRate"), "lineItems.taxRate"),
    )


def _carries_hierarchy(syntax: CiiSyntax, node: etree._Element) -> bool:
    """Whether the line's (first) AssociatedDocumentLineDocument holds more than its LineID: only
    then are its ParentLineID and LineStatusReasonCode read, as since line hierarchies came in.
    """
    document = node.find("ram:AssociatedDocumentLineDocument", syntax.namespaces)
    return document is not None and len(document) > 1
