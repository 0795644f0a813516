"""What the jobs know of one stored S3 object (listing, head, event) or of one version of it:
pure, no AWS types.

ETags are kept as S3 returns them (quoted); `bare_etag` is the one place the quotes come off,
for comparisons with inventories and exports that drop them. An event also carries S3's
`sequencer`, the order of the events of one key (a listing or a head has none).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from jobs.contract import layout


def bare_etag(etag: str) -> str:
    return etag.strip('"')


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    bucket: str
    key: str
    etag: str
    size: int
    last_modified: datetime
    sequencer: str | None = None  # hex, from an S3 event only (jobs.ingest.plan orders by it)

    @property
    def uri(self) -> str:
        return layout.s3_uri(self.bucket, self.key)

    def same_version(self, uri: str, etag: str) -> bool:
        """Is this the object (key and content) that `uri`/`etag` name? Identity is both: the
        same bytes under a new name are a new object.
        """
        return self.uri == uri and bare_etag(self.etag) == bare_etag(etag)


@dataclass(frozen=True, slots=True)
class ObjectVersion:
    """One entry of a version listing: a version of an object, or a delete marker (no ETag).

    A user's delete hides a document behind delete markers; a restore removes them; the erasure
    and S3's lifecycle delete versions and markers alike.
    """

    bucket: str
    key: str
    version_id: str
    last_modified: datetime
    is_latest: bool
    delete_marker: bool
    etag: str | None = None
    size: int = 0
