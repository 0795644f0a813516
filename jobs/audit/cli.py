"""`python -m jobs audit history --user U --doc D` | `audit actor --actor A --since T --until T`.

Prints one JSON object: the question, the engine, `records` (oldest first; each with its version,
actor, time, status before and after, the attributes it changed; copies of one delivered record
counted once, `duplicatesRemoved` says how many) and `anomalies`. `--engine duckdb` (the default)
reads the stage's change log from S3 into an embedded DuckDB; `--engine athena` asks Athena in the
stack's audit workgroup (DOCUFLOW_AUDIT_WORKGROUP, DOCUFLOW_TRAIL_DATABASE). Exit codes are the
jobs' one map (jobs.errors.ExitCode): 0 with an answer (an empty one too), 2 for bad options or a
failed query, 3 when AWS is unreachable, 143/130 when stopped by a signal.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime

from jobs.audit import questions
from jobs.audit.engines import ENGINES, AthenaAudit, AuditEngine, local_engine
from jobs.audit.job import JOB
from jobs.audit.sql import DELIVERY_SLACK
from jobs.contract import layout
from jobs.contract.actors import check_actor
from jobs.errors import ExitCode
from jobs.observability import CallMetrics
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.runtime.stores import buckets
from jobs.settings import JobSettings
from jobs.store.athena import AthenaQueries
from jobs.store.clients import athena_client


def moment(text: str) -> datetime:
    """ISO-8601 with a time zone, or a date (midnight UTC)."""
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO-8601 time or date") from exc
    if parsed.tzinfo is None and len(text) > len("2026-01-01"):
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone (add Z or +01:00)")
    return parsed.replace(tzinfo=parsed.tzinfo or UTC)


def _id(kind: str) -> Callable[[str], str]:
    """An argparse type: the contract's id rules, the reason in the one-line error."""

    def check(text: str) -> str:
        try:
            return layout.validate_id(text, kind)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    return check


def _actor(text: str) -> str:
    try:
        return check_actor(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs audit", description=__doc__)
    p.add_argument("--engine", choices=ENGINES, default="duckdb")
    sub = p.add_subparsers(dest="question", required=True)
    history = sub.add_parser("history", help="one document's timeline")
    history.add_argument("--user", required=True, type=_id("userId"))
    history.add_argument("--doc", required=True, type=_id("documentId"))
    actor = sub.add_parser("actor", help="what one actor changed in a period")
    actor.add_argument(
        "--actor", required=True, type=_actor, help="kind:id, e.g. reviewer:alice or ttl:dynamodb.amazonaws.com"
    )
    actor.add_argument("--since", required=True, type=moment)
    actor.add_argument("--until", required=True, type=moment)
    return p


@contextmanager
def engine_for(
    name: str, settings: JobSettings, days: tuple[date, date] | None, calls: CallMetrics | None = None
) -> Iterator[AuditEngine]:
    metrics = calls or CallMetrics()
    if name == "athena":
        client = athena_client(settings)
        yield AthenaAudit(
            AthenaQueries(client, settings.audit.audit_workgroup, settings.audit.trail_database, metrics),
            settings.audit.trail_database,
        )
        return
    with local_engine(buckets(settings, metrics), settings, days) as engine:
        yield engine


def _checked(args: argparse.Namespace) -> argparse.Namespace:
    if args.question == "actor" and args.since >= args.until:
        raise ValueError("--since must be before --until")
    return args


def _ask(context: RunContext, args: argparse.Namespace) -> int:
    settings = context.settings
    if args.question == "history":
        with engine_for(args.engine, settings, None, context.calls) as engine:
            answer = questions.history(engine, args.user, args.doc)
    else:
        days = (args.since.date(), (args.until + DELIVERY_SLACK).date())
        with engine_for(args.engine, settings, days, context.calls) as engine:
            answer = questions.by_actor(engine, args.actor, args.since, args.until)
    context.stop.check("during the query (it wrote nothing)")
    print(json.dumps(answer.to_json(), indent=2))
    return ExitCode.SUCCESS


CLI = Cli(JOB, parser, _checked, _ask)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
