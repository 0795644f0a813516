"""A small example job, to show that adding a job is one new package and one registry entry.

`write_package` writes the package (its CLI, in the runtime's style) into a directory put on
sys.path; `ENTRY` is its registry entry, with one task definition. tests/jobs/runtime shows it in
`python -m jobs --help` and runs it through the context; tests/components shows the stack build
its task definition, role and log group from the entry alone.
"""

from __future__ import annotations

from pathlib import Path

from jobs.documents.policy import legal_hold_task_policy
from jobs.runtime.registry import JobSpec, TaskSize, TaskSpec

PACKAGE = "hellojob"
CLI = '''"""`python -m jobs hello greet|refuse|stop`: an example job."""

from __future__ import annotations

import argparse

from jobs.errors import LifecycleRefusedError
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.runtime.registry import JobSpec


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs hello")
    p.add_argument("mode", choices=["greet", "refuse", "stop"])
    return p


def _run(context: RunContext, mode: str) -> int:
    if mode == "refuse":
        raise LifecycleRefusedError("not this one")
    if mode == "stop":
        context.stop.request()  # as SIGTERM does
        context.stop.check("before its second step")
    print(f"hello from run {context.run_id}")
    return 0


CLI = Cli(JobSpec("hello", "hellojob.cli", "an example job"), parser, lambda args: str(args.mode), _run)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
'''

ENTRY = JobSpec(
    "hello",
    f"{PACKAGE}.cli",
    "an example job",
    subcommands=("greet", "refuse", "stop"),
    tasks=(TaskSpec("hello", ("hello", "greet"), legal_hold_task_policy, TaskSize(256, 512)),),
)


def write_package(root: Path) -> None:
    package = root / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text('"""An example job."""\n')
    (package / "cli.py").write_text(CLI)
