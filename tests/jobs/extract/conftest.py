"""Fixtures for the extraction tests: the shared corpus, read in place beside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from extract_helpers import CORPUS


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS
