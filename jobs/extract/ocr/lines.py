"""Words with boxes → reading lines split into column segments (shared by text layer and OCR).

Tesseract's own reading order walks column by column, so a label ("Bruttosumme") and its value
("529,87") printed far apart on one row land in different blocks. Both engines therefore hand us
loose words with page coordinates, and this module rebuilds rows from vertical overlap and splits
each row into segments at wide horizontal gaps (the printed columns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median


@dataclass(frozen=True, slots=True)
class Word:
    """One word on a page; coordinates in page units (points or pixels), origin top-left."""

    text: str
    left: float
    top: float
    right: float
    bottom: float
    confidence: float  # 0-100: OCR word confidence, or the text layer's fixed confidence
    page: int = 1

    @property
    def height(self) -> float:
        return self.bottom - self.top


@dataclass(slots=True)
class Segment:
    words: list[Word]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def left(self) -> float:
        return self.words[0].left

    @property
    def right(self) -> float:
        return self.words[-1].right


@dataclass(slots=True)
class Line:
    segments: list[Segment] = field(default_factory=list)

    @property
    def words(self) -> list[Word]:
        return [w for s in self.segments for w in s.words]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments)

    @property
    def top(self) -> float:
        return min(w.top for w in self.words)

    @property
    def bottom(self) -> float:
        return max(w.bottom for w in self.words)

    @property
    def page(self) -> int:
        return self.segments[0].words[0].page


@dataclass(frozen=True, slots=True)
class Page:
    number: int
    width: float
    height: float
    lines: list[Line]


# A gap wider than this many line heights starts a new column segment. Word spacing is about
# 0.3 line heights; label/value columns on invoices sit several line heights apart.
_SEGMENT_GAP = 1.4


def rebuild_lines(words: list[Word]) -> list[Line]:
    """Group one page's words into rows (by vertical centre overlap), left to right, top to bottom."""
    rows: list[list[Word]] = []
    for word in sorted(words, key=lambda w: ((w.top + w.bottom) / 2, w.left)):
        centre = (word.top + word.bottom) / 2
        row = rows[-1] if rows else None
        if row is not None:
            row_top = median(w.top for w in row)
            row_bottom = median(w.bottom for w in row)
            # Same row when the word's centre falls inside the row's typical band.
            if row_top <= centre <= row_bottom:
                row.append(word)
                continue
        rows.append([word])
    return [_segment(sorted(row, key=lambda w: w.left)) for row in rows]


def _segment(row: list[Word]) -> Line:
    height = median(w.height for w in row) or 1.0
    line = Line([Segment([row[0]])])
    for word in row[1:]:
        if word.left - line.segments[-1].right > _SEGMENT_GAP * height:
            line.segments.append(Segment([word]))
        else:
            line.segments[-1].words.append(word)
    return line
