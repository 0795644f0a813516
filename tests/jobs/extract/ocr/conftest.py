"""Fixtures for the OCR tests (the corpus fixture is the repository-wide one)."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def tesseract() -> None:
    if shutil.which("tesseract") is None:
        pytest.fail("tesseract is not installed: `make setup` installs it")
