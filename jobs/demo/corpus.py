"""A deterministic, realistic invoice corpus for demos, tests and benchmarks (pure, no I/O).

Every supported format (UBL, CII, Factur-X PDF, Textract AnalyzeExpense JSON, normalized JSON,
plain text-layer PDFs and scans, the last two rarer as they cost OCR time), arithmetically
consistent by default; a share of review cases (totals that do not add up, a
missing seller) and of bad files (truncated XML, binary junk, empty files, unsafe XML, a PDF
without an e-invoice). The same seed always yields the same bytes.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from xml.sax.saxutils import escape

CENT = Decimal("0.01")
VENDORS = (
    "Lieferant GmbH",
    "Nordwind Logistik AG",
    "Atelier Lumière SARL",
    "Acme Office Supplies Ltd.",
    "Bäckerei Müller & Söhne",
    "Global Parts Inc.",
    "Studio Verde S.r.l.",
    "Kowalski Sp. z o.o.",
)
BUYERS = ("Kunden AG", "Contoso Ltd.", "Fabrikam GmbH", "Northwind Traders")
ITEMS = (
    "Consulting hours",
    "Printer paper A4",
    "Freight Hamburg–Lyon",
    "Software licence",
    "Espresso beans 1 kg",
    "Safety boots",
    "Server rack rental",
    "Translation DE→FR",
)
GOOD_FORMATS = ("ubl", "cii", "facturx", "textract", "normalized")
OCR_FORMATS = ("text-pdf", "scan")  # cost OCR time: opt-in share via `ocr_ratio`
BAD_KINDS = ("truncated", "junk", "empty", "xxe", "plain-pdf")


@dataclass(frozen=True)
class Line:
    description: str
    quantity: Decimal
    unit_price: Decimal
    rate: Decimal

    @property
    def amount(self) -> Decimal:
        return (self.quantity * self.unit_price).quantize(CENT, ROUND_HALF_UP)


@dataclass(frozen=True)
class DemoInvoice:
    number: str
    issued: date
    due: date
    vendor: str | None
    buyer: str
    currency: str
    lines: tuple[Line, ...]
    total_skew: Decimal = Decimal("0")  # non-zero: a review case whose totals do not add up

    @property
    def net(self) -> Decimal:
        return sum((line.amount for line in self.lines), Decimal("0"))

    @property
    def tax(self) -> Decimal:
        return sum(((line.amount * line.rate / 100).quantize(CENT, ROUND_HALF_UP) for line in self.lines), Decimal("0"))

    @property
    def total(self) -> Decimal:
        return self.net + self.tax + self.total_skew


@dataclass(frozen=True)
class DemoDocument:
    user_id: str
    document_id: str
    filename: str
    body: bytes
    kind: str  # a good format name, or a bad kind
    review: bool = False


def _invoice(rng: random.Random, number: int, review: bool) -> DemoInvoice:
    issued = date(2026, 1, 1) + timedelta(days=rng.randrange(0, 330))
    lines = tuple(
        Line(
            rng.choice(ITEMS),
            Decimal(rng.randrange(1, 40)),
            Decimal(rng.randrange(150, 90000)) / 100,
            Decimal(rng.choice((19, 7, 20, 0))),
        )
        for _ in range(rng.randrange(1, 6))
    )
    missing_vendor = review and rng.random() < 0.5
    return DemoInvoice(
        number=f"INV-{2026}-{number:06d}",
        issued=issued,
        due=issued + timedelta(days=30),
        vendor=None if missing_vendor else rng.choice(VENDORS),
        buyer=rng.choice(BUYERS),
        currency=rng.choice(("EUR", "EUR", "EUR", "USD", "GBP")),
        lines=lines,
        total_skew=Decimal("10.00") if review and not missing_vendor else Decimal("0"),
    )


def ubl(inv: DemoInvoice) -> bytes:
    c = inv.currency
    seller = (
        f"<cac:AccountingSupplierParty><cac:Party><cac:PartyLegalEntity><cbc:RegistrationName>{escape(inv.vendor)}"
        "</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:AccountingSupplierParty>"
        if inv.vendor
        else "<cac:AccountingSupplierParty><cac:Party/></cac:AccountingSupplierParty>"
    )
    lines = "".join(
        f"<cac:InvoiceLine><cbc:ID>{i}</cbc:ID><cbc:InvoicedQuantity "
        f'unitCode="C62">{line.quantity}</cbc:InvoicedQuantity>'
        f'<cbc:LineExtensionAmount currencyID="{c}">{line.amount}</cbc:LineExtensionAmount>'
        f"<cac:Item><cbc:Name>{escape(line.description)}</cbc:Name><cac:ClassifiedTaxCategory><cbc:ID>S</cbc:ID>"
        f"<cbc:Percent>{line.rate}</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID>"
        "</cac:TaxScheme></cac:ClassifiedTaxCategory></cac:Item>"
        f'<cac:Price><cbc:PriceAmount currencyID="{c}">{line.unit_price}</cbc:PriceAmount>'
        "</cac:Price></cac:InvoiceLine>"
        for i, line in enumerate(inv.lines, 1)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" '
        'xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" '
        'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">'
        "<cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>"
        f"<cbc:ID>{inv.number}</cbc:ID><cbc:IssueDate>{inv.issued}</cbc:IssueDate><cbc:DueDate>{inv.due}</cbc:DueDate>"
        f"<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode><cbc:DocumentCurrencyCode>{c}</cbc:DocumentCurrencyCode>"
        f"{seller}<cac:AccountingCustomerParty><cac:Party>"
        f"<cac:PartyLegalEntity><cbc:RegistrationName>{escape(inv.buyer)}"
        "</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:AccountingCustomerParty>"
        f'<cac:TaxTotal><cbc:TaxAmount currencyID="{c}">{inv.tax}</cbc:TaxAmount></cac:TaxTotal>'
        f'<cac:LegalMonetaryTotal><cbc:LineExtensionAmount currencyID="{c}">{inv.net}</cbc:LineExtensionAmount>'
        f'<cbc:TaxExclusiveAmount currencyID="{c}">{inv.net}</cbc:TaxExclusiveAmount>'
        f'<cbc:TaxInclusiveAmount currencyID="{c}">{inv.total}</cbc:TaxInclusiveAmount>'
        f'<cbc:PayableAmount currencyID="{c}">{inv.total}</cbc:PayableAmount></cac:LegalMonetaryTotal>'
        f"{lines}</Invoice>"
    ).encode()


def cii(inv: DemoInvoice) -> bytes:
    c = inv.currency
    lines = "".join(
        "<ram:IncludedSupplyChainTradeLineItem>"
        f"<ram:AssociatedDocumentLineDocument><ram:LineID>{i}</ram:LineID></ram:AssociatedDocumentLineDocument>"
        f"<ram:SpecifiedTradeProduct><ram:Name>{escape(line.description)}</ram:Name></ram:SpecifiedTradeProduct>"
        "<ram:SpecifiedLineTradeAgreement><ram:NetPriceProductTradePrice>"
        f"<ram:ChargeAmount>{line.unit_price}</ram:ChargeAmount>"
        "</ram:NetPriceProductTradePrice></ram:SpecifiedLineTradeAgreement>"
        "<ram:SpecifiedLineTradeDelivery><ram:BilledQuantity "
        f'unitCode="C62">{line.quantity}</ram:BilledQuantity></ram:SpecifiedLineTradeDelivery>'
        "<ram:SpecifiedLineTradeSettlement><ram:ApplicableTradeTax>"
        "<ram:TypeCode>VAT</ram:TypeCode><ram:CategoryCode>S</ram:CategoryCode>"
        f"<ram:RateApplicablePercent>{line.rate}</ram:RateApplicablePercent></ram:ApplicableTradeTax>"
        f"<ram:SpecifiedTradeSettlementLineMonetarySummation><ram:LineTotalAmount>{line.amount}</ram:LineTotalAmount>"
        "</ram:SpecifiedTradeSettlementLineMonetarySummation></ram:SpecifiedLineTradeSettlement>"
        "</ram:IncludedSupplyChainTradeLineItem>"
        for i, line in enumerate(inv.lines, 1)
    )
    seller = (
        f"<ram:SellerTradeParty><ram:Name>{escape(inv.vendor)}</ram:Name></ram:SellerTradeParty>"
        if inv.vendor
        else "<ram:SellerTradeParty/>"
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" '
        'xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" '
        'xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">'
        "<rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter>"
        "<ram:ID>urn:cen.eu:en16931:2017</ram:ID>"
        "</ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>"
        f"<rsm:ExchangedDocument><ram:ID>{inv.number}</ram:ID><ram:TypeCode>380</ram:TypeCode>"
        f'<ram:IssueDateTime><udt:DateTimeString format="102">{inv.issued:%Y%m%d}</udt:DateTimeString>'
        "</ram:IssueDateTime></rsm:ExchangedDocument>"
        f"<rsm:SupplyChainTradeTransaction>{lines}"
        f"<ram:ApplicableHeaderTradeAgreement>{seller}<ram:BuyerTradeParty>"
        f"<ram:Name>{escape(inv.buyer)}</ram:Name></ram:BuyerTradeParty>"
        "</ram:ApplicableHeaderTradeAgreement><ram:ApplicableHeaderTradeDelivery/>"
        f"<ram:ApplicableHeaderTradeSettlement><ram:InvoiceCurrencyCode>{c}</ram:InvoiceCurrencyCode>"
        "<ram:SpecifiedTradePaymentTerms><ram:DueDateDateTime>"
        f'<udt:DateTimeString format="102">{inv.due:%Y%m%d}</udt:DateTimeString>'
        "</ram:DueDateDateTime></ram:SpecifiedTradePaymentTerms>"
        f"<ram:SpecifiedTradeSettlementHeaderMonetarySummation><ram:LineTotalAmount>{inv.net}</ram:LineTotalAmount>"
        f"<ram:TaxBasisTotalAmount>{inv.net}</ram:TaxBasisTotalAmount>"
        f'<ram:TaxTotalAmount currencyID="{c}">{inv.tax}</ram:TaxTotalAmount>'
        f"<ram:GrandTotalAmount>{inv.total}</ram:GrandTotalAmount>"
        f"<ram:DuePayableAmount>{inv.total}</ram:DuePayableAmount>"
        "</ram:SpecifiedTradeSettlementHeaderMonetarySummation></ram:ApplicableHeaderTradeSettlement>"
        "</rsm:SupplyChainTradeTransaction></rsm:CrossIndustryInvoice>"
    ).encode()


def pdf(attachment: bytes | None) -> bytes:
    """A one-page PDF; with `attachment`, a Factur-X PDF carrying it as factur-x.xml."""
    from pypdf import PdfWriter  # imported here: only PDF documents pay for pypdf

    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    if attachment is not None:
        writer.add_attachment("factur-x.xml", attachment)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _pdf_text(text: str) -> str:
    """A string literal for a PDF content stream (WinAnsi covers the demo's accented names)."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def text_pdf(inv: DemoInvoice) -> bytes:
    """A plain PDF with a text layer and no e-invoice: what most suppliers still send."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    symbol = {"EUR": "EUR", "USD": "USD", "GBP": "GBP"}[inv.currency]
    rows = [
        (14, inv.vendor or "Invoice"),
        (10, "Musterstrasse 1, 10115 Berlin"),
        (10, ""),
        (10, f"Bill to: {inv.buyer}"),
        (10, ""),
        (12, f"Invoice No: {inv.number}"),
        (12, f"Invoice Date: {inv.issued:%d.%m.%Y}"),
        (12, f"Due Date: {inv.due:%d.%m.%Y}"),
        (10, ""),
    ]
    rows += [
        (10, f"{line.description}   {line.quantity} x {line.unit_price}   {line.amount} {symbol}") for line in inv.lines
    ]
    rows += [
        (10, ""),
        (12, f"Net amount: {inv.net} {symbol}"),
        (12, f"VAT: {inv.tax} {symbol}"),
        (12, f"Total: {inv.total} {symbol}"),
    ]
    lines, y = [], 790
    for size, text in rows:
        lines.append(f"BT /F1 {size} Tf 60 {y} Td ({_pdf_text(text)}) Tj ET")
        y -= size + 8
    writer = PdfWriter()
    page = writer.add_blank_page(width=595, height=842)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
    )
    content = DecodedStreamObject()
    content.set_data("\n".join(lines).encode("cp1252", errors="replace"))
    page[NameObject("/Contents")] = writer._add_object(content)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def scan(inv: DemoInvoice) -> bytes:
    """A 150-dpi PNG render of the plain PDF: a scanned invoice."""
    import pypdfium2

    document = pypdfium2.PdfDocument(text_pdf(inv))
    image = document[0].render(scale=150 / 72).to_pil().convert("L")
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _field(kind: str, label: str, value: str, confidence: float = 99.0) -> dict[str, object]:
    return {
        "Type": {"Text": kind, "Confidence": confidence},
        "LabelDetection": {"Text": label, "Confidence": confidence},
        "ValueDetection": {"Text": value, "Confidence": confidence},
        "PageNumber": 1,
    }


def textract(inv: DemoInvoice) -> bytes:
    symbol = {"EUR": "€", "USD": "$", "GBP": "£"}[inv.currency]
    summary = [
        _field("INVOICE_RECEIPT_ID", "Invoice No", inv.number),
        _field("INVOICE_RECEIPT_DATE", "Date", inv.issued.strftime("%B %d, %Y")),
        _field("SUBTOTAL", "Subtotal", f"{symbol}{inv.net:,}"),
        _field("TAX", "Tax", f"{symbol}{inv.tax:,}"),
        _field("TOTAL", "Total", f"{symbol}{inv.total:,}"),
    ]
    if inv.vendor:
        summary.append(_field("VENDOR_NAME", "", inv.vendor))
    summary[-1]["Currency"] = {"Code": inv.currency, "Confidence": 99.0}
    rows = [
        {
            "LineItemExpenseFields": [
                _field("ITEM", "Description", line.description),
                _field("QUANTITY", "Qty", str(line.quantity)),
                _field("UNIT_PRICE", "Unit price", f"{symbol}{line.unit_price:,}"),
                _field("PRICE", "Amount", f"{symbol}{line.amount:,}"),
            ]
        }
        for line in inv.lines
    ]
    for field in summary:
        field["Currency"] = {"Code": inv.currency, "Confidence": 99.0}
    response = {
        "DocumentMetadata": {"Pages": 1},
        "ExpenseDocuments": [
            {
                "ExpenseIndex": 1,
                "SummaryFields": summary,
                "LineItemGroups": [{"LineItemGroupIndex": 1, "LineItems": rows}],
            }
        ],
    }
    return json.dumps(response).encode()


def normalized(inv: DemoInvoice) -> bytes:
    payload = {
        "documentType": "INVOICE",
        "invoiceNumber": inv.number,
        "invoiceDate": inv.issued.isoformat(),
        "dueDate": inv.due.isoformat(),
        "vendorName": inv.vendor,
        "buyerName": inv.buyer,
        "currency": inv.currency,
        "subtotal": str(inv.net),
        "tax": str(inv.tax),
        "totalAmount": str(inv.total),
        "amountDue": str(inv.total),
        "lineItems": [
            {
                "lineNumber": i,
                "description": line.description,
                "quantity": str(line.quantity),
                "unitPrice": str(line.unit_price),
                "amount": str(line.amount),
                "taxRate": str(line.rate),
            }
            for i, line in enumerate(inv.lines, 1)
        ],
    }
    return json.dumps(payload).encode()


_RENDER = {
    "ubl": (ubl, "invoice.xml"),
    "cii": (cii, "invoice.xml"),
    "facturx": (lambda inv: pdf(cii(inv)), "invoice.pdf"),
    "textract": (textract, "analyze-expense.json"),
    "normalized": (normalized, "invoice.json"),
    "text-pdf": (text_pdf, "invoice.pdf"),
    "scan": (scan, "scan.png"),
}


def _bad(kind: str, rng: random.Random) -> tuple[bytes, str]:
    if kind == "truncated":
        return cii(_invoice(rng, 0, False))[:300], "invoice.xml"
    if kind == "junk":
        return bytes(rng.randrange(256) for _ in range(2048)), "invoice.xml"
    if kind == "empty":
        return b"", "invoice.pdf"
    if kind == "xxe":
        return (
            b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><Invoice>&x;</Invoice>'
        ), "invoice.xml"
    return pdf(None), "scan.pdf"


def generate(
    users: int, docs: int, *, bad_ratio: float = 0.05, review_ratio: float = 0.1, ocr_ratio: float = 0.0, seed: int = 7
) -> Iterator[DemoDocument]:
    """`docs` documents spread over `users` users; formats cycle so every one is present."""
    ratios = (bad_ratio, review_ratio, ocr_ratio)
    if users < 1 or docs < 0 or not all(0 <= r <= 1 for r in ratios):
        raise ValueError("need users >= 1, docs >= 0 and ratios within 0..1")
    rng = random.Random(seed)
    for n in range(docs):
        user_id = f"user-{n % users:04d}"
        document_id = f"doc-{seed}-{n:07d}"
        roll = rng.random()
        if roll < bad_ratio:
            kind = BAD_KINDS[n % len(BAD_KINDS)]
            body, filename = _bad(kind, rng)
            yield DemoDocument(user_id, document_id, filename, body, kind)
            continue
        review = roll < bad_ratio + review_ratio
        fmt = OCR_FORMATS[n % 2] if rng.random() < ocr_ratio else GOOD_FORMATS[n % len(GOOD_FORMATS)]
        render, filename = _RENDER[fmt]
        yield DemoDocument(user_id, document_id, filename, render(_invoice(rng, n, review)), fmt, review)


def copies(documents: Iterator[DemoDocument], count: int) -> Iterator[DemoDocument]:
    """The first `count` good documents again, each under a new documentId of the same user: the
    same bytes uploaded twice, which the ingest flags as duplicates for review.
    """
    good = (d for d in documents if d.kind in GOOD_FORMATS and not d.review)
    for doc, _ in zip(good, range(count), strict=False):
        yield DemoDocument(doc.user_id, f"{doc.document_id}-again", doc.filename, doc.body, doc.kind)
