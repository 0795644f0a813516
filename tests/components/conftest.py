"""Fixtures for the Pulumi program tests; the mocks live in tests.components.program.

That module is imported here, before any test module imports a component or the program, so
`pulumi.runtime.set_mocks` runs first.
"""

from __future__ import annotations

import pytest

from tests.components.program import ProgramRun, program_run, stack_files


@pytest.fixture(scope="session")
def dev() -> ProgramRun:
    return program_run("dev")


@pytest.fixture(scope="session")
def prod() -> ProgramRun:
    return program_run("prod")


@pytest.fixture(scope="session", params=stack_files())
def every_stack(request: pytest.FixtureRequest) -> ProgramRun:
    return program_run(request.param)
