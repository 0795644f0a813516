"""XML e-invoices: safe parse, then dispatch on the root element to the UBL or a CII reader."""

from __future__ import annotations

from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.extract import cii, ubl
from jobs.extract.result import DocumentRejectedError, Extraction
from jobs.extract.settings import ExtractionSettings
from jobs.extract.xml_safety import parse_xml, xml_text


def extract_xml(data: bytes, settings: ExtractionSettings) -> Extraction:
    root = parse_xml(data)
    tag = str(root.tag)  # lxml gives a parsed element's tag as text
    if tag in ubl.ROOT_TAGS:
        document_format, engine = DocumentFormat.UBL, "ubl"
        invoice, reasons = ubl.read_ubl(root, settings.totals_tolerance)
    elif (syntax := cii.SYNTAXES.get(tag)) is not None:
        document_format, engine = syntax.format, syntax.engine
        invoice, reasons = cii.read_cii(root, settings.totals_tolerance, syntax)
    else:
        raise DocumentRejectedError(
            FailureCode.UNSUPPORTED_FORMAT,
            f"XML root {tag} is neither UBL 2.1, CII nor ZUGFeRD 1.0",
            DocumentFormat.UNKNOWN,
        )
    raw: dict[str, object] = {"root": tag, "bytes": len(data)}
    if len(data) <= settings.max_raw_xml_bytes:
        raw["xml"] = xml_text(data, root)
    return Extraction(document_format, engine, raw, invoice, reasons)
