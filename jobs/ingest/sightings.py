"""Which document of this run came to hold each identity, so a later duplicate within the run is
known before its first write.

The finish takes a document's markers optimistically (jobs.ingest.finishing): a marker another
document holds cancels the whole transaction it rides in, so the finishes of up to TRANSACT_CHUNK
other documents are sent again, and the duplicate's result.json is written twice. Within one run
the holder is often a document the run finished itself (the same file uploaded twice in a night),
so the run remembers which document landed holding each identity. A later document with that
identity reads the holder (one consistent GetItem, by the caller) and, while the holder still
holds it, is written as its duplicate at once. What is remembered is only a hint: the read
decides, and a hint that no longer holds is forgotten and the document takes the optimistic path.

Bounded: the most recent SIGHTINGS_LIMIT identities (about 3.5 MB); an older one costs only the
cancelled transaction it would have cost anyway.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping

from jobs.contract import DuplicateKind

SIGHTINGS_LIMIT = 10_000

_Key = tuple[str, DuplicateKind, str]


class Sightings:
    """Thread-safe: the run's I/O threads ask, the batcher's callbacks record."""

    def __init__(self, limit: int = SIGHTINGS_LIMIT) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._holders: OrderedDict[_Key, str] = OrderedDict()

    def saw(self, user_id: str, held: Mapping[DuplicateKind, str], document_id: str) -> None:
        """`document_id` landed holding the identities `held`."""
        with self._lock:
            for kind, digest in held.items():
                key = (user_id, kind, digest)
                self._holders[key] = document_id
                self._holders.move_to_end(key)
            while len(self._holders) > self._limit:
                self._holders.popitem(last=False)

    def forget(self, user_id: str, released: Mapping[DuplicateKind, str], document_id: str) -> None:
        """`document_id` no longer holds `released` (an entry naming another holder stays)."""
        with self._lock:
            for kind, digest in released.items():
                key = (user_id, kind, digest)
                if self._holders.get(key) == document_id:
                    del self._holders[key]

    def holders(self, user_id: str, digests: Mapping[DuplicateKind, str], document_id: str) -> dict[DuplicateKind, str]:
        """The other documents seen holding the identities `digests` of `document_id` (kind → holder)."""
        with self._lock:
            found = {kind: self._holders.get((user_id, kind, digest)) for kind, digest in digests.items()}
        return {kind: holder for kind, holder in found.items() if holder is not None and holder != document_id}
