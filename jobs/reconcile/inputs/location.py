"""A file reconcile reads or writes, given as a local path or an s3:// URI.

Owns the one switch between the two: reading, checking existence, writing once, and finding a
file's siblings (a manifest names its data files by bucket key; locally the directory tree mirrors
the bucket). Every failure to read is a ReconcileInputError naming the location.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from jobs.contract import layout
from jobs.errors import InvalidKeyError, ReconcileInputError

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets


class Location:
    """A file given as a local path or an s3:// URI; siblings are found relative to it."""

    def __init__(self, text: str, buckets: Buckets | None) -> None:
        self.text = text
        self._buckets = buckets
        if text.startswith("s3://"):
            try:
                self.bucket, self.key = layout.parse_s3_uri(text)
            except InvalidKeyError as exc:
                raise ReconcileInputError(str(exc)) from exc
            self.path: Path | None = None
        else:
            self.bucket, self.key, self.path = "", "", Path(text)

    def read(self) -> bytes:
        try:
            if self.path is not None:
                return self.path.read_bytes()
            if self._buckets is None:
                raise ReconcileInputError(f"{self.text}: no S3 client to read it with")
            return self._buckets.get_bytes(self.bucket, self.key)
        except ReconcileInputError:
            raise
        except Exception as exc:
            raise ReconcileInputError(f"cannot read {self.text}: {type(exc).__name__}: {exc}") from exc

    def exists(self) -> bool:
        if self.path is not None:
            return self.path.exists()
        if self._buckets is None:
            raise ReconcileInputError(f"{self.text}: no S3 client to look it up with")
        return self._buckets.head(self.bucket, self.key) is not None

    def write_once(self, data: bytes, content_type: str) -> None:
        """Create the file; an existing one is never replaced (S3ObjectExistsError / FileExistsError)."""
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("xb") as handle:
                handle.write(data)
            return
        if self._buckets is None:
            raise ReconcileInputError(f"{self.text}: no S3 client to write it with")
        self._buckets.put_once(self.bucket, self.key, data, content_type)

    @property
    def name(self) -> str:
        """The last component of the location (a state's directory name)."""
        if self.path is not None:
            return self.path.name
        return self.key.rstrip("/").rsplit("/", 1)[-1]

    @property
    def parent(self) -> str:
        """The location of the directory holding this one, as text (siblings share it)."""
        if self.path is not None:
            return str(self.path.parent)
        return layout.s3_uri(self.bucket, self.key.rstrip("/").rpartition("/")[0])

    def sibling(self, name: str) -> Location:
        """`name` beside this location, in the same directory."""
        if self.path is not None:
            return Location(str(self.path.parent / name), self._buckets)
        directory = self.key.rstrip("/").rpartition("/")[0]
        return Location(layout.s3_uri(self.bucket, f"{directory}/{name}" if directory else name), self._buckets)

    def child(self, name: str) -> Location:
        if self.path is not None:
            return Location(str(self.path / name), self._buckets)
        return Location(layout.s3_uri(self.bucket, self.key.rstrip("/") + "/" + name), self._buckets)

    def bucket_key(self, key: str, bucket: str | None = None) -> Location:
        """Another object of the same bucket (manifests name data files by bucket key).

        Locally the directory tree mirrors the bucket: the key is looked up under each parent
        of this file, so a copied-down export or inventory reads like the one in S3.
        """
        if self.path is None:
            return Location(layout.s3_uri(bucket or self.bucket, key), self._buckets)
        for parent in self.path.parents:
            candidate = parent / key
            if candidate.is_file():
                return Location(str(candidate), self._buckets)
        raise ReconcileInputError(f"{self.text} names {key!r}, which is not under any parent directory")
