"""The text layer of a plain PDF: exact words with positions, page by page (pdfplumber).

A page whose text layer is empty (a scan inside a PDF) comes back as None so only that page goes
to OCR. Text-layer words get confidence 99: the characters are exact, but the label→value
pairing built on them is still a heuristic, so we stop short of 100.
"""

from __future__ import annotations

import io
import logging

import pdfplumber

from jobs.ocr.lines import Page, Word, rebuild_lines

logger = logging.getLogger(__name__)

TEXT_LAYER_CONFIDENCE = 99.0
# Fewer words than this and the page is treated as a scan (a stray page number is not a text layer).
_MIN_WORDS = 5


def text_layer_pages(pdf: bytes) -> list[Page | None]:
    """One entry per page: its lines, or None when the page has no usable text layer."""
    pages: list[Page | None] = []
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        for number, page in enumerate(document.pages, start=1):
            words = [
                Word(w["text"], float(w["x0"]), float(w["top"]), float(w["x1"]), float(w["bottom"]),
                     TEXT_LAYER_CONFIDENCE, number)
                for w in page.extract_words(keep_blank_chars=False, use_text_flow=False)
                if w["text"].strip()
            ]
            pages.append(Page(number, float(page.width), float(page.height), rebuild_lines(words))
                         if len(words) >= _MIN_WORDS else None)
            page.flush_cache()  # pdfplumber keeps every parsed object per page otherwise
    return pages
