"""Cheap refusals before any OCR work: blank pages, and pages whose content is a compression bomb."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, NameObject

from jobs.extract.ocr.images import is_blank
from jobs.extract.ocr.textlayer import PageContentTooLargeError, check_content_sizes


def test_blank_and_printed_pages() -> None:
    page = Image.new("L", (1240, 1754), 255)
    assert is_blank(page)
    ImageDraw.Draw(page).rectangle((100, 100, 1100, 160), fill=0)
    assert not is_blank(page)


def test_a_page_content_bomb_is_refused_before_parsing() -> None:
    writer = PdfWriter()
    page = writer.add_blank_page(width=595, height=842)
    stream = DecodedStreamObject()
    stream.set_data(b"0 0 m\n" * (2 * 1024 * 1024))  # 12 MiB of drawing operators
    page[NameObject("/Contents")] = writer._add_object(stream.flate_encode())
    out = io.BytesIO()
    writer.write(out)
    assert len(out.getvalue()) < 200_000  # tiny on disk
    with pytest.raises(PageContentTooLargeError, match="page 1"):
        check_content_sizes(out.getvalue())
    check_content_sizes(out.getvalue(), limit=64 * 1024 * 1024)  # within a larger bound it passes
