"""StackSettings: the sections composed into the whole, the checks that span sections, the
values the components take, and the loading from the engine's flat config keys.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationError, model_validator
from pydantic.fields import FieldInfo

from components.settings.base import NAMESPACE, REGION, REGION_KEY, Section, StackSettingsError, key
from components.settings.nightly import IngestSettings, ReconcileSettings
from components.settings.recovery import OperationsSettings, RecoverySettings, residency_of
from components.settings.storage import ReviewSettings, StorageSettings
from components.settings.tasks import ImageSettings, ScheduleSettings, TaskSettings
from jobs.contract import (
    BucketSpec,
    ObjectLockSpec,
    QueueSpec,
    TableSpec,
    audit_data_spec,
    bucket_specs,
    layout,
    queue_spec,
    table_spec,
)
from jobs.contract.erasure import DataHoldings
from jobs.contract.schema import audit_bucket_spec

# The per-task keys of earlier releases, refused with their spelling in the maps that replaced
# them (a stack file still setting one would otherwise lose its value without a word).
RENAMED = {
    key("ingestCpu"): f"{key('taskSizes')}.ingest.cpu",
    key("ingestMemory"): f"{key('taskSizes')}.ingest.memory",
    key("reconcileCpu"): f"{key('taskSizes')}.reconcile.cpu (and .repair, .drill: each task by its name)",
    key("reconcileMemory"): f"{key('taskSizes')}.reconcile.memory (and .repair, .drill: each task by its name)",
    key("ingestSchedule"): f"{key('schedules')}.ingest",
    key("reconcileSchedule"): f"{key('schedules')}.reconcile",
    key("drillSchedule"): f"{key('schedules')}.drill",
}
_MAPS = (
    f"{key('taskSizes')}: {{ingest: {{cpu: 1024, memory: 2048}}}}, {key('schedules')}: {{ingest: cron(0 1 * * ? *)}}"
)


@dataclass(frozen=True)
class ConfigKey:
    """Where a config key's value goes: a field of a section (by alias), or of the whole."""

    section: str | None  # the section's alias in StackSettings; None: StackSettings' own field
    alias: str
    info: FieldInfo


