"""How long a document is kept: retention classes by document type, and the delete grace period.

One policy feeds both clocks that end a document. The item's `retainUntil` (and the table's TTL
attribute) and the S3 lifecycle rules that expire its objects (`schema.LifecycleSpec`) are both
built from it, and both count from the same moment: the raw object's upload time (the item's
`createdAt` is the raw object's LastModified), which is also the moment S3's lifecycle counts
the raw object's age from. The class is decided once, when a document first finishes, and kept
by every later version of the item (a re-upload restarts the clock, not the choice).

Days, not years: S3 lifecycle rules count whole days, so the item counts the same days. The
defaults are five and ten calendar years including their leap days (1827 and 3653 days, the
values CloudWatch Logs also uses), so a document is never kept a day short of its years.

Importable without boto3 or Pulumi; the stack passes the policy to every job as one JSON
environment variable (`to_env`/`from_env`), the same values its lifecycle rules are built from.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from jobs.contract.invoice import DocumentType

FIVE_YEARS_DAYS = 1827
TEN_YEARS_DAYS = 3653
DEFAULT_GRACE_DAYS = 30


class RetentionClass(StrEnum):
    """The value of the objects' `retention` tag, which the lifecycle rules select on."""

    STANDARD = "standard"
    COMPLIANCE = "compliance"


class RetentionPolicy(BaseModel):
    """Retention days per class, the class of each document type, and the delete grace period."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    standard_days: int = Field(default=FIVE_YEARS_DAYS, ge=1)
    compliance_days: int = Field(default=TEN_YEARS_DAYS, ge=1)
    # Types not listed are standard; so is a document whose type no extraction established.
    by_type: dict[DocumentType, RetentionClass] = Field(default_factory=dict)
    # Days a deleted document can be restored; then its versions, markers and item are gone.
    grace_days: int = Field(default=DEFAULT_GRACE_DAYS, ge=1, le=3650)

    def days(self, retention: RetentionClass) -> int:
        return self.compliance_days if retention == RetentionClass.COMPLIANCE else self.standard_days

    def class_of(self, document_type: DocumentType | None) -> RetentionClass:
        if document_type is None:
            return RetentionClass.STANDARD
        return self.by_type.get(document_type, RetentionClass.STANDARD)

    def retain_until(self, uploaded_at: datetime, retention: RetentionClass) -> datetime:
        """The end of the retention of a document uploaded at `uploaded_at`."""
        return uploaded_at + timedelta(days=self.days(retention))

    def hard_delete_at(self, deleted_at: datetime) -> datetime:
        """When a document deleted at `deleted_at` is gone for good (the grace period ends)."""
        return deleted_at + timedelta(days=self.grace_days)

    def to_env(self) -> str:
        return self.model_dump_json(by_alias=True)

    @classmethod
    def from_env(cls, text: str) -> RetentionPolicy:
        return cls.model_validate_json(text)
