"""Fixtures of the recovery tests."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """The commands' main() calls setup_logging (INFO on the root logger, as the reconcile's
    does); undo it so later tests log as before.
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