class StackSettings(Section):
    """Every value a stack is configured with, in one section per concern."""

    stage: str = Field(pattern=r"^[a-z][a-z0-9-]{0,20}$")
    region: str = Field(alias=REGION_KEY, pattern=REGION.pattern)
    tags: dict[str, str] = Field(default_factory=dict)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    image: ImageSettings
    tasks: TaskSettings
    scheduling: ScheduleSettings = Field(default_factory=ScheduleSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    reconcile: ReconcileSettings = Field(default_factory=ReconcileSettings)
    recovery: RecoverySettings = Field(default_factory=RecoverySettings)
    operations: OperationsSettings

    @model_validator(mode="after")
    def _across_sections(self) -> StackSettings:
        recovery = self.recovery
        if self.reconcile.reconcile_catch_up_days >= recovery.pitr_recovery_days:
            raise ValueError(
                f"{key('reconcileCatchUpDays')} must be less than {key('pitrRecoveryDays')} "
                "(an incremental export starts inside the point-in-time recovery window)"
            )
        home = residency_of(self.region)
        if recovery.residency is not None and recovery.residency != home:
            raise ValueError(f"{REGION_KEY} {self.region} is not in {key('residency')} {recovery.residency}")
        replica = recovery.replica_region
        if replica == self.region:
            raise ValueError(f"{key('replicaRegion')} must differ from {REGION_KEY} ({self.region})")
        if replica is not None and residency_of(replica) != home:
            raise ValueError(
                f"{key('replicaRegion')} {replica} leaves the stack's residency {home} "
                f"({REGION_KEY} {self.region}): a second jurisdiction is a second stack"
            )
        return self

    # --- derived values the components take -----------------------------------------------
    @property
    def protect(self) -> bool:
        """Only dev may be torn down by `pulumi destroy`; every other stage keeps its data."""
        return self.stage != "dev"

    def holdings(self) -> DataHoldings:
        """The copies an erasure cannot reach and how long they live (its receipt's figures)."""
        recovery = self.recovery
        return DataHoldings(
            point_in_time_recovery_days=recovery.pitr_recovery_days,
            backup_retention_days=max(recovery.backup_daily_retention_days, recovery.backup_monthly_retention_days),
            replica_region=recovery.replica_region,
            audit_data_retention_days=self.reconcile.audit_data_retention_days,
            access_log_retention_days=self.storage.access_log_retention_days,
            log_retention_days=self.tasks.log_retention_days,
            queue_retention_days=queue_spec(self.stage).retention_seconds // 86400,
            report_lock_days=self.storage.object_lock_days,
            audit_trail_days=self.storage.audit_retention_days,
        )

    def table(self) -> TableSpec:
        return table_spec(self.stage)

    def arrivals(self) -> QueueSpec:
        return queue_spec(self.stage)

    def buckets(self) -> list[BucketSpec]:
        """The contract's buckets with this stack's lifecycle, and its default retention where
        the contract has one (the reports; the data buckets carry only legal holds).
        """
        storage = self.storage
        retention = ObjectLockSpec(mode=storage.object_lock_mode, days=storage.object_lock_days)
        return [
            spec if spec.retention is None else spec.model_copy(update={"retention": retention})
            for spec in bucket_specs(self.stage, storage.bucket_names, storage.lifecycle(), storage.cors_origins)
        ]

    def audit_data(self) -> BucketSpec:
        """The audit-data bucket: inventories, exports and the nightly states (either engine)."""
        reconcile = self.reconcile
        return audit_data_spec(self.stage, reconcile.audit_data_retention_days, reconcile.table_state_retention_days)

    def audit_buckets(self) -> list[BucketSpec]:
        """The change log's and the access trail's buckets, under the audit retention."""
        retention = ObjectLockSpec(mode=self.storage.audit_retention_mode, days=self.storage.audit_retention_days)
        return [audit_bucket_spec(self.stage, p, retention) for p in (layout.AUDIT_LOG, layout.ACCESS_TRAIL)]

    def access_log_bucket_name(self) -> str:
        return self.storage.bucket_names.get("access-logs") or layout.bucket_name(self.stage, "access-logs")

    def resource_tags(self) -> dict[str, str]:
        return {"app": layout.APP, "stage": self.stage, **self.tags}

    # --- loading ----------------------------------------------------------------------------
    @classmethod
    def sections(cls) -> dict[str, type[Section]]:
        """Each section's alias in the whole and its model."""
        found: dict[str, type[Section]] = {}
        for name, field in cls.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, Section):
                found[field.alias or name] = field.annotation
        return found

    @classmethod
    def keys(cls) -> dict[str, ConfigKey]:
        """Every config key the settings read (`docuflow:retentionDays`, `aws:region`), flat
        whatever its section, and where its value goes.
        """
        sections = cls.sections()
        found = {
            _config_key(field.alias or name): ConfigKey(None, field.alias or name, field)
            for name, field in cls.model_fields.items()
            if (field.alias or name) not in sections
        }
        for section, model in sections.items():
            for name, field in model.model_fields.items():
                found[_config_key(field.alias or name)] = ConfigKey(section, field.alias or name, field)
        return found

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> StackSettings:
        """Build from fully-qualified config keys, as in a `Pulumi.<stack>.yaml` `config:` block."""
        keys = cls.keys()
        _refuse_unread(values, keys)
        data: dict[str, Any] = {section: {} for section in cls.sections()}
        for name, where in keys.items():
            value = values.get(name)
            # "" is unset: Pulumi.yaml can declare a key optional only by giving it a default.
            if value in (None, ""):
                continue
            (data if where.section is None else data[where.section])[where.alias] = value
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise StackSettingsError(_describe(exc, keys)) from exc


def _refuse_unread(values: Mapping[str, Any], keys: Mapping[str, ConfigKey]) -> None:
    """Refuse a `docuflow:` key no setting reads: a renamed one naming its new spelling, an
    unknown one naming the known key it most resembles (a typo's likely intent).
    """
    ours = sorted(k for k in values if k.startswith(f"{NAMESPACE}:") and k not in keys)
    renamed = [f"{k} is now {RENAMED[k]}" for k in ours if k in RENAMED]
    unknown = [_unknown(k, keys) for k in ours if k not in RENAMED]
    problems = []
    if renamed:
        problems.append(
            f"renamed config key(s) (sizes and schedules are maps by task name: {_MAPS}): " + "; ".join(renamed)
        )
    if unknown:
        problems.append("unknown config key(s): " + "; ".join(unknown))
    if problems:
        raise StackSettingsError(" / ".join(problems))


def _unknown(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"{name} (did you mean {close[0]}?)" if close else name


def _describe(exc: ValidationError, keys: Mapping[str, ConfigKey]) -> str:
    """Each error located by its config key (`docuflow:taskSizes.ingest`), not a model path."""
    by_place = {(where.section, where.alias): name for name, where in keys.items()}
    problems = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        if loc and (None, loc[0]) in by_place:
            place, rest = by_place[(None, loc[0])], loc[1:]
        elif len(loc) >= 2 and (loc[0], loc[1]) in by_place:
            place, rest = by_place[(loc[0], loc[1])], loc[2:]
        else:  # a check across a section's keys: its message names them
            place, rest = "(stack settings)", []
        problems.append(f"{''.join([place, *(f'.{p}' for p in rest)])}: {error['msg']}")
    return "invalid stack config: " + "; ".join(problems)


def _config_key(alias: str) -> str:
    """A field's config key: its alias when that names a namespace (`aws:region`), else in ours."""
    return alias if ":" in alias else key(alias)
