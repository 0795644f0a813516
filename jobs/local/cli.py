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

from jobs.errors import DocuFlowError, LocalStackError
from jobs.local import stack
from jobs.local.standins.advance import advance
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client


def _date(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs local", description=__doc__)
    parser.add_argument("action", choices=["up", "down", "status", "flush-audit", "export-table", "advance"])
    parser.add_argument("--to", type=_date, help="advance: the date to move the stage to (YYYY-MM-DD, UTC)")
    args = parser.parse_args(argv)
    if args.action == "advance" and args.to is None:
        parser.error("advance needs --to YYYY-MM-DD")
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
        elif args.action == "advance":
            settings = JobSettings.from_env()
            done = advance(
                settings,
                args.to,
                dynamodb_client(settings),
                s3_client(settings),
                stack.state_dir() / stack.STANDINS_DIR / f"{settings.stage}.json",
            )
            print(json.dumps(done.summary(), indent=2))
        elif args.action == "flush-audit":
            print(json.dumps(stack.flush_audit(), indent=2))
        elif args.action == "export-table":
            print(_export_table())
        else:
            print(json.dumps(stack.status(), indent=2))
    except ValueError as exc:  # bad settings or dates (SettingsError among them)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except DocuFlowError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _export_table() -> str:
    from jobs.local.table_export import export_table
    from jobs.store.clients import dynamodb_client, s3_client

    settings = JobSettings.from_env()
    try:
        return export_table(settings, dynamodb_client(settings), s3_client(settings), stack.REGION)
    except (BotoCoreError, ClientError) as exc:
        raise LocalStackError(f"export of {settings.store.table_name} failed: {exc}") from exc
