"""What one pass of an erasure deletes, from what it read: pure, no I/O.

The user's partition holds their documents' items, their duplicate markers, any other item a tool
keeps there, and the erasure marker. A document under a legal hold is kept whole: its item, the
duplicate markers that name it, and every version under its raw and processed prefixes. A
document with a version S3 holds while its item records no hold (a hold that did not finish)
keeps its item and markers too, beside what S3 keeps: the pass learns it from S3's refusal, as
the item does not say so, and a rerun of the hold finds the item to complete.
Everything else goes: every other item (the erasure marker aside), and
every version and delete marker under the user's raw and processed prefixes, whether or not
its key follows the layout.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Set
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jobs.contract import DocumentItem, Status, layout
from jobs.contract.duplicates import is_marker_item
from jobs.contract.erasure import KeptDocument
from jobs.contract.objects import ObjectVersion


@dataclass(frozen=True)
class ItemToDelete:
    key: dict[str, str]
    version: int | None  # None: an item without a version attribute (not a document's)
    item: DocumentItem | None = None  # a document's, as read (its last version names the erasure)

    @property
    def document(self) -> bool:
        return self.item is not None


@dataclass
class Partition:
    """The user's items as one pass read them (the marker excluded)."""

    documents: list[DocumentItem] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, items: list[dict[str, Any]]) -> Partition:
        found = cls()
        for item in items:
            sk = str(item[layout.SK_ATTR])
            if layout.is_document_sk(sk):
                found.documents.append(DocumentItem.from_item(item))
            elif item.get("entityType") != layout.ENTITY_ERASURE:
                found.others.append(item)
        return found

    @property
    def held(self) -> list[DocumentItem]:
        return [d for d in self.documents if d.held]

    def _kept_item(self, item: dict[str, Any], kept: Set[str]) -> bool:
        """A duplicate marker naming a kept document stays with it (it still claims the identity)."""
        return is_marker_item(item) and item.get("documentId") in kept

    def kept_prefixes(self) -> dict[str, str]:
        """The prefixes of the held documents' objects, in both buckets: prefix -> documentId."""
        return {
            prefix: d.documentId
            for d in self.held
            for prefix in (
                layout.raw_document_prefix(d.userId, d.documentId),
                layout.result_document_prefix(d.userId, d.documentId),
            )
        }

    def deletions(self, held_versions: Set[str] = frozenset()) -> list[ItemToDelete]:
        """Every item but the held documents', and those of `held_versions` (documents with a
        version S3 holds).
        """
        kept = {d.documentId for d in self.held} | held_versions
        docs = [ItemToDelete(d.key(), d.version, d) for d in self.documents if d.documentId not in kept]
        others = [
            ItemToDelete(
                {layout.PK_ATTR: str(i[layout.PK_ATTR]), layout.SK_ATTR: str(i[layout.SK_ATTR])},
                int(i["version"]) if "version" in i else None,
            )
            for i in self.others
            if not self._kept_item(i, kept)
        ]
        return docs + others

    def leases_until(self, now: datetime) -> datetime | None:
        """The latest lease a claim on a document being erased holds: its writer may still write
        (result.json, a tombstone) until then. A held document's writes are kept anyway.
        """
        leases = [
            d.leaseExpiresAt
            for d in self.documents
            if not d.held and d.status == Status.PROCESSING and d.leaseExpiresAt is not None and d.leaseExpiresAt > now
        ]
        return max(leases, default=None)


def kept_by(version: ObjectVersion, prefixes: dict[str, str]) -> str | None:
    """The held document a version belongs to, or None when the erasure deletes it."""
    return next((doc for prefix, doc in prefixes.items() if version.key.startswith(prefix)), None)


def document_of(key: str, user_prefix: str) -> str:
    """The documentId of a key under the user's raw or processed prefix (its first segment)."""
    return key.removeprefix(user_prefix).split("/", 1)[0]


def kept_documents(partition: Partition, versions: Counter[str], held_versions: Set[str]) -> list[KeptDocument]:
    """The documents a legal hold keeps, as the receipt lists them, with the versions it keeps:
    the held documents, then those whose versions only S3 holds (with their item, if any).
    """
    held = [
        KeptDocument(
            documentId=d.documentId,
            legalHoldAt=d.legalHoldAt,
            legalHoldBy=d.legalHoldBy,
            versions=versions[d.documentId],
        )
        for d in partition.held
    ]
    items = {d.documentId for d in partition.documents}
    by_s3 = [
        KeptDocument(documentId=doc, versions=versions[doc], itemKept=doc in items)
        for doc in sorted(held_versions - {k.documentId for k in held})
    ]
    return held + by_s3
