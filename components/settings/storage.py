"""The storage sections: the data's lifecycle and retention, the buckets' names, locks and CORS,
the audit trail's retention, and the review API's lease and URL lives.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.settings.base import Section, each, key
from jobs.contract import DocumentType, LifecycleSpec, ObjectLockSpec, RetentionClass, RetentionPolicy
from jobs.contract.schema import AUDIT_RETENTION, CORS_ORIGIN

_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")
_LIFECYCLE = LifecycleSpec()
_POLICY = RetentionPolicy()
_RETENTION = ObjectLockSpec()
# Noncurrent versions in the access-log and audit-data buckets (the data buckets use the grace).
NONCURRENT_EXPIRATION_DAYS = 90
BUCKET_PURPOSES = ("raw", "processed", "reports", "access-logs")


class StorageSettings(Section):
    # Storage lifecycle: days from creation. Defaults are the contract's (LifecycleSpec and
    # RetentionPolicy, which the local stack uses too), so a stack without these keys keeps
    # objects and items as long as the jobs assume. The retention policy (days per class, the
    # class of each document type, the delete grace) builds the data buckets' lifecycle rules
    # and reaches every job as DOCUFLOW_RETENTION, so items and objects expire together.
    infrequent_access_after_days: int = Field(default=_LIFECYCLE.infrequent_access_after_days, ge=30)
    glacier_after_days: int = Field(default=_LIFECYCLE.glacier_after_days, ge=1)
    retention_days: int = Field(default=_POLICY.standard_days, ge=1)
    compliance_retention_days: int = Field(default=_POLICY.compliance_days, ge=1)
    retention_class_by_type: dict[DocumentType, RetentionClass] = Field(default_factory=dict)
    delete_grace_days: int = Field(default=_POLICY.grace_days, ge=1, le=3650)
    # Noncurrent versions of the access-log and audit-data buckets (the data buckets' noncurrent
    # versions are the deleted and replaced ones: they live the delete grace).
    noncurrent_expiration_days: int = Field(default=NONCURRENT_EXPIRATION_DAYS, ge=1)
    abort_multipart_days: int = Field(default=_LIFECYCLE.abort_multipart_days, ge=1)
    access_log_retention_days: int = Field(default=365, ge=1)
    # The audit-data bucket keeps its contract name: the jobs find it from the stage.
    bucket_names: dict[str, str] = Field(default_factory=dict)

    # Reports are audit evidence: Object Lock keeps their versions for this long (defaults: the
    # contract's, which the local stack applies too), and the reports bucket's policy refuses
    # overwrites and deletes of report keys to everyone but this break-glass role (if any).
    object_lock_mode: Literal["GOVERNANCE", "COMPLIANCE"] = _RETENTION.mode
    object_lock_days: int = Field(default=_RETENTION.days, ge=1, le=36500)
    break_glass_role_arn: str | None = Field(default=None, pattern=_ROLE_ARN.pattern)
    cors_origins: list[str] = Field(default_factory=list)
    # The audit trail (change log and access trail) is kept this long under Object Lock, then
    # expires: GOVERNANCE in dev (lifted only with s3:BypassGovernanceRetention, which the
    # buckets' policies deny), COMPLIANCE in prod (nobody can, the root user included).
    audit_retention_mode: Literal["GOVERNANCE", "COMPLIANCE"] = AUDIT_RETENTION.mode
    audit_retention_days: int = Field(default=AUDIT_RETENTION.days, ge=1, le=36500)

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        return each(value, CORS_ORIGIN, "https origin")

    @field_validator("bucket_names")
    @classmethod
    def _purposes(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = set(value) - set(BUCKET_PURPOSES)
        if unknown:
            raise ValueError(f"unknown bucket purpose(s) {sorted(unknown)}")
        return value

    @model_validator(mode="after")
    def _tiers(self) -> StorageSettings:
        # S3 keeps an object in STANDARD_IA at least 30 days before a later transition.
        if self.glacier_after_days < self.infrequent_access_after_days + 30:
            raise ValueError(f"{key('glacierAfterDays')} must be at least {key('infrequentAccessAfterDays')} + 30")
        return self

    def retention(self) -> RetentionPolicy:
        return RetentionPolicy(
            standard_days=self.retention_days,
            compliance_days=self.compliance_retention_days,
            by_type=self.retention_class_by_type,
            grace_days=self.delete_grace_days,
        )

    def lifecycle(self) -> LifecycleSpec:
        return LifecycleSpec(
            infrequent_access_after_days=self.infrequent_access_after_days,
            glacier_after_days=self.glacier_after_days,
            retention=self.retention(),
            abort_multipart_days=self.abort_multipart_days,
        )


class ReviewSettings(Section):
    # A reviewer's claim on a document, and the life of a presigned result.json GET (the
    # frontend fetches it at once; a short life limits what a leaked URL gives away).
    review_lease_seconds: int = Field(default=1800, ge=60, le=24 * 3600)
    result_url_seconds: int = Field(default=300, ge=1, le=7 * 24 * 3600)
