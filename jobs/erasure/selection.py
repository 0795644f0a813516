"""What one pass of an erasure deletes, from what it read: pure, no I/O.

The user's partition holds their documents' items, their duplicate markers, any other item a tool
keeps there, and the erasure marker. A document under a legal hold is kept whole: its item, the
duplicate markers that name it, and every version under its raw and processed prefixes.
Everything else goes: every other item (the erasure marker aside), and
every version and delete marker under the user's raw and processed prefixes, whether or not
its key follows the layout.
"""

from __future__ import annotations

from collections import Counter
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

    def _kept_item(self, item: dict[str, Any]) -> bool:
        """A duplicate marker naming a held document stays with it (it still claims the identity)."""
        held = {d.documentId for d in self.held}
        return is_marker_item(item) and item.get("documentId") in held

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

    def deletions(self) -> list[ItemToDelete]:
        docs = [ItemToDelete(d.key(), d.version, d) for d in self.documents if not d.held]
        others = [
            ItemToDelete(
                {layout.PK_ATTR: str(i[layout.PK_ATTR]), layout.SK_ATTR: str(i[layout.SK_ATTR])},
                int(i["version"]) if "version" in i else None,
            )
            for i in self.others
            if not self._kept_item(i)
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


def kept_documents(partition: Partition, versions: Counter[str]) -> list[KeptDocument]:
    """The held documents as the receipt lists them, with the versions the hold keeps."""
    return [
        KeptDocument(
            documentId=d.documentId,
            legalHoldAt=d.legalHoldAt,
            legalHoldBy=d.legalHoldBy,
            versions=versions[d.documentId],
        )
        for d in partition.held
        if d.legalHoldAt is not None and d.legalHoldBy is not None
    ]
