"""`python -m jobs local up | down | status | flush-audit`; `eval "$(python -m jobs local up)"` configures a shell.

`flush-audit` makes the audit stand-in deliver the change log now (it buffers like Firehose).
"""

from __future__ import annotations

import argparse
import json
import sys

from jobs.errors import DocuFlowError
from jobs.local import stack
from jobs.settings import JobSettings


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs local", description=__doc__)
    parser.add_argument("action", choices=["up", "down", "status", "flush-audit"])
    args = parser.parse_args(argv)
    try:
        if args.action == "up":
            settings = JobSettings.from_env()
            endpoints, settings, info = stack.up(settings)
            print(
                f"# local stack ready in {info['seconds']}s; data lives in memory: `local down` discards it",
                file=sys.stderr,
            )
            print(stack.exports(endpoints, settings))
        elif args.action == "down":
            stopped = stack.down()
            print("stopped: " + (", ".join(stopped) or "nothing was running"), file=sys.stderr)
        elif args.action == "flush-audit":
            print(json.dumps(stack.flush_audit(), indent=2))
        else:
            print(json.dumps(stack.status(), indent=2))
    except DocuFlowError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
