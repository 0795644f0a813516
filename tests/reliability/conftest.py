"""Fixtures of the reliability tests (helpers live in reliability_helpers.py)."""

from __future__ import annotations

import itertools

import pytest

from jobs.local.stack import bootstrap_endpoints
from jobs.settings import JobSettings

_extra_numbers = itertools.count(1)


@pytest.fixture
def extra_stack(stack):  # noqa: ANN001, ANN201
    """A second isolated stage on the session's servers: a clean baseline beside `stack`."""
    settings = JobSettings(stage=f"{stack.settings.stage}b{next(_extra_numbers)}"[:21])
    bootstrap_endpoints(stack.endpoints, settings)
    return type(stack)(settings=settings, endpoints=stack.endpoints)
