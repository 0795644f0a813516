"""The registry's alarms on a stack as the tests build it: the nightly schedules the registry
declares, on their defaults, and the restore drill only where a test names its schedule.
"""

from __future__ import annotations

from typing import Any

from jobs.contract.alarms import AlarmInputs, AlarmSpec
from jobs.recovery.job import DRILL_SCHEDULE
from jobs.registry import declared_alarms, schedule_defaults


def stack_alarms(threshold: float = 0.5, *, drill_schedule: str | None = None, **inputs: Any) -> tuple[AlarmSpec, ...]:
    """`declared_alarms` with the failed ratio's `threshold`, the drill on `drill_schedule` (None:
    the stack schedules none) and any other AlarmInputs field.
    """
    schedules = {name: cron for name, cron in schedule_defaults().items() if name != DRILL_SCHEDULE}
    if drill_schedule is not None:
        schedules[DRILL_SCHEDULE] = drill_schedule
    return declared_alarms(AlarmInputs(failed_ratio_threshold=threshold, schedules=schedules, **inputs))
