"""The recovery and operations sections: PITR, the backups, the residency and the second region;
the alarms' thresholds and topic, and the monthly budgets.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.settings.base import REGION, Section, cron, key

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_TOPIC_ARN = re.compile(r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$")
# Data residency: a region's jurisdiction is its name's first part (eu-west-1: EU). A stack keeps
# its data in one jurisdiction, its second region included; another jurisdiction is another stack.
RESIDENCIES = {
    "eu": "EU",
    "us": "US",
    "ca": "CA",
    "ap": "APAC",
    "sa": "SA",
    "me": "ME",
    "af": "AF",
    "il": "IL",
    "mx": "MX",
}


def residency_of(region: str) -> str | None:
    """The jurisdiction a region belongs to (GovCloud regions are their own: `US-GOV`)."""
    head = region.split("-")[0]
    if "-gov-" in region:
        return f"{RESIDENCIES.get(head, head.upper())}-GOV"
    return RESIDENCIES.get(head)


class RecoverySettings(Section):
    # PITR keeps every change for this many days (1-35); it also bounds how long an erased user's
    # data survives in the table's continuous backups. AWS Backup takes a daily and a monthly
    # backup into a KMS-encrypted, locked vault, kept this many days each (the vault lock refuses
    # shorter and longer lifecycles); COMPLIANCE locks become immutable after 3 days.
    pitr_recovery_days: int = Field(default=35, ge=1, le=35)
    backup_daily_schedule: str = "cron(0 3 * * ? *)"
    backup_daily_retention_days: int = Field(default=30, ge=7, le=36500)
    backup_monthly_schedule: str = "cron(0 4 1 * ? *)"
    backup_monthly_retention_days: int = Field(default=365, ge=28, le=36500)
    backup_vault_lock: Literal["GOVERNANCE", "COMPLIANCE"] = "GOVERNANCE"
    # The second region (same jurisdiction): S3 replication of raw, processed and reports, a
    # DynamoDB global table replica, and copies of every backup. None: a single-region stack.
    residency: str | None = None
    replica_region: str | None = Field(default=None, pattern=REGION.pattern)

    @field_validator("backup_daily_schedule", "backup_monthly_schedule")
    @classmethod
    def _cron(cls, value: str) -> str:
        return cron(value)

    @model_validator(mode="after")
    def _backups(self) -> RecoverySettings:
        if self.backup_monthly_retention_days < self.backup_daily_retention_days:
            raise ValueError(f"{key('backupMonthlyRetentionDays')} must be at least {key('backupDailyRetentionDays')}")
        return self

    @property
    def erased_data_horizon_days(self) -> int:
        """How long an erased user's data can survive in backups: the longest of the PITR window
        and the backups' retention (what an erasure receipt must quote).
        """
        return max(self.pitr_recovery_days, self.backup_daily_retention_days, self.backup_monthly_retention_days)


class OperationsSettings(Section):
    # Alerts: an existing topic, or one this stack creates (optionally with an email subscriber).
    # An arrival older than arrivalsMaxAgeSeconds alarms (a stalled drain: arrivals wait up to a
    # day by design), and with a second region, a replication rule whose S3 ReplicationLatency
    # passes replicationLatencyAlarmSeconds (Replication Time Control promises 15 minutes).
    arrivals_max_age_seconds: int = Field(default=26 * 3600, ge=3600, le=14 * 86400)
    replication_latency_alarm_seconds: int = Field(default=900, ge=60, le=86400)
    alarm_topic_arn: str | None = Field(default=None, pattern=_TOPIC_ARN.pattern)
    alarm_email: str | None = Field(default=None, pattern=_EMAIL.pattern)
    # Cost: a monthly AWS Budgets cost budget of the resources tagged with this stage, alerting
    # the alarm topic on actual and forecast spend.
    monthly_budget_usd: Decimal = Field(gt=0, max_digits=12, decimal_places=2)
    # Textract's charges attach to no taggable resource, so the stage budget never sees them: a
    # second monthly budget filtered on the Textract service covers them. Unset: the monthly budget's
    # amount (a runaway that alone spends the stack's budget is seen at 80 % of it).
    textract_budget_usd: Decimal | None = Field(default=None, gt=0, max_digits=12, decimal_places=2)

    @model_validator(mode="after")
    def _one_topic(self) -> OperationsSettings:
        if self.alarm_topic_arn and self.alarm_email:
            raise ValueError(f"set {key('alarmTopicArn')} or {key('alarmEmail')}, not both")
        return self

    @property
    def textract_budget(self) -> Decimal:
        """The monthly amount of the Textract service budget."""
        return self.textract_budget_usd or self.monthly_budget_usd
