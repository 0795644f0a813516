"""The DynamoDB summary item of one document and the result.json written beside it.

The item is small and bounded (dashboard fields only, far under DynamoDB's 400 KB); everything
unbounded (raw extraction output, line items) lives in result.json on S3.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from jobs.contract import layout
from jobs.contract.actors import check_actor
from jobs.contract.duplicates import DuplicateKind, DuplicateMarker
from jobs.contract.ids import DocumentId, UserId
from jobs.contract.invoice import DocumentFormat, Invoice, ValidationResult
from jobs.contract.objects import ObjectInfo
from jobs.contract.retention import RetentionClass, RetentionPolicy
from jobs.contract.status import Status, check_transition

MAX_TEXT = 512
MAX_MESSAGE = 1024
MAX_REASONS = 20
_DIGEST = r"^[0-9a-f]{64}$"
# The item attribute that holds the digest of each kind of marker the document holds.
MARKER_FIELDS = {DuplicateKind.CONTENT: "contentMarker", DuplicateKind.INVOICE: "invoiceMarker"}
RESULT_SCHEMA_VERSION = "1.1"  # 1.1: the review record beside the machine's reading


def _clip(value: str | None, limit: int) -> str | None:
    return value if value is None or len(value) <= limit else value[: limit - 1] + "…"


# What a DynamoDB Number can hold: 38 significant digits, magnitudes 1E-130 to 9.9999…E+125.
DYNAMODB_MAX_DIGITS = 38
_DYNAMODB_MIN_MAGNITUDE = Decimal("1E-130")
_DYNAMODB_MAX_MAGNITUDE = Decimal("1E+126")


def dynamodb_number_problem(value: Decimal) -> str | None:
    """Why `value` cannot be stored as a DynamoDB Number, or None when it can."""
    if not value.is_finite():
        return f"{value} is not a finite number"
    if value.is_zero():
        return None
    # Significant digits without trailing zeros; normalize() would round to the context's 28.
    digits = len("".join(map(str, value.as_tuple().digits)).strip("0"))
    if digits > DYNAMODB_MAX_DIGITS:
        return f"{digits} significant digits (DynamoDB keeps {DYNAMODB_MAX_DIGITS})"
    if not _DYNAMODB_MIN_MAGNITUDE <= abs(value) < _DYNAMODB_MAX_MAGNITUDE:
        return f"magnitude {value:.3E} is outside DynamoDB's range (1E-130 to 9.9E+125)"
    return None


# The item's times: stored as ISO-8601 text with milliseconds (layout.format_ts).
_TIMES = ("createdAt", "updatedAt", "leaseExpiresAt", "retainUntil", "deletedAt", "hardDeleteAt", "legalHoldAt")


class DocumentItem(BaseModel):
    """One document's summary item. Keys are derived from the ids, never set by hand."""

    model_config = ConfigDict(extra="forbid")

    userId: UserId
    documentId: DocumentId
    status: Status
    createdAt: datetime
    updatedAt: datetime
    rawS3Uri: str
    rawEtag: str
    attempts: int = 0
    version: int = 1
    entityType: str = layout.ENTITY_DOCUMENT
    sourceFormat: DocumentFormat | None = None
    vendorName: str | None = None
    invoiceNumber: str | None = None
    invoiceDate: date | None = None
    totalAmount: Decimal | None = None
    currency: str | None = None
    resultS3Uri: str | None = None
    resultEtag: str | None = None  # the result.json this item's claim wrote (fences stale writers)
    failureCode: str | None = None
    failureMessage: str | None = None
    reviewReasons: list[str] = Field(default_factory=list)
    leaseOwner: str | None = None
    leaseExpiresAt: datetime | None = None
    # Who wrote this version (jobs.contract.actors); None only on items written before actors were.
    updatedBy: str | None = None
    # The identities of the document (jobs.contract.duplicates), and the digest of each identity
    # whose marker it holds: a duplicate records its identities but holds no marker (another
    # document does). One plain attribute per kind, so every reconcile engine joins on it.
    contentDigest: str | None = Field(default=None, pattern=_DIGEST)
    invoiceDigest: str | None = Field(default=None, pattern=_DIGEST)
    contentMarker: str | None = Field(default=None, pattern=_DIGEST)
    invoiceMarker: str | None = Field(default=None, pattern=_DIGEST)
    # Retention (jobs.contract.retention): the class decided when the document first finished,
    # and the end of its retention, counted from the upload (createdAt) like the objects' lifecycle.
    retentionClass: RetentionClass | None = None
    retainUntil: datetime | None = None
    # A user's delete: who and when, the status a restore puts back, and the end of the grace
    # period, after which the item and every version of its objects are gone. All four or none.
    deletedAt: datetime | None = None
    deletedBy: str | None = None
    restoreStatus: Status | None = None
    hardDeleteAt: datetime | None = None
    # A legal hold (since when, by whom): while held, nothing expires or deletes the document.
    legalHoldAt: datetime | None = None
    legalHoldBy: str | None = None
    # Attributes outside the contract (a tool or a person added them): carried through every
    # rewrite of the item, never interpreted.
    _foreign: dict[str, Any] = PrivateAttr(default_factory=dict)

    @field_validator("updatedBy", "deletedBy", "legalHoldBy")
    @classmethod
    def _actor(cls, v: str | None) -> str | None:
        return None if v is None else check_actor(v)

    @field_validator("vendorName", "invoiceNumber")
    @classmethod
    def _short(cls, v: str | None) -> str | None:
        return _clip(v, MAX_TEXT)

    @field_validator("failureMessage")
    @classmethod
    def _message(cls, v: str | None) -> str | None:
        return _clip(v, MAX_MESSAGE)

    @field_validator("reviewReasons")
    @classmethod
    def _reasons(cls, v: list[str]) -> list[str]:
        return [r[:200] for r in v[:MAX_REASONS]]

    def digest(self, kind: DuplicateKind) -> str | None:
        """The document's identity of `kind` (jobs.contract.duplicates)."""
        return self.contentDigest if kind is DuplicateKind.CONTENT else self.invoiceDigest

    @property
    def held_markers(self) -> dict[DuplicateKind, str]:
        """The identities whose markers the document holds (kind → digest)."""
        held = {kind: getattr(self, name) for kind, name in MARKER_FIELDS.items()}
        return {kind: digest for kind, digest in held.items() if digest is not None}

    def holds(self, kind: DuplicateKind, digest: str) -> bool:
        """The document holds the marker of this identity (a marker naming it is not left behind)."""
        return self.status != Status.DELETED and self.held_markers.get(kind) == digest

    @field_validator("totalAmount", mode="before")
    @classmethod
    def _no_float(cls, v: Any) -> Any:
        if isinstance(v, float):
            raise ValueError("totalAmount must be a Decimal or a string, never a float")
        return v

    @field_validator("totalAmount")
    @classmethod
    def _storable(cls, v: Decimal | None) -> Decimal | None:
        problem = None if v is None else dynamodb_number_problem(v)
        if problem:
            raise ValueError(f"totalAmount cannot be stored: {problem}")
        return v

    @field_validator(*_TIMES)
    @classmethod
    def _utc_millis(cls, v: datetime | None) -> datetime | None:
        # Stored times have millisecond precision; truncating here keeps round trips exact.
        if v is None:
            return None
        if v.tzinfo is None:
            raise ValueError("times must be timezone-aware UTC")
        return v.astimezone(UTC).replace(microsecond=v.microsecond // 1000 * 1000)

    @model_validator(mode="after")
    def _lifecycle_consistent(self) -> DocumentItem:
        deletion = (self.deletedAt, self.deletedBy, self.restoreStatus, self.hardDeleteAt)
        if any(v is not None for v in deletion):
            if any(v is None for v in deletion):
                raise ValueError("a deleted item records deletedAt, deletedBy, restoreStatus and hardDeleteAt")
            if self.status != Status.DELETED or self.restoreStatus == Status.PROCESSING:
                raise ValueError("only a DELETED item records a delete, and it restores a finished status")
        if (self.legalHoldAt is None) != (self.legalHoldBy is None):
            raise ValueError("a legal hold records legalHoldAt and legalHoldBy")
        if self.retainUntil is not None and self.retentionClass is None:
            raise ValueError("retainUntil is the end of a retentionClass: set both")
        return self

    @property
    def user_deleted(self) -> bool:
        """Deleted by its owner (restorable within the grace period), not a vanished upload."""
        return self.deletedAt is not None

    @property
    def held(self) -> bool:
        return self.legalHoldAt is not None

    @property
    def expires_at(self) -> datetime | None:
        """What the table's TTL attribute says: nothing while held, the end of the grace period
        while deleted, else the end of retention (none before the document first finished).
        """
        if self.held:
            return None
        return self.hardDeleteAt or self.retainUntil

    def evolve(self, **changes: Any) -> DocumentItem:
        """A changed copy validated like a new item (model_copy would skip the size bounds).

        A new version must name its actor: inheriting the previous writer's name would put a
        change on the wrong person's record.
        """
        if "version" in changes and "updatedBy" not in changes:
            raise TypeError("a new version of an item names its actor (updatedBy)")
        changed = DocumentItem.model_validate({**dict(self), **changes})
        changed._foreign = self._foreign
        return changed

    @property
    def foreign_attributes(self) -> dict[str, Any]:
        """Attributes stored on the item that the contract does not define (read-only view)."""
        return dict(self._foreign)

    @property
    def pk(self) -> str:
        return layout.user_pk(self.userId)

    @property
    def sk(self) -> str:
        return layout.document_sk(self.documentId)

    def key(self) -> dict[str, str]:
        return {layout.PK_ATTR: self.pk, layout.SK_ATTR: self.sk}

    def to_item(self) -> dict[str, Any]:
        """Plain attributes for boto3's TypeSerializer: str, int, Decimal, lists; None dropped."""
        item: dict[str, Any] = {
            layout.PK_ATTR: self.pk,
            layout.SK_ATTR: self.sk,
            layout.GSI1_PK_ATTR: layout.status_pk(self.status),
            layout.GSI1_SK_ATTR: layout.format_ts(self.createdAt),
        }
        expires = self.expires_at
        if expires is not None:
            item[layout.TTL_ATTR] = layout.epoch_seconds(expires)
        for name, value in self:
            if value is None or value == []:
                continue
            if isinstance(value, datetime):
                value = layout.format_ts(value)
            elif isinstance(value, date):
                value = value.isoformat()
            elif isinstance(value, Status | DocumentFormat | RetentionClass):
                value = value.value
            item[name] = value
        return {**self._foreign, **item}

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> DocumentItem:
        """Inverse of to_item; derived key attributes are dropped (reconcile checks them), and
        attributes outside the contract are kept aside, to be written back unchanged.
        """
        data = {k: v for k, v in item.items() if k in _FIELDS}
        for name in _TIMES:
            if isinstance(data.get(name), str):
                data[name] = layout.parse_ts(data[name])
        for name in ("attempts", "version"):
            if isinstance(data.get(name), Decimal):
                data[name] = int(data[name])
        parsed = cls.model_validate(data)
        parsed._foreign = {k: v for k, v in item.items() if k not in ITEM_ATTRIBUTES}
        return parsed


def held_marker(holder: DocumentItem, kind: DuplicateKind, digest: str, actor: str) -> DuplicateMarker:
    """The marker of one of `holder`'s identities as its version leaves it: naming it, written at
    its updatedAt by `actor`, and expiring with it (its TTL, none while held).
    """
    return DuplicateMarker(
        userId=holder.userId,
        kind=kind,
        digest=digest,
        documentId=holder.documentId,
        createdAt=holder.updatedAt,
        updatedBy=actor,
        expiresAt=holder.expires_at,
    )


def held_fields(held: dict[DuplicateKind, str]) -> dict[str, str | None]:
    """The item attributes that say which markers a document holds (kind → digest)."""
    return {name: held.get(kind) for kind, name in MARKER_FIELDS.items()}


def summary_fields(invoice: Invoice | None, validation: ValidationResult) -> dict[str, Any]:
    """The item attributes that summarise an extraction: what ingest writes, what repair rebuilds."""
    return {
        "status": validation.status,
        "vendorName": invoice.vendorName if invoice else None,
        "invoiceNumber": invoice.invoiceNumber if invoice else None,
        "invoiceDate": invoice.invoiceDate if invoice else None,
        "totalAmount": invoice.totalAmount if invoice else None,
        "currency": invoice.currency if invoice else None,
        "failureCode": validation.errorCode.value if validation.errorCode else None,
        "failureMessage": validation.errorMessage,
        "reviewReasons": list(validation.reasons),
    }


_KEY_ATTRS = frozenset({layout.PK_ATTR, layout.SK_ATTR, layout.GSI1_PK_ATTR, layout.GSI1_SK_ATTR, layout.TTL_ATTR})
_FIELDS = frozenset(DocumentItem.model_fields)
ITEM_ATTRIBUTES = _FIELDS | _KEY_ATTRS


class SourceObject(BaseModel):
    """The raw object a result.json was extracted from (its ObjectInfo, as stored in JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bucket: str
    key: str
    etag: str
    size: int
    lastModified: datetime
    format: DocumentFormat

    @classmethod
    def of(cls, obj: ObjectInfo, fmt: DocumentFormat) -> SourceObject:
        return cls(
            bucket=obj.bucket, key=obj.key, etag=obj.etag, size=obj.size, lastModified=obj.last_modified, format=fmt
        )

    @property
    def uri(self) -> str:
        return layout.s3_uri(self.bucket, self.key)


class Correction(BaseModel):
    """One field a reviewer changed: who, when, and the value before and after (as JSON text)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    before: str | None
    after: str | None
    by: str
    at: datetime

    @field_validator("by")
    @classmethod
    def _actor(cls, v: str) -> str:
        return check_actor(v)


class Settlement(BaseModel):
    """A reviewer accepted the document as it stood: the reasons it had then, and its new status."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    by: str
    at: datetime
    status: Status
    acceptedReasons: list[str] = Field(default_factory=list)

    @field_validator("by")
    @classmethod
    def _actor(cls, v: str) -> str:
        return check_actor(v)


class ReviewRecord(BaseModel):
    """What review did to a document, beside the machine's reading (which result.json keeps)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    corrections: list[Correction] = Field(default_factory=list)
    # The machine's invoice with every correction applied, validated like an extraction.
    invoice: Invoice | None = None
    validation: ValidationResult | None = None
    settled: Settlement | None = None


class ResultDocument(BaseModel):
    """The result.json beside each document (see layout.result_key): all the frontend shows.

    `invoice` and `validation` are the machine's reading; `review`, once a reviewer acted, holds
    the corrections beside it and what the document says after them (`current_*`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schemaVersion: str = RESULT_SCHEMA_VERSION
    userId: str
    documentId: str
    source: SourceObject
    engine: str
    extraction: Any = None
    invoice: Invoice | None = None
    validation: ValidationResult
    createdAt: datetime
    processedAt: datetime
    pipelineVersion: str
    review: ReviewRecord | None = None

    @property
    def current_invoice(self) -> Invoice | None:
        """The invoice as the document now stands: corrected if a reviewer corrected it."""
        return self.review.invoice if self.review and self.review.corrections else self.invoice

    @property
    def current_validation(self) -> ValidationResult:
        """The reasons the document has now: its corrected invoice's, once a reviewer corrected it."""
        return self.review.validation if self.review and self.review.validation else self.validation

    @property
    def current_status(self) -> Status:
        """A document a reviewer acted on stays in review until settled."""
        if self.review and self.review.settled:
            return self.review.settled.status
        return Status.REVIEW_REQUIRED if self.review else self.validation.status

    # The document's retention class (also the object's `retention` tag); None before retention.
    retentionClass: RetentionClass | None = None

    def to_json_bytes(self) -> bytes:
        return self.model_dump_json(indent=None).encode()

    @classmethod
    def from_json_bytes(cls, data: bytes) -> ResultDocument:
        return cls.model_validate_json(data)


def retention_class(claim: DocumentItem, invoice: Invoice | None, policy: RetentionPolicy) -> RetentionClass:
    """The class a finishing document keeps: the one decided when it first finished, else its
    type's class under `policy` (decided now, once).
    """
    return claim.retentionClass or policy.class_of(invoice.documentType if invoice else None)


def retention_fields(item: DocumentItem, retention: RetentionClass, policy: RetentionPolicy) -> dict[str, Any]:
    """The item's retention, counted from its upload (createdAt) like its objects' lifecycle."""
    return {"retentionClass": retention, "retainUntil": policy.retain_until(item.createdAt, retention)}


def tombstone(item: DocumentItem, now: datetime, why: str, actor: str, policy: RetentionPolicy) -> DocumentItem:
    """The DELETED tombstone of a document whose raw object is gone (jobs.contract.status): what
    the ingest writes over its claim and reconcile's repair over a finished item. It keeps the
    document's retention (a document that never finished gets its class now): the tombstone and
    whatever result.json remains expire with the document.
    """
    check_transition(item.status, Status.DELETED)
    retention = {} if item.retainUntil else retention_fields(item, item.retentionClass or policy.class_of(None), policy)
    return item.evolve(
        status=Status.DELETED,
        **held_fields({}),  # the writer deletes its markers in the same transaction
        version=item.version + 1,
        updatedAt=now,
        updatedBy=actor,
        leaseOwner=None,
        leaseExpiresAt=None,
        failureCode=None,
        failureMessage=why,
        **retention,
    )


def finished_item(
    claim: DocumentItem,
    result: ResultDocument,
    result_uri: str,
    result_etag: str | None,
    now: datetime,
    actor: str,
    policy: RetentionPolicy,
) -> DocumentItem:
    """The summary item that ends `claim` with `result`: what the ingest writes when it finishes a
    document, and what reconcile's repair rebuilds from a result.json (from a synthetic claim).
    Its retention class is result.json's (the ingest decides it before writing result.json).
    """
    check_transition(claim.status, result.validation.status)
    retention = result.retentionClass or retention_class(claim, result.invoice, policy)
    return claim.evolve(
        **summary_fields(result.invoice, result.validation),
        **retention_fields(claim, retention, policy),
        updatedAt=now,
        updatedBy=actor,
        version=claim.version + 1,
        sourceFormat=result.source.format,
        resultS3Uri=result_uri,
        resultEtag=result_etag,
        leaseOwner=None,
        leaseExpiresAt=None,
    )
