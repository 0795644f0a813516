"""`python -m jobs <command>`: the one entry point of the job image and of developers' shells.

The commands are the job registry's (jobs.registry); each lives in its own module with a
`main(argv) -> int`, imported only when called, so `local` and `extract` start without loading
boto3 clients or polars. A command whose module the image does not carry (`local`, `demo`: the
dev stack's) says so instead of a traceback. A module that fails to import in the image (a
broken build, a missing library) exits INTERNAL (70) with its traceback, never Python's own 1,
which the exit map reads as "findings" and the failed-task rule leaves quiet.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from types import ModuleType

from jobs.errors import ExitCode
from jobs.registry import JOBS
from jobs.runtime.registry import JobSpec


def _usage(jobs: tuple[JobSpec, ...]) -> str:
    lines = ["usage: python -m jobs <command> [options]", "", "commands:"]
    width = max(len(spec.name) for spec in jobs)
    lines += [f"  {spec.name:<{width}}  {spec.help}" for spec in jobs]
    return "\n".join(lines)


def main(argv: list[str] | None = None, jobs: tuple[JobSpec, ...] = JOBS) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(_usage(jobs))
        return 0 if args else 2
    command, rest = args[0], args[1:]
    spec = next((s for s in jobs if s.name == command), None)
    if spec is None:
        print(f"unknown command {command!r}\n\n{_usage(jobs)}", file=sys.stderr)
        return 2
    module = _load(spec)
    if isinstance(module, ExitCode):
        return int(module)
    return int(module.main(rest))


def _load(spec: JobSpec) -> ModuleType | ExitCode:
    try:
        return importlib.import_module(spec.module)
    except ModuleNotFoundError as exc:
        if not spec.in_image and exc.name is not None and spec.module.startswith(exc.name):
            print(f"{spec.name}: a development command, not in this image", file=sys.stderr)
            return ExitCode.BAD_INPUT
        return _broken(spec)
    except Exception:
        return _broken(spec)


def _broken(spec: JobSpec) -> ExitCode:
    traceback.print_exc()
    print(f"{spec.name}: {spec.module} does not import in this image (exit 70, INTERNAL)", file=sys.stderr)
    return ExitCode.INTERNAL


if __name__ == "__main__":
    sys.exit(main())
