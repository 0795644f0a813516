"""`python -m jobs local up | down | status | flush-audit | export-table | advance --to DATE`.

`eval "$(python -m jobs local up)"` configures a shell. `flush-audit` makes the audit stand-in
deliver the change log now (it buffers like Firehose). `export-table` stands in for DynamoDB's
table export (DynamoDB Local has none): it prints where it wrote a full export of the stage's
table, the source `python -m jobs drill` restores from locally. `advance --to 2031-12-01` applies
the table's TTL and the buckets' lifecycle rules as AWS would have by that date
(jobs.local.standins; the stand-in's clock only moves forward).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from botocore.exceptions import BotoCoreError, ClientError

from jobs.errors import ExitCode, LocalStackError
from jobs.local import stack
from jobs.local.standins.advance import advance
from jobs.registry import LOCAL
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client


def _date(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs local", description=__doc__)
    p.add_argument("action", choices=["up", "down", "status", "flush-audit", "export-table", "advance"])
    p.add_argument("--to", type=_date, help="advance: the date to move the stage to (YYYY-MM-DD, UTC)")
    return p


def _checked(args: argparse.Namespace) -> argparse.Namespace:
    if args.action == "advance" and args.to is None:
        raise ValueError("advance needs --to YYYY-MM-DD")
    return args


def _run(context: RunContext, args: argparse.Namespace) -> int:
    settings = context.settings
    if args.action == "up":
        endpoints, settings, info = stack.up(settings)
        print(
            f"# local stack ready in {info['seconds']}s; data lives in memory: `local down` discards it",
            file=sys.stderr,
        )
        print(stack.exports(endpoints, settings))
    elif args.action == "down":
        stopped = stack.down()
        print("stopped: " + (", ".join(stopped) or "nothing was running"), file=sys.stderr)
    elif args.action == "advance":
        state = stack.state_dir() / stack.STANDINS_DIR / f"{settings.stage}.json"
        done = advance(settings, args.to, dynamodb_client(settings), s3_client(settings), state)
        print(json.dumps(done.summary(), indent=2))
    elif args.action == "flush-audit":
        print(json.dumps(stack.flush_audit(), indent=2))
    elif args.action == "export-table":
        print(_export_table(settings))
    else:
        print(json.dumps(stack.status(), indent=2))
    return ExitCode.SUCCESS


CLI = Cli(LOCAL, parser, _checked, _run)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)


def _export_table(settings: JobSettings) -> str:
    from jobs.local.table_export import export_table

    try:
        return export_table(settings, dynamodb_client(settings), s3_client(settings), stack.REGION)
    except (BotoCoreError, ClientError) as exc:
        raise LocalStackError(f"export of {settings.store.table_name} failed: {exc}") from exc
