"""A run that ends with an exception no domain error covers exits 70, with its traceback logged: a
pydantic, JSON or Unicode error of our own code among them; refused input still exits 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from pydantic import BaseModel

from jobs.contract import layout
from jobs.erasure import cli as erasure_cli
from jobs.errors import ExitCode, ReconcileInputError
from jobs.ingest import cli as ingest_cli
from jobs.ingest import job as ingest_job
from jobs.runtime.context import Cli, RunContext, run_in_context, run_job
from jobs.settings import JobSettings


def _bug(_context: RunContext) -> int:
    raise KeyError("a key the code forgot")


def test_an_unexpected_exception_exits_internal_with_its_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_in_context("ingest", _bug, settings=JobSettings(stage="t"))
    assert code == ExitCode.INTERNAL == 70
    err = capsys.readouterr().err
    assert "unexpected error (a bug)" in err
    # The job's log (JSON lines off a terminal) holds the traceback.
    assert "Traceback" in err and "KeyError: 'a key the code forgot'" in err


class _Model(BaseModel):
    total: int


def _validation(_context: RunContext) -> int:
    _Model.model_validate({"total": "not a number"})  # our own model, over data the code read
    return 0


def _json(_context: RunContext) -> int:
    json.loads(b"{truncated")
    return 0


def _unicode(_context: RunContext) -> int:
    b"\xff\xfe\xfa".decode("utf-8")
    return 0


@pytest.mark.parametrize("body", [_validation, _json, _unicode], ids=["pydantic", "json", "unicode"])
def test_a_pydantic_json_or_unicode_error_of_our_own_code_is_internal_not_bad_input(
    body: Callable[[RunContext], int], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_in_context("reconcile", body, settings=JobSettings(stage="t")) == ExitCode.INTERNAL
    assert "Traceback" in capsys.readouterr().err


def _bad_id(_context: RunContext) -> int:
    layout.validate_id("a#b", "userId")
    return 0


def _damaged(_context: RunContext) -> int:
    raise ReconcileInputError("the export's manifest is damaged")


@pytest.mark.parametrize("body", [_bad_id, _damaged], ids=["id", "domain-error"])
def test_refused_input_still_exits_bad_input_in_one_line(
    body: Callable[[RunContext], int], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_in_context("ingest", body, settings=JobSettings(stage="t")) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_argparse_refusals_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert erasure_cli.main([]) == ExitCode.BAD_INPUT == 2
    assert "error: the following arguments are required: --user" in capsys.readouterr().err


def _never(_context: RunContext, _plan: object) -> int:
    raise AssertionError("a refused plan never runs")


def test_an_option_the_plan_refuses_exits_2_in_one_line_before_any_run(capsys: pytest.CaptureFixture[str]) -> None:
    cli = Cli(ingest_job.JOB, ingest_cli.parser, ingest_cli.plan_of, _never)
    assert run_job(cli, ["drain", "--max-docs", "0"], settings=JobSettings(stage="t")) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m jobs ingest")
    (line,) = [x for x in err.splitlines() if "error:" in x]
    assert line == "python -m jobs ingest: error: --max-docs 0: must be at least 1"
