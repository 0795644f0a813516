"""An ingest run's mode as a type: one frozen plan per mode, validated once, when it is built
(after jobs/reconcile/plans.py).

- `DrainPlan`: the arrival queue drained (`ingest drain`, the nightly mode): it ends when a
  receive waited `idle_seconds` for nothing, or at `max_docs`, or after `max_seconds`;
- `BackfillPlan`: the whole raw/ prefix swept (`ingest backfill`), one `shard` of it (none given:
  the task's SHARD_INDEX/SHARD_COUNT settings);
- `RedrivePlan`: the dead-letter queue's messages moved back to the arrival queue (`ingest
  redrive`): no run of documents, no options.

An option a mode does not read is no field of its plan and is refused (`extra="forbid"`): only a
backfill has shards (the queue spreads its messages over tasks by itself), only a drain waits
idle. Refusals name the CLI's flags, since that is where a person gave them. Pure: no I/O.
"""

from __future__ import annotations

import math
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

MAX_IDLE_SECONDS = 20  # SQS long polls last 0 to 20 s


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Shard(_Frozen):
    """One task's share of a sweep: the raw keys whose hash falls on `index` of `count`."""

    index: int = 0
    count: int = 1

    @model_validator(mode="after")
    def _within(self) -> Shard:
        if not 0 <= self.index < self.count:
            raise ValueError(f"shard {self}: need 0 <= index < count")
        return self

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


class _RunPlan(_Frozen):
    """What a drain and a backfill share: their bounds, and whether they write."""

    mode: ClassVar[str]  # the subcommand, and the run summary's `mode`
    max_docs: int | None = None  # stop claiming after this many documents
    max_seconds: float | None = None  # stop taking new work after this long, then end (completed)
    dry_run: bool = False  # decide and report, write nothing

    @model_validator(mode="after")
    def _bounded(self) -> _RunPlan:
        if self.max_docs is not None and self.max_docs < 1:
            raise ValueError(f"--max-docs {self.max_docs}: must be at least 1")
        if self.max_seconds is not None and not (math.isfinite(self.max_seconds) and self.max_seconds > 0):
            # nan and inf would pass a plain `> 0` and never end the drain.
            raise ValueError(f"--max-minutes must be a positive number, got {self.max_seconds / 60:g}")
        return self


class DrainPlan(_RunPlan):
    mode: ClassVar[str] = "drain"
    idle_seconds: int = MAX_IDLE_SECONDS

    @model_validator(mode="after")
    def _polls(self) -> DrainPlan:
        if not 0 <= self.idle_seconds <= MAX_IDLE_SECONDS:
            raise ValueError(f"--idle-seconds {self.idle_seconds}: SQS long polls last 0 to {MAX_IDLE_SECONDS} s")
        return self


class BackfillPlan(_RunPlan):
    mode: ClassVar[str] = "backfill"
    shard: Shard | None = None  # None: the settings' SHARD_INDEX/SHARD_COUNT


class RedrivePlan(_Frozen):
    mode: ClassVar[str] = "redrive"


RunPlan = DrainPlan | BackfillPlan
Plan = DrainPlan | BackfillPlan | RedrivePlan
