"""Fixtures of the reconcile tests."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """cli.main calls setup_logging (INFO on the root logger); undo it so later tests' fixtures log
    as before (jobs.local's bootstrap logs an `extra` key LogRecord refuses once INFO is on).
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
