"""The batch task sections: the image the tasks run, where and how big they run, and when the
scheduler starts them. Sizes and schedules are maps keyed by the registry's names
(jobs.runtime.registry), so a task the registry gains is configurable without a new key.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator

from components.schedules import MIN_DRAIN_MINUTES, ScheduleError, drain_minutes, window_minutes
from components.settings.base import Section, cron, each, key
from jobs.registry import schedule_defaults, tasks

# The only retention periods CloudWatch Logs accepts from one year up.
LOG_RETENTION_DAYS = (365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)
# Fargate CPU units and the memory (MiB) range each allows.
FARGATE_MEMORY = {
    256: (512, 2048),
    512: (1024, 4096),
    1024: (2048, 8192),
    2048: (4096, 16384),
    4096: (8192, 30720),
    8192: (16384, 61440),
    16384: (32768, 122880),
}
# The nightly pair the drain's bound is derived from: the drain stops in time for the reconcile.
DRAIN, NIGHTLY_RECONCILE = "ingest", "reconcile"

_SUBNET = re.compile(r"^subnet-[0-9a-f]{8,17}$")
_SG = re.compile(r"^sg-[0-9a-f]{8,17}$")
_IMAGE_URI = re.compile(r"^[a-z0-9.-]+(:\d+)?/[a-z0-9._/-]+(:[\w.-]+|@sha256:[0-9a-f]{64})$")


def task_names() -> tuple[str, ...]:
    """Every ECS task the registry declares."""
    return tuple(tasks())


class ImageSettings(Section):
    # The task definitions name the image by digest (repository@sha256:…), so what runs is what
    # the stack file says, whatever is later pushed or re-tagged (docs/deploy.md); the tag (or
    # imageUri's) names the release for people. The stack's own repository keeps the newest
    # imageKeepCount images and every image tagged with a release prefix (the calendar versions,
    # 2026.11.29-1: "20"), and deploys only a release-tagged image.
    image_uri: str | None = None
    image_tag: str | None = Field(default=None, pattern=r"^[\w][\w.-]{0,127}$")
    image_digest: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    image_keep_count: int = Field(default=30, ge=1, le=1000)
    image_release_tag_prefixes: list[str] = Field(default_factory=lambda: ["20"], max_length=25)

    @field_validator("image_uri")
    @classmethod
    def _image(cls, value: str | None) -> str | None:
        if value is not None and not _IMAGE_URI.match(value):
            raise ValueError(f"{value!r} is not registry/repository:tag or @sha256:digest")
        return value

    @model_validator(mode="after")
    def _release(self) -> ImageSettings:
        if self.image_uri is None and self.image_tag is None:
            raise ValueError(
                f"{key('imageTag')} is required when {key('imageUri')} is not set "
                "(the tag pushed to the stack's ECR repository)"
            )
        if self.image_uri and "@" in self.image_uri and not self.image_uri.endswith(f"@{self.image_digest}"):
            raise ValueError(f"{key('imageUri')} names another digest than {key('imageDigest')}")
        # The repository's lifecycle policy keeps release-tagged images only: a deployed image
        # must be one, or the policy could expire it under a running stack.
        tag, prefixes = self.image_tag, self.image_release_tag_prefixes
        if self.image_uri is None and tag is not None and prefixes and not tag.startswith(tuple(prefixes)):
            raise ValueError(
                f"{key('imageTag')} {tag!r} is not a release tag ({key('imageReleaseTagPrefixes')} {prefixes}): "
                "the repository's lifecycle policy could expire it"
            )
        return self

    def repository(self) -> str | None:
        """The configured registry/repository without its tag or digest (None: the stack's own)."""
        if self.image_uri is None:
            return None
        name = self.image_uri.split("@")[0]
        registry, _, path = name.partition("/")
        return f"{registry}/{path.split(':')[0]}"


class TaskSize(Section):
    """A Fargate task size: CPU units and memory (MiB), a pair Fargate offers."""

    cpu: int
    memory: int

    @model_validator(mode="after")
    def _fargate(self) -> TaskSize:
        low, high = FARGATE_MEMORY.get(self.cpu, (0, -1))
        if not low <= self.memory <= high:
            raise ValueError(f"cpu {self.cpu} with memory {self.memory} is not a Fargate task size")
        return self


class TaskSettings(Section):
    subnet_ids: list[str] = Field(min_length=1, max_length=16)
    security_group_ids: list[str] = Field(min_length=1, max_length=5)
    assign_public_ip: bool = False
    fargate_spot: bool = False
    # A task's size by its registry name; a task not named keeps the registry's.
    task_sizes: dict[str, TaskSize] = Field(default_factory=dict)
    log_retention_days: int = 365

    @field_validator("subnet_ids")
    @classmethod
    def _subnets(cls, value: list[str]) -> list[str]:
        return each(value, _SUBNET, "subnet id")

    @field_validator("security_group_ids")
    @classmethod
    def _sgs(cls, value: list[str]) -> list[str]:
        return each(value, _SG, "security group id")

    @field_validator("task_sizes")
    @classmethod
    def _tasks(cls, value: dict[str, TaskSize]) -> dict[str, TaskSize]:
        unknown = set(value) - set(task_names())
        if unknown:
            raise ValueError(f"no task is named {sorted(unknown)} (the registry's tasks: {sorted(task_names())})")
        return value

    @field_validator("log_retention_days")
    @classmethod
    def _log_retention(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            raise ValueError(f"{value} is not a CloudWatch Logs retention of a year or more {LOG_RETENTION_DAYS}")
        return value

    def sizes(self) -> dict[str, TaskSize]:
        """Every task's size: the stack's, else the registry's."""
        return {
            name: self.task_sizes.get(name) or TaskSize(cpu=task.size.cpu, memory=task.size.memory)
            for name, (_, task) in tasks().items()
        }


class ScheduleSettings(Section):
    # A schedule's cron by its registry name; a schedule not named keeps the registry's. All run
    # in one IANA zone, so they follow its daylight saving.
    schedules: dict[str, str] = Field(default_factory=dict)
    schedule_timezone: str = "UTC"
    schedule_retry_attempts: int = Field(default=2, ge=0, le=185)
    schedule_max_event_age_seconds: int = Field(default=3600, ge=60, le=86400)

    @field_validator("schedules")
    @classmethod
    def _schedules(cls, value: dict[str, str]) -> dict[str, str]:
        known = schedule_defaults()
        unknown = set(value) - set(known)
        if unknown:
            raise ValueError(f"no schedule is named {sorted(unknown)} (the registry's schedules: {sorted(known)})")
        for name, expression in value.items():
            try:
                cron(expression)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from exc
        return value

    @field_validator("schedule_timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"{value!r} is not an IANA time zone") from exc
        return value

    @model_validator(mode="after")
    def _drain(self) -> ScheduleSettings:
        """The drain's time bound (derived from the two schedules) leaves it a night's work."""
        schedules = (
            f"{key('schedules')} {DRAIN} {self.expression(DRAIN)} and {NIGHTLY_RECONCILE} "
            f"{self.expression(NIGHTLY_RECONCILE)} ({key('scheduleTimezone')} {self.schedule_timezone})"
        )
        try:
            minutes = self.drain_minutes
        except ScheduleError as exc:
            raise ValueError(f"{schedules}: {exc}") from exc
        if minutes < MIN_DRAIN_MINUTES:
            raise ValueError(
                f"{schedules} leave the drain {minutes} minutes before the reconcile starts, on the "
                f"shortest night of the year and less the margin: at least {MIN_DRAIN_MINUTES} are needed"
            )
        return self

    def expressions(self) -> dict[str, str]:
        """Every registry schedule's expression: the stack's, else the registry's default."""
        return schedule_defaults() | self.schedules

    def expression(self, name: str) -> str:
        return self.expressions()[name]

    @property
    def drain_minutes(self) -> int:
        """The minutes a scheduled drain may take so it has stopped before the reconcile starts
        (components.schedules), on every night of the coming year.
        """
        today = datetime.now(UTC).date()
        return drain_minutes(self.expression(DRAIN), self.expression(NIGHTLY_RECONCILE), self.schedule_timezone, today)

    def job_windows(self) -> dict[str, int]:
        """Each nightly job's window in seconds, which its duration should stay under: the
        drain's bound, and the reconcile's time until the next drain starts.
        """
        today = datetime.now(UTC).date()
        reconcile = window_minutes(
            self.expression(NIGHTLY_RECONCILE), self.expression(DRAIN), self.schedule_timezone, today
        )
        return {DRAIN: self.drain_minutes * 60, NIGHTLY_RECONCILE: reconcile * 60}
