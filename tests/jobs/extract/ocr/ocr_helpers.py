"""Shared OCR test helpers: corpus locations, expectations, synthetic word boxes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, OcrEngine, extract_document
from jobs.extract.ocr.degrade import header_mismatches
from jobs.extract.ocr.lines import Page, Word, rebuild_lines

REPO_ROOT = Path(__file__).resolve().parents[4]
CORPUS = REPO_ROOT / "tests" / "data" / "corpus"
FACTURX = CORPUS / "einvoice" / "facturx-pdf"
TEXTRACT = CORPUS / "textract"


LOCAL = ExtractionSettings(ocr_engine=OcrEngine.LOCAL)


class GeneratedCase(Protocol):
    """A rendered layout case of the generated sets (tests/data/layouts_*/render.py)."""

    @property
    def id(self) -> str: ...

    @property
    def expected(self) -> dict[str, Any]: ...


C = TypeVar("C", bound=GeneratedCase)


@dataclass
class Score:
    """A generated set read as plain PDFs: header fields right, documents PROCESSED, and every
    PROCESSED document with a wrong header field (id, the mismatches).
    """

    right: int = 0
    processed: int = 0
    wrong: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)


def score(cases: Iterable[C], render: Callable[[C], bytes]) -> Score:
    """Each case rendered and read by the local text-layer reader, scored against its expected headers."""
    scored = Score()
    for case in cases:
        outcome = extract_document(render(case), f"{case.id}.pdf", LOCAL)
        mismatches = header_mismatches(outcome.invoice, case.expected)
        scored.right += len(case.expected) - len(mismatches)
        if outcome.validation.status is Status.PROCESSED:
            scored.processed += 1
            if mismatches:
                scored.wrong.append((case.id, mismatches))
    return scored


@cache
def expected_headers() -> dict[str, dict[str, Any]]:
    return json.loads((CORPUS / "einvoice" / "expected.json").read_text())["invoices"]


def invoice_pdfs() -> list[Path]:
    return sorted(FACTURX.glob("*.pdf"))


def page_of(*rows: str | tuple[str, ...], confidence: float = 95.0, shuffle: bool = True) -> Page:
    """A synthetic page: each row is a string (one segment) or a tuple of column segments.

    Words get 10-pt boxes on a 600-unit-wide page; columns start 250 units apart. Words are
    handed to the line rebuilder in reverse, the way tesseract's column-wise order scrambles them.
    """
    words: list[Word] = []
    for row_index, row in enumerate(rows):
        top = 20.0 + row_index * 14.0
        for column, segment in enumerate((row,) if isinstance(row, str) else row):
            left = 20.0 + column * 250.0
            for token in segment.split():
                width = 6.0 * len(token)
                words.append(Word(token, left, top, left + width, top + 10.0, confidence))
                left += width + 3.0
    ordered = list(reversed(words)) if shuffle else words
    return Page(1, 600.0, 20.0 + len(rows) * 14.0 + 20.0, rebuild_lines(ordered))
