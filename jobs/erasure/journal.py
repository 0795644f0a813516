"""The erasure's write-ahead count: what a batch is about to delete, and what of it landed. Pure.

Counting a batch after its request lands loses it when the run is killed in between (with
DeleteObjects of 1,000 versions, the request is where a kill most likely lands: a resumed run
counted 530 of 1,530 versions). So before each DeleteObjects request or item transaction the
run writes the batch into its marker (`ErasurePending`): a fingerprint per version, delete
marker, item and document item. The counts of the batch before it are added in the same write,
from the answer of its request. A run that resumes with a batch still pending counts the
fingerprints it no longer finds stored (each version id is unique, so a version gone is one this
erasure deleted), then goes on: every batch is counted exactly once, whatever the kill hit.

A fingerprint is 8 bytes of SHA-256 (16 hex characters): a batch of 1,000 adds 16 KB to the
marker, far below DynamoDB's 400 KB item limit, whatever the keys' length; two of one user's
versions meeting on 64 bits is not a case to design for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

from jobs.contract import layout
from jobs.contract.erasure import ErasureCounts, ErasurePending
from jobs.contract.objects import ObjectVersion
from jobs.erasure.selection import ItemToDelete


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).digest()[:8].hex()


def version_print(version: ObjectVersion) -> str:
    """One version's (or delete marker's) fingerprint: its bucket, key and version id."""
    return _digest("v", version.bucket, version.key, version.version_id)


def item_print(key: dict[str, str]) -> str:
    """One item's fingerprint: its primary key."""
    return _digest("i", key[layout.PK_ATTR], key[layout.SK_ATTR])


def versions_pending(versions: Sequence[ObjectVersion]) -> ErasurePending:
    return ErasurePending(
        versions=[version_print(v) for v in versions if not v.delete_marker],
        deleteMarkers=[version_print(v) for v in versions if v.delete_marker],
    )


def items_pending(items: Sequence[ItemToDelete]) -> ErasurePending:
    return ErasurePending(
        items=[item_print(t.key) for t in items if not t.document],
        documents=[item_print(t.key) for t in items if t.document],
    )


def stored_prints(versions: Iterable[ObjectVersion], items: Iterable[Mapping[str, Any]]) -> set[str]:
    """The fingerprints of what is stored now: the user's versions and the partition's items."""
    found = {version_print(v) for v in versions}
    found |= {
        item_print({layout.PK_ATTR: str(i[layout.PK_ATTR]), layout.SK_ATTR: str(i[layout.SK_ATTR])}) for i in items
    }
    return found


def landed(pending: ErasurePending, stored: Set[str]) -> ErasureCounts:
    """What of a pending batch is no longer stored: deleted by the run that wrote it. A document
    item counts among the items too, as the run counts it.
    """

    def gone(prints: list[str]) -> int:
        return sum(p not in stored for p in prints)

    documents = gone(pending.documents)
    return ErasureCounts(
        versions=gone(pending.versions),
        deleteMarkers=gone(pending.deleteMarkers),
        items=gone(pending.items) + documents,
        documents=documents,
    )
