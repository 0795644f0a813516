"""A blank page costs no OCR pass and yields no words; a printed one is still read."""

from __future__ import annotations

from PIL import Image, ImageDraw

from jobs.ocr.images import is_blank


def test_blank_and_printed_pages() -> None:
    page = Image.new("L", (1240, 1754), 255)
    assert is_blank(page)
    ImageDraw.Draw(page).rectangle((100, 100, 1100, 160), fill=0)
    assert not is_blank(page)
