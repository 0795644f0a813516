"""Degraded forms of a Factur-X PDF, made at test/bench time (never committed as binaries).

Owns the three forms the OCR acceptance tests and bench/bench_ocr.py read: the PDF with its
e-invoice XML removed (text layer only), clean 150-dpi PNG renders, and noisy renders (rotation,
blur, noise, JPEG artefacts) made with a fixed random seed so every run sees the same pixels.
"""

from __future__ import annotations

import io
import random

import numpy as np
import pypdfium2 as pdfium
from PIL import Image, ImageFilter
from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject

from jobs.contract.invoice import Invoice

HEADER_FIELDS = ("invoiceNumber", "invoiceDate", "vendorName", "currency", "totalAmount")
RENDER_DPI = 150
NOISY_SEED = 20260


def strip_attachments(pdf: bytes) -> bytes:
    """The same PDF without /EmbeddedFiles and /AF: what a plain-PDF invoice looks like."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    root = writer._root_object
    names = root.get("/Names")
    if names is not None:
        names.get_object().pop(NameObject("/EmbeddedFiles"), None)
    root.pop(NameObject("/AF"), None)
    for page in writer.pages:
        page.pop(NameObject("/AF"), None)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def render_pages(pdf: bytes, dpi: int = RENDER_DPI) -> list[Image.Image]:
    document = pdfium.PdfDocument(pdf)
    try:
        return [document[i].render(scale=dpi / 72).to_pil().convert("RGB") for i in range(len(document))]
    finally:
        document.close()


def clean_pages(pdf: bytes) -> list[Image.Image]:
    """Lossless 150-dpi renders, one per page (encode one with `png` for a single-page scan)."""
    return render_pages(pdf)


def noisy_pages(pdf: bytes, seed: int = NOISY_SEED) -> list[Image.Image]:
    """±1.5° rotation, a slight blur, Gaussian noise and a JPEG quality-70 round trip, reproducibly."""
    rng = random.Random(seed)
    pages: list[Image.Image] = []
    for page in render_pages(pdf):
        angle = rng.uniform(-1.5, 1.5)
        rotated = page.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor="white")
        blurred = rotated.filter(ImageFilter.GaussianBlur(radius=0.6))
        pixels = np.asarray(blurred, dtype=np.int16)
        noise = np.random.default_rng(rng.randrange(2**32)).normal(0, 12, pixels.shape[:2])[..., None]
        noisy = Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8))
        pages.append(Image.open(io.BytesIO(jpeg(noisy))).convert("RGB"))
    return pages


def png(image: Image.Image) -> bytes:
    return _encode(image, "PNG")


def jpeg(image: Image.Image, quality: int = 70) -> bytes:
    return _encode(image, "JPEG", quality=quality)


def multipage_tiff(pages: list[Image.Image]) -> bytes:
    """One scan upload holding every page (lossless, so the pixels are exactly the renders')."""
    out = io.BytesIO()
    pages[0].save(out, format="TIFF", save_all=True, append_images=pages[1:], compression="tiff_deflate")
    return out.getvalue()


def _encode(image: Image.Image, fmt: str, **options: int) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


FORMS = ("text-layer", "clean", "noisy")


def make_form(pdf: bytes, form: str) -> bytes:
    """One acceptance form of a Factur-X invoice as one upload (scans as a multi-page TIFF)."""
    if form == "text-layer":
        return strip_attachments(pdf)
    return multipage_tiff({"clean": clean_pages, "noisy": noisy_pages}[form](pdf))


def header_mismatches(invoice: Invoice | None, expected: dict[str, str]) -> dict[str, str | None]:
    """Header fields that differ from einvoice/expected.json: {field: what was read}."""
    read = {
        name: (None if invoice is None or getattr(invoice, name) is None else str(getattr(invoice, name)))
        for name in HEADER_FIELDS
    }
    return {name: value for name, value in read.items() if value != expected[name]}
