"""Adding a job is one new package and one registry entry: the example job appears in `python -m
jobs --help`, runs through the run context (its run id, the one exit-code map, the stop) and, in
tests/components/test_components.py, gets its task definition.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from jobs.__main__ import main
from jobs.errors import ExitCode
from jobs.registry import JOBS
from tests.jobs.runtime.example_job import ENTRY, write_package

WITH_EXAMPLE = (*JOBS, ENTRY)


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))


def test_the_example_job_is_listed_and_runs_in_a_context(example: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"], WITH_EXAMPLE) == 0
    assert "  hello  " in capsys.readouterr().out
    assert main(["hello", "greet"], WITH_EXAMPLE) == ExitCode.SUCCESS
    assert re.fullmatch(r"hello from run \d{8}T\d{6}Z-[0-9a-f]{8}\n", capsys.readouterr().out)
    assert main(["hello", "refuse"], WITH_EXAMPLE) == ExitCode.BAD_INPUT
    assert capsys.readouterr().err.strip().endswith("error: not this one")
    assert main(["hello", "stop"], WITH_EXAMPLE) == ExitCode.SIGTERM
    assert "stopped: stopped by SIGTERM before its second step" in capsys.readouterr().err


def test_without_its_entry_there_is_no_such_command(example: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hello", "greet"]) == 2
    assert "unknown command 'hello'" in capsys.readouterr().err


def test_a_job_module_that_does_not_import_exits_internal_not_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A broken image: the job's module raises on import (a library missing, a syntax error shipped).
    package = tmp_path / "broken_job"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cli.py").write_text("import not_a_library_anywhere  # noqa\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    broken = dataclasses.replace(ENTRY, name="broken", module="broken_job.cli", tasks=())
    assert main(["broken"], (*JOBS, broken)) == ExitCode.INTERNAL == 70
    err = capsys.readouterr().err
    assert "ModuleNotFoundError" in err and "broken_job.cli does not import" in err
