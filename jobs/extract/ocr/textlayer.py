"""The text layer of a plain PDF: exact words with positions, page by page (pdfplumber).

A page whose text layer is empty (a scan inside a PDF) comes back as None so only that page goes
to OCR. Text-layer words get confidence 99: the characters are exact, but the label→value
pairing built on them is still a heuristic, so we stop short of 100.
"""

from __future__ import annotations

import io
import logging
import zlib

import pdfplumber
from pypdf import PdfReader
from pypdf.generic import ArrayObject

from jobs.extract.ocr.lines import Page, Word, rebuild_lines

logger = logging.getLogger(__name__)

TEXT_LAYER_CONFIDENCE = 99.0
# Fewer words than this and the page is treated as a scan (a stray page number is not a text layer).
_MIN_WORDS = 5


# pdfplumber parses a page's whole inflated content stream with no bound of its own; a 200 KB
# PDF can inflate to hundreds of MiB and hold a worker for minutes, so sizes are checked first.
MAX_PAGE_CONTENT_BYTES = 8 * 1024 * 1024


class PageContentTooLargeError(ValueError):
    """A page's content stream inflates beyond MAX_PAGE_CONTENT_BYTES (a compression bomb)."""


def check_content_sizes(pdf: bytes, limit: int = MAX_PAGE_CONTENT_BYTES) -> None:
    """Inflate each page's content streams up to `limit` bytes, never further."""
    for number, page in enumerate(PdfReader(io.BytesIO(pdf)).pages, start=1):
        contents = page.get("/Contents")
        if contents is None:
            continue
        contents = contents.get_object()
        streams = list(contents) if isinstance(contents, ArrayObject) else [contents]
        size = 0
        for ref in streams:
            stream = ref.get_object()
            encoded: bytes = stream._data
            filters = stream.get("/Filter")
            if filters in ("/FlateDecode", ["/FlateDecode"]):
                size += len(zlib.decompressobj().decompress(encoded, limit - size + 1))
            else:
                size += len(encoded)
            if size > limit:
                raise PageContentTooLargeError(f"page {number} content inflates beyond {limit} bytes")


def text_layer_pages(pdf: bytes) -> list[Page | None]:
    """One entry per page: its lines, or None when the page has no usable text layer."""
    check_content_sizes(pdf)
    pages: list[Page | None] = []
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        for number, page in enumerate(document.pages, start=1):
            words = [
                Word(
                    w["text"],
                    float(w["x0"]),
                    float(w["top"]),
                    float(w["x1"]),
                    float(w["bottom"]),
                    TEXT_LAYER_CONFIDENCE,
                    number,
                )
                for w in page.extract_words(keep_blank_chars=False, use_text_flow=False)
                if w["text"].strip()
            ]
            pages.append(
                Page(number, float(page.width), float(page.height), rebuild_lines(words))
                if len(words) >= _MIN_WORDS
                else None
            )
            page.flush_cache()  # pdfplumber keeps every parsed object per page otherwise
    return pages
