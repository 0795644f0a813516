"""Factur-X / ZUGFeRD PDFs: find the embedded e-invoice XML (bounded) and read it as CII or UBL.

ZUGFeRD 1.0 attachments (ZUGFeRD-invoice.xml) make a ZUGFERD1_PDF. An attachment that is broken
XML or no standard we read raises UnusableAttachmentError, so the page content can be read instead.

PDF work is bounded: the file must end in %%EOF (a truncated upload is MALFORMED, not "no XML"),
encrypted files are refused, the page count and the attachment size are capped. Decompression
itself is capped by pypdf's own output limits before our size check runs.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

from pypdf import PdfReader
from pypdf.errors import PdfReadError, PyPdfError
from pypdf.generic import ArrayObject, DictionaryObject, StreamObject

from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.extract.result import DocumentRejectedError, Extraction, UnusableAttachmentError
from jobs.extract.settings import ExtractionSettings
from jobs.extract.xml_invoice import extract_xml

logger = logging.getLogger(__name__)

# Names the Factur-X, ZUGFeRD 1/2 and XRechnung-in-PDF conventions give the invoice attachment.
KNOWN_NAMES = ("factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml", "order-x.xml")
_MAX_NAME_TREE_DEPTH = 8
# Failures of the attachment alone: the pages may still carry a readable invoice.
_UNUSABLE = frozenset({FailureCode.MALFORMED, FailureCode.UNSUPPORTED_FORMAT})


def _reject(code: FailureCode, message: str) -> DocumentRejectedError:
    return DocumentRejectedError(code, message, DocumentFormat.PDF)


def extract_facturx(data: bytes, settings: ExtractionSettings) -> Extraction:
    pages, attachment = _read_pdf(data, settings)
    if attachment is None:
        raise _reject(FailureCode.NEEDS_OCR, "PDF without an embedded e-invoice needs OCR")
    name, xml = attachment
    inner = _embedded_invoice(name, xml, settings)
    raw = {"attachment": name, "pages": pages, "xmlFormat": str(inner.format), **inner.raw}
    if inner.format is DocumentFormat.ZUGFERD1:
        return Extraction(DocumentFormat.ZUGFERD1_PDF, "zugferd1", raw, inner.invoice, inner.reasons)
    return Extraction(DocumentFormat.FACTURX_PDF, "facturx", raw, inner.invoice, inner.reasons)


def _read_pdf(data: bytes, settings: ExtractionSettings) -> tuple[int, tuple[str, bytes] | None]:
    """(pages, the invoice attachment's name and bytes if any); any unreadable structure is MALFORMED."""
    if b"%%EOF" not in data[-2048:]:
        raise _reject(FailureCode.MALFORMED, "PDF is truncated (no %%EOF trailer)")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise _reject(FailureCode.ENCRYPTED, "PDF is encrypted")
        catalog = reader.trailer["/Root"].get_object()
        if not isinstance(catalog, DictionaryObject):
            raise TypeError("the trailer's /Root is not a dictionary")
        page_tree = catalog["/Pages"].get_object()
        if not isinstance(page_tree, DictionaryObject):
            raise TypeError("the catalog's /Pages is not a dictionary")
        pages = int(page_tree.get("/Count", 0))
        if pages > settings.max_pdf_pages:
            raise _reject(FailureCode.TOO_LARGE, f"PDF has {pages} pages (limit {settings.max_pdf_pages})")
        return pages, _invoice_attachment(catalog, settings.max_attachment_bytes)
    except DocumentRejectedError:
        raise
    except (PyPdfError, PdfReadError, KeyError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        raise _reject(FailureCode.MALFORMED, f"unreadable PDF: {type(exc).__name__}: {exc}") from exc


def _embedded_invoice(name: str, xml: bytes, settings: ExtractionSettings) -> Extraction:
    """The attachment read as an e-invoice; one the pages may stand in for is UnusableAttachmentError."""
    try:
        return extract_xml(xml, settings)
    except DocumentRejectedError as exc:
        if exc.code in _UNUSABLE:
            raise UnusableAttachmentError(name, exc, DocumentFormat.FACTURX_PDF) from exc
        exc.format = DocumentFormat.FACTURX_PDF
        exc.message = f"embedded {name}: {exc.message}"
        raise


def _invoice_attachment(catalog: DictionaryObject, limit: int) -> tuple[str, bytes] | None:
    specs = {name.lower(): spec for name, spec in _file_specs(catalog)}
    ordered = [n for n in KNOWN_NAMES if n in specs] + sorted(
        n for n in specs if n.endswith(".xml") and n not in KNOWN_NAMES
    )
    for name in ordered:
        data = _embedded_bytes(specs[name], name, limit)
        if data is not None:
            return name, data
    return None


def _file_specs(catalog: DictionaryObject) -> Iterator[tuple[str, DictionaryObject]]:
    # PDF/A-3 lists associated files in /AF; older ZUGFeRD only in the /EmbeddedFiles name tree.
    for ref in _as_array(catalog.get("/AF")):
        spec = ref.get_object()
        if isinstance(spec, DictionaryObject):
            yield _spec_name(spec), spec
    names = catalog.get("/Names")
    tree = names.get_object().get("/EmbeddedFiles") if names is not None else None
    if tree is not None:
        yield from _name_tree(tree.get_object(), 0)


def _name_tree(node: DictionaryObject, depth: int) -> Iterator[tuple[str, DictionaryObject]]:
    if depth > _MAX_NAME_TREE_DEPTH:
        return
    pairs = list(_as_array(node.get("/Names")))
    for key, value in zip(pairs[::2], pairs[1::2], strict=False):
        spec = value.get_object()
        if isinstance(spec, DictionaryObject):
            yield _spec_name(spec) or str(key), spec
    for kid in _as_array(node.get("/Kids")):
        yield from _name_tree(kid.get_object(), depth + 1)


def _as_array(value: Any) -> list[Any]:
    value = value.get_object() if hasattr(value, "get_object") else value
    return list(value) if isinstance(value, ArrayObject) else []


def _spec_name(spec: DictionaryObject) -> str:
    return str(spec.get("/UF") or spec.get("/F") or "")


def _embedded_bytes(spec: DictionaryObject, name: str, limit: int) -> bytes | None:
    files = spec.get("/EF")
    files = files.get_object() if files is not None else None
    if not isinstance(files, DictionaryObject):
        return None
    stream = files.get("/F") or files.get("/UF")
    stream = stream.get_object() if stream is not None else None
    if not isinstance(stream, StreamObject):
        return None
    params = stream.get("/Params")
    declared = params.get_object().get("/Size") if params is not None else None
    if declared is not None and int(declared) > limit:
        raise _reject(FailureCode.TOO_LARGE, f"attachment {name} declares {int(declared)} bytes (limit {limit})")
    data = stream.get_data()
    if len(data) > limit:
        raise _reject(FailureCode.TOO_LARGE, f"attachment {name} has {len(data)} bytes (limit {limit})")
    return data
