"""Fixtures for the OCR tests: the shared corpus, read in place beside the repository."""

from __future__ import annotations

from pathlib import Path
import shutil

import pytest
from ocr_helpers import CORPUS


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def tesseract() -> None:
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract is not installed (make setup installs it)")
