"""The embedded OCR engine: Debian's tesseract (fra+deu+eng) through word boxes (pytesseract).

Owns calling tesseract with bounded resources: one thread per call (OMP_THREAD_LIMIT=1, the
ingest already runs one extraction per core in its process pool) and a per-page timeout. Only
word boxes are taken from tesseract; lines are rebuilt by jobs.extract.ocr.lines.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

import pytesseract
from PIL import Image

from jobs.extract.ocr.images import is_blank, preprocess
from jobs.extract.ocr.lines import Line, Page, Word, rebuild_lines

logger = logging.getLogger(__name__)

# tesseract's OpenMP pool would otherwise take every core per page and fight the process pool.
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

LANGUAGES = "fra+deu+eng"
# psm 11 (sparse text): find every word wherever it is; we do our own line and column layout.
_CONFIG = "--oem 1 --psm 11"
_LINE_CONFIG = "--oem 1 --psm 7"
PAGE_TIMEOUT_S = 30.0
_AMOUNT_RE = re.compile(r"[-−]?[0-9][0-9.,' ]*[0-9](?:\s?(?:€|EUR|USD|GBP|CHF))?")
_MAX_RECOVERED_ROWS_SCAN = 400


class OcrEngineError(RuntimeError):
    """tesseract is missing, failed, or ran past its per-page time budget."""


def ocr_page(image: Image.Image, number: int, timeout_s: float = PAGE_TIMEOUT_S, scale: float = 1.0) -> Page:
    """Pre-process one scanned page and read its words with positions and confidences.

    `scale` enlarges the cleaned page before reading (a second look at a low-resolution scan).
    """
    if is_blank(image):
        return Page(number, float(image.width), float(image.height), [])
    prepared = preprocess(image)
    if scale != 1.0:
        prepared = prepared.resize(
            (round(prepared.width * scale), round(prepared.height * scale)), Image.Resampling.LANCZOS
        )
    try:
        data = pytesseract.image_to_data(
            prepared, lang=LANGUAGES, config=_CONFIG, output_type=pytesseract.Output.DICT, timeout=timeout_s
        )
    except RuntimeError as exc:  # pytesseract signals its timeout as a bare RuntimeError
        raise OcrEngineError(f"tesseract on page {number}: {exc}") from exc
    except (pytesseract.TesseractError, pytesseract.TesseractNotFoundError) as exc:
        raise OcrEngineError(f"tesseract on page {number}: {exc}") from exc
    words = _words(data, number, 0, 0)
    lines = rebuild_lines(words)
    recovered = _recover_row_labels(prepared, lines, number, timeout_s)
    if recovered:
        lines = rebuild_lines(words + recovered)
    return Page(number, float(prepared.width), float(prepared.height), lines)


def _words(data: dict[str, list[Any]], number: int, dx: float, dy: float) -> list[Word]:
    return [
        Word(
            text.strip(),
            float(left) + dx,
            float(top) + dy,
            float(left + width) + dx,
            float(top + height) + dy,
            max(float(conf), 0.0),
            number,
        )
        for text, left, top, width, height, conf in zip(
            data["text"], data["left"], data["top"], data["width"], data["height"], data["conf"], strict=True
        )
        if text.strip() and float(conf) >= 0
    ]


def _recover_row_labels(image: Image.Image, lines: list[Line], number: int, timeout_s: float) -> list[Word]:
    """Re-read the left part of rows that came back as a lone right-hand amount.

    Sparse-text mode sometimes drops a whole word on a noisy scan ("Bruttosumme" of
    "Bruttosumme 215,07"), leaving the amount without its label. Reading just that row band as a
    single text line (psm 7) is cheap and usually finds it.
    """
    recovered: list[Word] = []
    for line in lines[:_MAX_RECOVERED_ROWS_SCAN]:
        first = line.segments[0]
        if len(line.segments) > 1 or first.left < image.width * 0.4 or not _AMOUNT_RE.fullmatch(first.text):
            continue
        pad = line.bottom - line.top
        box = (0, max(0, int(line.top - pad / 2)), int(first.left - pad), int(line.bottom + pad / 2))
        if box[2] <= box[0] + pad:
            continue
        try:
            data = pytesseract.image_to_data(
                image.crop(box),
                lang=LANGUAGES,
                config=_LINE_CONFIG,
                output_type=pytesseract.Output.DICT,
                timeout=timeout_s,
            )
        except (RuntimeError, pytesseract.TesseractError) as exc:
            logger.debug("row recovery on page %d skipped: %s", number, exc)
            continue
        recovered += _words(data, number, box[0], box[1])
    return recovered
