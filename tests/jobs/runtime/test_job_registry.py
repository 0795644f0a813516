"""The job registry and the CLIs agree: every entry's module exists and parses exactly the
subcommands the entry declares, `--help` works for each, every task's command (as the stack
builds it) parses, and `python -m jobs --help` lists every entry. The task definitions' side is
tests/components/test_components.py (the mocked Pulumi graph).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from components import job_containers
from jobs.registry import JOBS, tasks
from jobs.runtime.registry import JobSpec

REPO_ROOT = Path(__file__).resolve().parents[3]


class Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


@contextmanager
def _first_parser() -> Iterator[None]:
    """The first parser a CLI's main asks to parse is raised as Captured, before it runs anything."""
    original = argparse.ArgumentParser.parse_args

    def capture(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise Captured(self)

    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]


def parser_of(spec: JobSpec) -> argparse.ArgumentParser:
    module = importlib.import_module(spec.module)
    with _first_parser(), pytest.raises(Captured) as caught:
        module.main(["--help"])
    return caught.value.parser


def modes(parser: argparse.ArgumentParser) -> set[str]:
    """The subcommands (or the positional choice of action) the parser takes first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
        if not action.option_strings and action.choices is not None:
            return {str(c) for c in action.choices}
    return set()


def _exit_code(spec: JobSpec, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    module = importlib.import_module(spec.module)
    try:
        code = module.main(argv)
    except SystemExit as exc:
        code = exc.code
    return int(code or 0), capsys.readouterr().out


@pytest.mark.parametrize("spec", JOBS, ids=[s.name for s in JOBS])
def test_each_cli_parses_exactly_the_subcommands_its_entry_declares(spec: JobSpec) -> None:
    assert modes(parser_of(spec)) == set(spec.subcommands)


@pytest.mark.parametrize("spec", JOBS, ids=[s.name for s in JOBS])
def test_help_exits_0_for_each_job_and_each_subcommand(spec: JobSpec, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], *([sub, "--help"] for sub in spec.subcommands)):
        code, out = _exit_code(spec, argv, capsys)
        assert code == 0, argv
        assert "usage:" in out, argv


def _commands() -> list[Any]:
    """Every task's command as the stack can build it: each reconcile engine, the drain bounded."""
    return [
        pytest.param(name, job_containers.job_command(name, engine, 90), id=f"{name}-{engine}")
        for name in tasks()
        for engine in job_containers.RECONCILE_ENGINES
    ]


@pytest.mark.parametrize(("task", "command"), _commands())
def test_each_task_runs_a_command_its_cli_parses(task: str, command: list[str]) -> None:
    spec, _ = tasks()[task]
    assert command[0] == spec.name
    parser = parser_of(spec)
    if spec.subcommands and command[1:]:
        assert command[1] in spec.subcommands  # a mode the entry declares (and so the CLI parses)
    if spec.name == "documents":
        command = [*command, *(["--user", "u", "--doc", "d", "--operator", "o"] if "hold" in command else [])]
        if command == ["documents"]:
            return  # started with an override naming the action (the task definition names none)
    if spec.name == "erase":
        command = [*command, "--user", "u"]  # the override names the user
    parser.parse_args(command[1:])  # exits 2 (SystemExit) when the CLI refuses it


def test_python_m_jobs_help_lists_every_entry() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jobs", "--help"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")]
    assert listed == [spec.name for spec in JOBS]


def test_metrics_come_from_the_contract_and_tasks_have_unique_names() -> None:
    from jobs.registry import published

    assert {spec.publishes for spec in JOBS if spec.publishes is not None} == set(published())
    assert len(tasks()) == sum(len(spec.tasks) for spec in JOBS) == len(job_containers.registered_tasks())
    assert {spec.name for spec in JOBS if not spec.in_image} == {"local", "demo"}
