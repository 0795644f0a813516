"""One way to refuse a command line (issue 45): every registry command, and each of its
subcommands, run through `python -m jobs` in-process with an option it does not take exits 2 with
argparse's usage and exactly one `<prog>: error:` line, before anything runs (no stack here: a
run would fail another way); `--help` exits 0. A plan that cannot be built is refused the same way.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobs.__main__ import main
from jobs.errors import ExitCode
from jobs.registry import JOBS

BAD = "--no-such-option"


def _argvs(with_help: bool) -> list[Any]:
    tail = ["--help"] if with_help else [BAD]
    return [
        pytest.param([spec.name, *sub, *tail], id=" ".join([spec.name, *sub]))
        for spec in JOBS
        for sub in ([], *([s] for s in spec.subcommands))
    ]


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "error:" in line]


@pytest.mark.parametrize("argv", _argvs(with_help=False))
def test_an_unknown_option_exits_2_with_one_error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == ExitCode.BAD_INPUT
    out, err = capsys.readouterr()
    assert err.startswith("usage: python -m jobs "), err
    (line,) = _error_lines(err)
    assert line.startswith("python -m jobs ") and ": error: " in line, line
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("argv", _argvs(with_help=True))
def test_help_exits_0(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == ExitCode.SUCCESS
    out, err = capsys.readouterr()
    assert out.startswith("usage: python -m jobs ") and not _error_lines(err)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["ingest", "drain", "--max-docs", "0"], "--max-docs 0: must be at least 1"),
        (["ingest", "drain", "--idle-seconds", "21"], "--idle-seconds 21: SQS long polls last 0 to 20 s"),
        (["ingest", "backfill", "--shard", "2/2"], "--shard '2/2'"),
        (["reconcile", "files", "--s3-inventory", "m"], "reconcile files needs --dynamodb-export"),
        (["reconcile", "live", "--segments", "65"], "segments: Input should be less than or equal to 64"),
        (["reconcile", "athena", "--dynamodb-export", "/tmp/x"], "give s3:// locations"),
        (["restore-archived", "--user", "u", "--doc", "d", "--days", "0"], "--days must be at least 1"),
        (["review", "claim", "--user", "u", "--doc", "d", "--reviewer", "r", "--set", "vendor=x"], "--set goes"),
        (["documents", "list"], "give --user, --status, or both"),
        (["local", "advance"], "advance needs --to"),
        (["demo", "seed", "--users", "0"], "need users >= 1"),
        (
            ["audit", "actor", "--actor", "reviewer:a", "--since", "2026-02-01", "--until", "2026-01-01"],
            "--since must be before --until",
        ),
    ],
)
def test_a_plan_that_cannot_be_built_is_refused_the_same_way(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m jobs ")
    (line,) = _error_lines(err)
    assert line.startswith(f"python -m jobs {argv[0]}") and says in line, line
