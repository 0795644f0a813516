"""Safe XML parsing: no DTDs, no entities, no network, bounded trees.

Any DOCTYPE or ENTITY declaration is refused outright (UNSAFE_XML) rather than parsed-and-ignored:
e-invoices never need one, and XXE / billion-laughs payloads always carry one.
"""

from __future__ import annotations

import codecs
import re
import threading

from lxml import etree

from jobs.contract.invoice import DocumentFormat, FailureCode
from jobs.extract.result import DocumentRejectedError

# Checked on the raw bytes and, for documents not in an ASCII-compatible encoding, on the decoded
# text: a UTF-16 document would hide "<!DOCTYPE" from a byte search.
_DECLARATION_RE = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)

_local = threading.local()


def _parser() -> etree.XMLParser:
    # One parser per thread: lxml parsers are reusable but not thread-safe.
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            dtd_validation=False,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
        )
        _local.parser = parser
    return parser


def _unsafe(message: str) -> DocumentRejectedError:
    return DocumentRejectedError(FailureCode.UNSAFE_XML, message, DocumentFormat.UNKNOWN)


def parse_xml(data: bytes) -> etree._Element:
    """Parse an XML document or raise DocumentRejectedError (UNSAFE_XML or MALFORMED)."""
    if _DECLARATION_RE.search(data):
        raise _unsafe("XML with a DOCTYPE or ENTITY declaration is refused")
    if data.startswith(_UTF16_BOMS):
        try:
            text = data.decode("utf-32" if data[:4] in _UTF16_BOMS[2:] else "utf-16")
        except UnicodeDecodeError as exc:
            raise DocumentRejectedError(FailureCode.MALFORMED, f"undecodable XML: {exc}") from exc
        if _DECLARATION_RE.search(text.encode("utf-8", "replace")):
            raise _unsafe("XML with a DOCTYPE or ENTITY declaration is refused")
    try:
        root = etree.fromstring(data, parser=_parser())
    except etree.XMLSyntaxError as exc:
        raise DocumentRejectedError(FailureCode.MALFORMED, f"malformed XML: {exc}") from exc
    docinfo = root.getroottree().docinfo
    # Belt and braces for encodings the byte scan cannot see through.
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise _unsafe("XML with a DOCTYPE is refused")
    return root


def xml_text(data: bytes, root: etree._Element) -> str:
    """The document as text for outcome.raw, in its declared encoding."""
    encoding = root.getroottree().docinfo.encoding or "utf-8"
    try:
        return data.decode(encoding, errors="replace")
    except LookupError:
        return etree.tostring(root, encoding="unicode")
