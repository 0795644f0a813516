"""Duplicate documents: the two identities a document claims within its user, and their markers.

Two uploads of one user are duplicates when they carry the same bytes (CONTENT: the SHA-256 of
the raw object as read) or the same invoice (INVOICE: vendor, number, currency and total, written
alike). Each identity is claimed by one document through a marker item under the user's partition
(`layout.marker_sk`), put with a condition (absent, or already this document's) in the same
transaction that finishes the document, so two documents racing for one identity cannot both
hold it and a marker never outlives, or goes missing from, the document that holds it.

Why markers and not an index: a global secondary index is eventually consistent, so two uploads of
the same bytes processed at once would both find nothing and neither would be flagged; a
conditional write on one key decides the race in DynamoDB itself, in the one request that finishes
the document, and stays inside the user's partition (an erasure of the partition takes them too).
Markers carry no `GSI1PK` (they never reach the status index) and their own `entityType`.
"""

from __future__ import annotations

import hashlib
import unicodedata
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from jobs.contract import layout
from jobs.contract.actors import check_actor
from jobs.contract.ids import DocumentId, UserId
from jobs.contract.invoice import Invoice, ValidationResult
from jobs.contract.status import Status


class DuplicateKind(StrEnum):
    CONTENT = "CONTENT"  # the same bytes under another documentId
    INVOICE = "INVOICE"  # the same vendor + invoice number (+ currency and total)


_REASON_PREFIX = "DUPLICATE_"
_DIGEST_VERSION = "v1"


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _words(text: str) -> str:
    """Compared as people read them: compatibility forms folded, case and spacing ignored."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _amount(value: Decimal | None) -> str:
    if value is None:
        return ""
    if value.is_zero():
        return "0"
    return format(value.normalize(), "f")  # 12.50 and 12.5 are one total


def invoice_digest(vendor: str | None, number: str | None, currency: str | None, total: Decimal | None) -> str | None:
    """The invoice identity, or None when vendor or number is missing (nothing to compare)."""
    if not vendor or not vendor.strip() or not number or not number.strip():
        return None
    parts = (_DIGEST_VERSION, _words(vendor), "".join(_words(number).split()), (currency or "").upper(), _amount(total))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


# Only a readable outcome claims its identities: a FAILED document is retried or dead-lettered,
# and flagging it for review as a duplicate would hide why it failed.
CLAIMING = frozenset({Status.PROCESSED, Status.REVIEW_REQUIRED})


def identities(content: str | None, invoice: Invoice | None) -> dict[DuplicateKind, str]:
    """A document's identities (kind → digest): its bytes' and, when it has one, its invoice's.
    Only a document whose status is in CLAIMING holds their markers.
    """
    found = {DuplicateKind.CONTENT: content}
    if invoice is not None:
        found[DuplicateKind.INVOICE] = invoice_digest(
            invoice.vendorName, invoice.invoiceNumber, invoice.currency, invoice.totalAmount
        )
    return {kind: digest for kind, digest in found.items() if digest is not None}


def with_duplicates(validation: ValidationResult, duplicates: dict[DuplicateKind, str]) -> ValidationResult:
    """The verdict on a document that duplicates others: in review, with a reason naming each one
    (reasons of an earlier verdict on duplicates replaced, the others kept).
    """
    if not duplicates:
        return validation
    reasons = [r for r in validation.reasons if not is_duplicate_reason(r)]
    reasons += [duplicate_reason(kind, other) for kind, other in sorted(duplicates.items())]
    return validation.model_copy(update={"status": Status.REVIEW_REQUIRED, "reasons": reasons})


def duplicate_reason(kind: DuplicateKind, other_document_id: str) -> str:
    """The review reason of a duplicate: its kind and the document that holds the identity."""
    return f"{_REASON_PREFIX}{kind.value}:{other_document_id}"


def duplicates_named(reasons: list[str]) -> dict[DuplicateKind, str]:
    """The documents the duplicate reasons among `reasons` name, by kind."""
    found = {}
    for reason in reasons:
        for kind in DuplicateKind:
            prefix = f"{_REASON_PREFIX}{kind.value}:"
            if reason.startswith(prefix):
                found[kind] = reason[len(prefix) :]
    return found


def is_duplicate_reason(reason: str, kind: DuplicateKind | None = None) -> bool:
    kinds = [kind] if kind is not None else list(DuplicateKind)
    return any(reason.startswith(f"{_REASON_PREFIX}{k.value}:") for k in kinds)


class DuplicateMarker(BaseModel):
    """The marker of one identity of a user's, naming the document that holds it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    userId: UserId
    kind: DuplicateKind
    digest: str
    documentId: DocumentId
    createdAt: datetime
    updatedBy: str
    # The holder's TTL (DocumentItem.expires_at), written with every version of the holder that
    # moves it: DynamoDB's TTL removes a marker with the document it names, never apart from it.
    expiresAt: datetime | None = None

    @field_validator("updatedBy")
    @classmethod
    def _actor(cls, v: str) -> str:
        return check_actor(v)

    @field_validator("createdAt", "expiresAt")
    @classmethod
    def _utc(cls, v: datetime | None) -> datetime | None:
        if v is None:
            return None
        if v.tzinfo is None:
            raise ValueError("times must be timezone-aware UTC")
        return v.astimezone(UTC).replace(microsecond=v.microsecond // 1000 * 1000)

    def key(self) -> dict[str, str]:
        return marker_key(self.userId, self.kind, self.digest)

    def to_item(self) -> dict[str, Any]:
        ttl = {} if self.expiresAt is None else {layout.TTL_ATTR: layout.epoch_seconds(self.expiresAt)}
        return {
            **self.key(),
            **ttl,
            "entityType": layout.ENTITY_DUPLICATE_MARKER,
            "userId": self.userId,
            "kind": self.kind.value,
            "digest": self.digest,
            "documentId": self.documentId,
            "createdAt": layout.format_ts(self.createdAt),
            "updatedBy": self.updatedBy,
        }

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> DuplicateMarker:
        kind, digest = layout.parse_marker_sk(item[layout.SK_ATTR])
        return cls(
            userId=layout.parse_user_pk(item[layout.PK_ATTR]),
            kind=DuplicateKind(kind),
            digest=digest,
            documentId=item["documentId"],
            createdAt=layout.parse_ts(item["createdAt"]),
            updatedBy=item["updatedBy"],
            expiresAt=layout.from_epoch_seconds(item[layout.TTL_ATTR]) if layout.TTL_ATTR in item else None,
        )


def marker_key(user_id: str, kind: DuplicateKind, digest: str) -> dict[str, str]:
    return {layout.PK_ATTR: layout.user_pk(user_id), layout.SK_ATTR: layout.marker_sk(kind.value, digest)}


def is_marker_item(item: dict[str, Any]) -> bool:
    """A raw table item that is a marker (readers that scan a partition or the table use this)."""
    return str(item.get(layout.SK_ATTR, "")).startswith(layout.marker_sk_prefix())
