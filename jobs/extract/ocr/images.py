"""Scan pre-processing before OCR: decode, grayscale, denoise, deskew (Pillow + numpy only).

Owns turning image bytes or an image-only PDF page into the clean grayscale page tesseract reads
best. Deskew matters beyond recognition: line rebuilding groups words by vertical position, and a
1.5° tilt moves a row by a full line height across an A4 page.
"""

from __future__ import annotations

import io
import logging

import numpy as np
import pypdfium2 as pdfium
from PIL import Image, ImageFilter, ImageOps

logger = logging.getLogger(__name__)

# Image-only PDF pages are rendered at this resolution: enough for 8-pt print, cheap to OCR.
PDF_RENDER_DPI = 200
# Decompression-bomb guard for uploaded images (A4 at 600 dpi is ~35 MP).
MAX_PIXELS = 60_000_000
_SKEW_RANGE = 3.0  # degrees; scans tilted further are rare and tesseract copes up to a few degrees
_SKEW_STEP = 0.25
_SKEW_WIDTH = 600  # the angle search runs on a downscaled copy


def decode_images(data: bytes) -> list[Image.Image]:
    """Every frame of a PNG/JPEG/TIFF upload (multi-page TIFFs are common for fax scans)."""
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    image = Image.open(io.BytesIO(data))
    frames: list[Image.Image] = []
    for index in range(getattr(image, "n_frames", 1)):
        image.seek(index)
        frames.append(ImageOps.exif_transpose(image.copy()))
    return frames


def render_pdf_page(pdf: bytes, index: int, dpi: int = PDF_RENDER_DPI) -> Image.Image:
    document = pdfium.PdfDocument(pdf)
    try:
        page: Image.Image = document[index].render(scale=dpi / 72, grayscale=True).to_pil()
        return page
    finally:
        document.close()


# A page with less ink than this (share of dark pixels) is blank: no print worth an OCR pass.
_BLANK_INK_SHARE = 0.0005


def is_blank(image: Image.Image) -> bool:
    """True for an empty page (a blank back side, an empty scan): skips deskew and tesseract."""
    small = image.convert("L").resize((_SKEW_WIDTH, max(1, int(image.height * _SKEW_WIDTH / image.width))))
    return float((np.asarray(small) < 160).mean()) < _BLANK_INK_SHARE


def preprocess(image: Image.Image) -> Image.Image:
    """Grayscale, a 3×3 median against salt-and-pepper/JPEG noise, then straighten."""
    gray = image.convert("L")
    denoised = gray.filter(ImageFilter.MedianFilter(3))
    angle = estimate_skew(denoised)
    if abs(angle) >= _SKEW_STEP:
        denoised = denoised.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    return denoised


def estimate_skew(gray: Image.Image) -> float:
    """The rotation (degrees, PIL's counter-clockwise sign) that makes text rows horizontal.

    Projection-profile method: rows of text give the sharpest horizontal ink profile when level,
    so the angle maximising the variance of row sums wins.
    """
    scale = _SKEW_WIDTH / gray.width
    small = gray.resize((_SKEW_WIDTH, max(1, int(gray.height * scale))), Image.Resampling.BILINEAR)
    ink = Image.fromarray(((np.asarray(small) < 160) * 255).astype(np.uint8))
    best_angle, best_score = 0.0, -1.0
    for angle in np.arange(-_SKEW_RANGE, _SKEW_RANGE + 1e-9, _SKEW_STEP):
        rows = np.asarray(ink.rotate(float(angle), resample=Image.Resampling.NEAREST), dtype=np.float32).sum(axis=1)
        score = float(np.var(rows))
        if score > best_score:
            best_angle, best_score = float(angle), score
    return best_angle
