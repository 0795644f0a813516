"""The stack settings: every value a stack is configured with, validated once, in sections.

One typed section per concern, composed into StackSettings (`stack.py`), checked before any
resource exists:

- `storage`: lifecycle, retention, bucket names, Object Lock, CORS, the audit trail's retention;
  `review`: the review API's lease and URL life;
- `image`: the job image by digest; `tasks`: network, Spot, each task's size, log retention;
  `scheduling`: each schedule's cron, its zone and retries (sizes and schedules are maps keyed by
  the registry's task and schedule names, jobs.runtime.registry);
- `ingest` and `reconcile`: the nightly jobs' own; `recovery`: PITR, backups, residency, the
  second region; `operations`: alarm thresholds, the alarm topic, the budgets.

`__main__.py` is the only reader of the stack config: it hands every key the engine passed the
program to `StackSettings.from_mapping`. The keys stay flat in the `docuflow:` namespace (a
field's camel-cased name, whatever its section), so a section is a grouping in code, not in the
stack files. A `docuflow:` key no field reads is refused, naming the key it resembles, or the
map that replaced it (`docuflow:ingestCpu` is now `docuflow:taskSizes.ingest.cpu`); a wrong
value fails the whole program with a message naming the config key, not a model path.
"""

from __future__ import annotations

from components.settings.base import NAMESPACE, REGION_KEY, Section, StackSettingsError
from components.settings.nightly import IngestSettings, ReconcileSettings
from components.settings.recovery import OperationsSettings, RecoverySettings, residency_of
from components.settings.stack import RENAMED, ConfigKey, StackSettings
from components.settings.storage import NONCURRENT_EXPIRATION_DAYS, ReviewSettings, StorageSettings
from components.settings.tasks import (
    FARGATE_MEMORY,
    LOG_RETENTION_DAYS,
    ImageSettings,
    ScheduleSettings,
    TaskSettings,
    TaskSize,
)

__all__ = [
    "FARGATE_MEMORY",
    "LOG_RETENTION_DAYS",
    "NAMESPACE",
    "NONCURRENT_EXPIRATION_DAYS",
    "REGION_KEY",
    "RENAMED",
    "ConfigKey",
    "ImageSettings",
    "IngestSettings",
    "OperationsSettings",
    "ReconcileSettings",
    "RecoverySettings",
    "ReviewSettings",
    "ScheduleSettings",
    "Section",
    "StackSettings",
    "StackSettingsError",
    "StorageSettings",
    "TaskSettings",
    "TaskSize",
    "residency_of",
]
