"""The text layer of a plain PDF: exact words with positions, page by page (pdfplumber).

A page whose text layer is empty (a scan inside a PDF) comes back as None so only that page goes
to OCR. Rotated text (a watermark or a form number printed up the margin) is no part of the
invoice's reading: only upright words are kept. A word the producer kerned apart ("F actuurnummer",
a lone capital set a little off its word) is joined again, so labels match as printed.
Text-layer words get confidence 99: the characters are exact, but the label→value pairing built
on them is still a heuristic, so we stop short of 100.
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


# Characters closer than this share of their font size are one word. pdfplumber's default, a fixed
# 3 pt, glues words whose producer positions them without space characters (a word gap of 2.5 pt
# at 10 pt: "TaxiunternehmenTXGmbH"); letters within a word sit closer than 1.1 pt at that size.
_X_TOLERANCE_RATIO = 0.15
# A lone capital followed this close (in line heights) by a lower-case word is one word kerned
# apart; a word space is about 0.25 line heights or more.
_KERNING_GAP = 0.2


# A lone character touching the next word (a zero-width space between them: "Nr. 4 7110818" is
# printed 47110818, "vom 3 1.10.2018" is 31.10.2018) is one word whatever it is.
_TOUCHING_GAP = 0.05


def _kerned_apart(last: Word, word: Word) -> bool:
    height = max(word.height, 1.0)
    if len(last.text) != 1 or abs(word.top - last.top) >= 0.3 * height:
        return False
    gap = word.left - last.right
    if last.text.isupper() and word.text[:1].islower():
        return 0 <= gap < _KERNING_GAP * height
    return last.text.isalnum() and word.text[:1].isalnum() and abs(gap) <= _TOUCHING_GAP * height


def rejoin_kerning(words: list[Word]) -> list[Word]:
    """Words in reading order with a lone character kerned off its word joined back to it."""
    joined: list[Word] = []
    for word in words:
        last = joined[-1] if joined else None
        if last is not None and _kerned_apart(last, word):
            joined[-1] = Word(
                last.text + word.text,
                last.left,
                min(last.top, word.top),
                word.right,
                max(last.bottom, word.bottom),
                min(last.confidence, word.confidence),
                word.page,
            )
            continue
        joined.append(word)
    return joined


def text_layer_pages(pdf: bytes) -> list[Page | None]:
    """One entry per page: its lines, or None when the page has no usable text layer."""
    check_content_sizes(pdf)
    pages: list[Page | None] = []
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        for number, page in enumerate(document.pages, start=1):
            words = rejoin_kerning(
                [
                    Word(
                        w["text"],
                        float(w["x0"]),
                        float(w["top"]),
                        float(w["x1"]),
                        float(w["bottom"]),
                        TEXT_LAYER_CONFIDENCE,
                        number,
                    )
                    for w in page.extract_words(
                        keep_blank_chars=False, use_text_flow=False, x_tolerance_ratio=_X_TOLERANCE_RATIO
                    )
                    if w["text"].strip() and w.get("upright", True)
                ]
            )
            pages.append(
                Page(number, float(page.width), float(page.height), rebuild_lines(words))
                if len(words) >= _MIN_WORDS
                else None
            )
            page.flush_cache()  # pdfplumber keeps every parsed object per page otherwise
    return pages
