"""The run context every job runs in, and `run_job`, the one way a CLI runs one.

A CLI module declares its command line once, `CLI = Cli(job, parser, plan, run)`, and its
`main(argv)` is `run_job(CLI, argv)`. `run_job` parses the arguments and builds the plan: argparse's
refusal, or arguments that name no plan (the plan's ValueError, pydantic's among them), is
refused one way: argparse's usage and one `error:` line, exit 2 (`--help` exits 0). Then
`run_in_context(job, body)` sets up logging, installs the stop on SIGTERM/SIGINT, reads the
settings, makes the context (one run id, the run's call metrics, the stop flag, the adapters:
`table()`, `buckets`, `arrivals`) and calls `run(context, plan)`; whatever it returns is the exit code. Its
outcome maps to one exit code for every job (jobs.errors.ExitCode): a domain error or a run's
ValueError is printed as one line and mapped by `exit_code_for` (bad input 2, AWS unreachable 3,
not settled 4), anything else (a pydantic, JSON or Unicode error of our own code among them) is 70
with its traceback; RunStoppedError is 128 + the signal (143, 130), after the job handed back what
it held. The metrics the body hands the context (`publish`, `record`) are published once when the
run ends, whatever its outcome, in one PutMetricData (jobs.runtime.run_metrics). Only a run the
schedule started (`settings.run.scheduled_time` set: EventBridge Scheduler alone sets
DOCUFLOW_SCHEDULED_TIME) is a scheduled job's Heartbeat; a run a person started (a `reconcile
live`, an `ingest backfill`) publishes ManualRuns in its place, so it cannot hide a night the
schedule missed. Whether a schedule starts the job is its declaration's (`Cli.job`, a
JobSpec: JobSpec.scheduled). A context outside `run_job` (`RunContext.of(settings)`, a test
building a run by hand) is a plain value: a run id, calls and a stop flag, no signal handlers,
nothing published.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Generic, TypeVar

from pydantic import ValidationError

from jobs.contract import layout
from jobs.contract.metrics import Datum, Metric, RunMetrics, Unit
from jobs.errors import ExitCode, RunStoppedError, exit_code_for
from jobs.observability import CallMetrics, setup_logging
from jobs.runtime.ids import new_run_id
from jobs.runtime.registry import JobSpec
from jobs.runtime.signals import StopFlag
from jobs.settings import JobSettings

if TYPE_CHECKING:
    from jobs.store.dynamo import DocumentTable
    from jobs.store.queue import ArrivalQueue
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)


@dataclass
class RunContext:
    """One run of one job: its settings, id, call metrics, stop flag and the metrics it publishes."""

    job: str
    settings: JobSettings
    run_id: str = ""
    started_at: datetime = field(default_factory=layout.utc_now)
    calls: CallMetrics = field(default_factory=CallMetrics)
    stop: StopFlag = field(default_factory=StopFlag)
    published: list[RunMetrics] = field(default_factory=list)
    # Whether a schedule starts this job (JobSpec.scheduled): its Heartbeat is then the schedule's.
    scheduled_job: bool = False

    def __post_init__(self) -> None:
        self.run_id = self.run_id or new_run_id(self.started_at)

    @classmethod
    def of(cls, settings: JobSettings, job: JobSpec | None = None, run_id: str = "") -> RunContext:
        """A context of `job` (its name, whether a schedule starts it) outside `run_job`."""
        if job is None:
            return cls("", settings, run_id=run_id)
        return cls(job.name, settings, run_id=run_id, scheduled_job=job.scheduled)

    @property
    def seconds(self) -> float:
        return (layout.utc_now() - self.started_at).total_seconds()

    def table(self, name: str | None = None) -> DocumentTable:
        """The stack's document table (or the table `name`), counted in the run's calls."""
        # Imported here: the registry's readers (`python -m jobs --help`, the Pulumi program)
        # import this package and need no boto3; the first run that reaches AWS loads it.
        from jobs.runtime.stores import document_table

        return document_table(self.settings, self.calls, table_name=name)

    @cached_property
    def buckets(self) -> Buckets:
        """The stack's buckets on one S3 client, counted in the run's calls (built on first use)."""
        from jobs.runtime.stores import buckets  # boto3: see `table`

        return buckets(self.settings, self.calls)

    @cached_property
    def arrivals(self) -> ArrivalQueue | None:
        """The stack's arrival queue (None: it has none), counted in the run's calls."""
        from jobs.runtime.stores import arrivals  # boto3: see `table`

        return arrivals(self.settings, self.calls)

    @property
    def scheduled(self) -> bool:
        """Whether the schedule started this run (else a person did)."""
        return self.settings.run.scheduled_time is not None

    def publish(self, run: RunMetrics) -> None:
        """Hand the run's metrics over: published once, when the run ends (a manual run's
        heartbeat as ManualRuns: `as_manual_run`).
        """
        self.published.append(run if self.scheduled or not self.scheduled_job else as_manual_run(run))

    def record(self, job: str, data: Iterable[Datum], *, completed: bool = True) -> None:
        """`data` plus the run's duration, and a heartbeat when it completed (an aborted run is none)."""
        extra = [Datum(metric=Metric.DURATION, value=round(self.seconds, 3), unit=Unit.SECONDS)]
        if completed:
            extra.append(Datum(metric=Metric.HEARTBEAT, value=1))
        self.publish(RunMetrics(job=job, data=(*data, *extra)))

    def flush(self, at: datetime | None = None) -> None:
        """Publish what the run handed over, stamped `at` (default: now, the run's end); a failed
        publish is logged, never the run's failure.
        """
        if not self.published:
            return
        from jobs.runtime import run_metrics  # boto3: see `table`

        at = at or layout.utc_now()
        for run in self.published:
            run_metrics.publish(self.settings, run, at, self.calls)
        self.published.clear()


