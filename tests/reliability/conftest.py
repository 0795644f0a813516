"""Fixtures of the reliability tests (helpers live in reliability_helpers.py)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jobs.local.stack import bootstrap_endpoints
from jobs.settings import JobSettings

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
_numbers = itertools.count(1)


@pytest.fixture(scope="module")
def new_stage(request: pytest.FixtureRequest, local_servers, audit_pipes) -> Iterator[Callable[..., object]]:
    """Make further isolated stages on the session's servers (module-wide runs, clean baselines),
    each with its change log (delivered when the module ends).
    """
    stack_type = request.config.pluginmanager.get_plugin(str(ROOT_CONFTEST)).Stack
    made: list[str] = []

    def make(**settings_values: object) -> object:
        settings = JobSettings(stage=f"r{os.getpid() % 1000}y{next(_numbers)}").changed(**settings_values)
        settings = bootstrap_endpoints(local_servers.endpoints, settings)
        made.append(settings.stage)
        return stack_type(settings=settings, endpoints=local_servers.endpoints, audit_pipe=audit_pipes.watch(settings))

    yield make
    for stage in made:
        try:
            audit_pipes.flush(stage)
        finally:
            audit_pipes.forget(stage)


@pytest.fixture
def extra_stack(stack, new_stage: Callable[..., object]) -> object:
    """A second isolated stage beside `stack` (same OCR engine): the clean baseline of a comparison."""
    return new_stage(ocr_engine=stack.settings.extraction.ocr_engine)
