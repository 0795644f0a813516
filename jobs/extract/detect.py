"""Content sniffing: which reader a document goes to, decided by its bytes, never its file name."""

from __future__ import annotations

import codecs
from enum import StrEnum

_IMAGE_MAGIC = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",  # JPEG
    b"II*\x00",  # TIFF, little-endian
    b"MM\x00*",  # TIFF, big-endian
)
_XML_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class Kind(StrEnum):
    EMPTY = "EMPTY"
    PDF = "PDF"
    IMAGE = "IMAGE"
    XML = "XML"
    JSON = "JSON"
    UNKNOWN = "UNKNOWN"


def sniff(data: bytes) -> Kind:
    head = data[:1024]
    if not head.strip():
        return Kind.EMPTY if not data.strip() else Kind.UNKNOWN
    if head.startswith(_IMAGE_MAGIC):
        return Kind.IMAGE
    # The PDF header may follow a few bytes of junk (readers accept it within the first 1 KB).
    if b"%PDF-" in head:
        return Kind.PDF
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return Kind.XML
    text = head.removeprefix(codecs.BOM_UTF8).lstrip()
    if text.startswith(b"<"):
        return Kind.XML
    if text[:1] in (b"{", b"["):
        return Kind.JSON
    return Kind.UNKNOWN
