"""What a job declares: `JobSpec`, one `python -m jobs <command>`, and the ECS tasks it runs as.

Each job package declares its own in `jobs/<package>/job.py` (its CLI module, subcommands, the
metrics it publishes and the alarms on them, its tasks); `jobs.registry` lists them, and
`jobs/__main__.py` and the Pulumi program read that list, so the CLI and the stack cannot drift
apart (tests/jobs/runtime proves it).

A task carries its role's policy builder and the hooks that shape its container (its command,
its environment) as function references: the Pulumi program calls them with what the stack
resolved (`TaskResources`, `TaskStack`), and never names a builder, a setting or a job by a
string. Pure: no boto3, no pulumi.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from jobs.contract.alarms import AlarmInputs, AlarmSpec, heartbeat, nightly
from jobs.contract.engines import ReconcileEngine
from jobs.contract.erasure import DataHoldings
from jobs.contract.iam import Policy, TaskResources
from jobs.contract.metrics import Metric


@dataclass(frozen=True)
class TaskSize:
    """Fargate CPU units and memory (MiB): the registry's, or a stack's override of a task's."""

    cpu: int = 1024
    memory: int = 2048


@dataclass(frozen=True)
class Schedule:
    """When EventBridge Scheduler starts the task: `default` unless the stack sets the task's
    expression. Tasks may share a schedule (`name`) as alternatives, of which the stack starts
    one: `enabled` says whether this one is started unless the stack says otherwise.
    """

    name: str
    default: str
    enabled: bool = True


@dataclass(frozen=True)
class TaskStack:
    """What the stack tells a task's container beyond JOB_ENV_VARS (jobs.settings), for the tasks'
    own command and environment hooks: each picks what its job reads.
    """

    image: str  # by digest: `<repository>@sha256:…`
    table_arn: str
    reconcile_engine: str = ReconcileEngine.POLARS
    # The scheduled drain stops taking work after this many minutes; None: until the queue is empty.
    drain_minutes: int | None = None
    ocr_engine: str | None = None
    textract_max_pages: int = 0  # per night, every ingest task's together; 0: no cap
    textract_fallback: bool = False
    holdings: DataHoldings = field(default_factory=DataHoldings)
    # The nightly chain's re-anchor, catch-up and table-state days, by their environment names.
    chain: Mapping[str, int] = field(default_factory=dict)
    signing_key_arn: str | None = None
    reports_topic_arn: str | None = None


Command = Callable[[tuple[str, ...], TaskStack], tuple[str, ...]]
Environment = Callable[[TaskStack], Mapping[str, str]]
Alarms = Callable[[AlarmInputs], tuple[AlarmSpec, ...]]


@dataclass(frozen=True)
class TaskSpec:
    """One ECS task definition (with its task role and log group) a job runs as."""

    name: str
    command: tuple[str, ...]  # after the entrypoint `python -m jobs`, as a person starts it
    policy: Callable[[TaskResources], Policy]  # the task role's policy
    size: TaskSize
    schedule: Schedule | None = None
    # The command the task definition runs, from `command` and the stack (an engine, a bound).
    command_for: Command | None = None
    environment: Environment | None = None  # the settings beside JOB_ENV_VARS only this job reads

    def container_command(self, stack: TaskStack) -> tuple[str, ...]:
        return self.command_for(self.command, stack) if self.command_for else self.command

    def container_environment(self, stack: TaskStack) -> Mapping[str, str]:
        return self.environment(stack) if self.environment else {}


@dataclass(frozen=True)
class JobSpec:
    name: str  # the command: `python -m jobs <name>`
    module: str  # its CLI module, with `main(argv: list[str]) -> int`, imported only when it runs
    help: str  # one line, for `python -m jobs --help`
    subcommands: tuple[str, ...] = ()  # its modes and actions, argparse subcommands of the CLI
    in_image: bool = True  # False: the dev stack's, which the job image does not carry
    publishes: str | None = None  # the Job dimension of the metrics its run context publishes
    # What its runs publish beyond every run's Heartbeat (or ManualRuns) and DurationSeconds.
    metrics: tuple[Metric, ...] = ()
    alarms: Alarms | None = None  # its alarms, from what the stack decided (beside its heartbeat's)
    tasks: tuple[TaskSpec, ...] = ()

    @property
    def scheduled(self) -> bool:
        """Whether a schedule starts it: its Heartbeat is then the schedule's alone, and a run a
        person starts publishes ManualRuns instead (jobs.runtime.context).
        """
        return any(task.schedule is not None for task in self.tasks)

    @property
    def published(self) -> tuple[Metric, ...]:
        """Every metric its runs publish (the dashboard draws them)."""
        if self.publishes is None:
            return ()
        manual = (Metric.MANUAL_RUNS,) if self.scheduled else ()
        return (Metric.HEARTBEAT, Metric.DURATION, *self.metrics, *manual)

    def declared_alarms(self, inputs: AlarmInputs) -> tuple[AlarmSpec, ...]:
        """Its alarms on a stack that starts `inputs.schedules`: its heartbeat's where one of them
        starts it nightly (a rarer job is watched by a figure of its own), then its declared ones.
        """
        started = [
            t.schedule.name for t in self.tasks if t.schedule is not None and t.schedule.name in inputs.schedules
        ]
        own = self.alarms(inputs) if self.alarms is not None else ()
        if self.publishes is None or not any(nightly(inputs.schedules[name]) for name in started):
            return own
        return (heartbeat(self.publishes), *own)