def as_manual_run(run: RunMetrics) -> RunMetrics:
    """`run` as a person's run of a scheduled job publishes it: that job's Heartbeat is the
    schedule's alone, so the run's becomes ManualRuns (the jobs only run by hand keep theirs).
    """
    data = tuple(
        d.model_copy(update={"metric": Metric.MANUAL_RUNS}) if d.metric is Metric.HEARTBEAT else d for d in run.data
    )
    return run.model_copy(update={"data": data})


Body = Callable[[RunContext], int]
P = TypeVar("P")


@dataclass(frozen=True)
class Cli(Generic[P]):
    """A job's command line: its parser, how the parsed arguments become its plan (a ValueError:
    they name none), and the run of that plan in its context (the exit code).
    """

    job: JobSpec  # its registry entry: the context's job, its logs, whether a schedule starts it
    parser: Callable[[], argparse.ArgumentParser]
    plan: Callable[[argparse.Namespace], P]
    run: Callable[[RunContext, P], int]


def run_job(cli: Cli[P], argv: list[str], *, settings: JobSettings | None = None) -> int:
    """`argv` parsed into `cli`'s plan and run in a fresh context of its job; the exit code
    (jobs.errors.ExitCode): 0 for `--help`, 2 for arguments refused (argparse's usage, one line).
    """
    parser = cli.parser()
    try:
        args = parser.parse_args(argv)
        try:
            plan = cli.plan(args)
        except ValueError as exc:
            parser.error(one_line(exc))
    except SystemExit as exc:  # argparse: --help is 0, a refusal 2
        return int(exc.code or 0)
    return run_in_context(
        cli.job.name, lambda context: cli.run(context, plan), settings=settings, scheduled_job=cli.job.scheduled
    )


def one_line(exc: ValueError) -> str:
    """A refusal as one line: pydantic's errors joined, each with the option it is about (a plan's
    field is its option: `segments` is `--segments`, `audit.window` is `--audit-window`).
    """
    if isinstance(exc, ValidationError):
        return "; ".join(
            _option(e["loc"]) + ": " + e["msg"] if e["loc"] else e["msg"].removeprefix("Value error, ")
            for e in exc.errors()
        )
    return str(exc)


def _option(loc: tuple[int | str, ...]) -> str:
    return "--" + "-".join(str(part).replace("_", "-") for part in loc)


def run_in_context(job: str, body: Body, *, settings: JobSettings | None = None, scheduled_job: bool = False) -> int:
    """Run `body` in a fresh context of `job` (a schedule starts it: `scheduled_job`); its exit
    code (jobs.errors.ExitCode).
    """
    setup_logging()
    stop = StopFlag()
    context: RunContext | None = None
    with stop.installed():
        try:
            context = RunContext(job, settings or JobSettings.from_env(), stop=stop, scheduled_job=scheduled_job)
            return int(body(context))
        except RunStoppedError as exc:
            print(f"stopped: {exc}; what the run held was handed back", file=sys.stderr)
            return int(stop.exit_code)
        except Exception as exc:
            if exit_code_for(exc) != ExitCode.INTERNAL:
                return int(report_error(exc))
            # A bug, or data our own code could not read (a pydantic, JSON or Unicode error no
            # domain error covers): never "bad input", which tells the caller to fix the call.
            logger.exception("the run ended with an unexpected error", extra={"job": job})
            print("error: an unexpected error (a bug): the traceback is in the log above", file=sys.stderr)
            return int(ExitCode.INTERNAL)
        finally:
            if context is not None:
                context.flush()


def report_error(exc: BaseException) -> int:
    """One line on stderr for a run that ended with `exc`; its exit code."""
    code = exit_code_for(exc)
    detail = f"{type(exc).__name__}: {exc}" if code == ExitCode.UNAVAILABLE else str(exc)
    print(f"error: {detail}", file=sys.stderr)
    return int(code)
