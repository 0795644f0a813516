"""The embedded OCR engine: Debian's tesseract (eng+deu) through word boxes (pytesseract).

Owns calling tesseract with bounded resources: one thread per call (OMP_THREAD_LIMIT=1, the
ingest already runs one extraction per core in its process pool) and a per-page timeout. Only
word boxes are taken from tesseract; lines are rebuilt by jobs.ocr.lines.
"""

from __future__ import annotations

import logging
import os

import pytesseract
from PIL import Image

from jobs.ocr.images import preprocess
from jobs.ocr.lines import Page, Word, rebuild_lines

logger = logging.getLogger(__name__)

# tesseract's OpenMP pool would otherwise take every core per page and fight the process pool.
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

LANGUAGES = "deu+eng"
# psm 11 (sparse text): find every word wherever it is; we do our own line and column layout.
_CONFIG = "--oem 1 --psm 11"
PAGE_TIMEOUT_S = 30.0


class OcrEngineError(RuntimeError):
    """tesseract is missing, failed, or ran past its per-page time budget."""


def ocr_page(image: Image.Image, number: int, timeout_s: float = PAGE_TIMEOUT_S) -> Page:
    """Pre-process one scanned page and read its words with positions and confidences."""
    prepared = preprocess(image)
    try:
        data = pytesseract.image_to_data(
            prepared, lang=LANGUAGES, config=_CONFIG, output_type=pytesseract.Output.DICT, timeout=timeout_s
        )
    except RuntimeError as exc:  # pytesseract signals its timeout as a bare RuntimeError
        raise OcrEngineError(f"tesseract on page {number}: {exc}") from exc
    except (pytesseract.TesseractError, pytesseract.TesseractNotFoundError) as exc:
        raise OcrEngineError(f"tesseract on page {number}: {exc}") from exc
    words = [
        Word(text.strip(), float(left), float(top), float(left + width), float(top + height),
             max(float(conf), 0.0), number)
        for text, left, top, width, height, conf in zip(
            data["text"], data["left"], data["top"], data["width"], data["height"], data["conf"], strict=True
        )
        if text.strip() and float(conf) >= 0
    ]
    return Page(number, float(prepared.width), float(prepared.height), rebuild_lines(words))
