"""A run that ends with an exception no domain error covers exits 70, with its traceback logged."""

from __future__ import annotations

import pytest

from jobs.errors import ExitCode
from jobs.runtime import RunContext, run_job
from jobs.settings import JobSettings


def _bug(_context: RunContext) -> int:
    raise KeyError("a key the code forgot")


def test_an_unexpected_exception_exits_internal_with_its_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_job("ingest", _bug, settings=JobSettings(stage="t"))
    assert code == ExitCode.INTERNAL == 70
    err = capsys.readouterr().err
    assert "unexpected error (a bug)" in err
    # The job's log (JSON lines off a terminal) holds the traceback.
    assert "Traceback" in err and "KeyError: 'a key the code forgot'" in err
