"""The data files an AWS manifest lists, read and checked: what the export and inventory readers share.

A data file's bytes are checked against its manifest entry (size, MD5, an empty or truncated
file) before anything is parsed, so a damaged file is an error (exit 2), never "no objects";
manifests' JSON fields are read with one clear error each; data files are inflated as streams and
read two at a time (`bounded_map`); freed parse buffers go back to the OS after each (`trim_heap`).
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import hashlib
import io
import json
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, BinaryIO, TypeVar

from jobs.errors import ReconcileInputError
from jobs.reconcile.inputs.location import Location

try:  # ISA-L inflates gzip faster than zlib (docs/reconcile.md); same format, so zlib is the fallback
    from isal.igzip import open as _gzip_open
except ImportError:  # pragma: no cover - isal is in requirements-jobs.txt
    from gzip import open as _gzip_open

T = TypeVar("T")
R = TypeVar("R")
# Arrow parses JSON and CSV data files this many bytes at a time: memory stays at a few blocks.
PARSE_BLOCK_BYTES = 16 << 20


def trim_heap() -> None:
    """Give glibc's freed heap pages back to the OS after a parse: Arrow's system pool allocates
    many block-sized buffers, and without a trim they stay resident (docs/reconcile.md).
    """
    with contextlib.suppress(OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def json_object(location: Location) -> dict[str, Any]:
    try:
        data = json.loads(location.read())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReconcileInputError(f"{location.text} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ReconcileInputError(f"{location.text} is not a JSON object")
    return data


def require(data: dict[str, Any], name: str, where: str) -> Any:
    if name not in data or data[name] in (None, ""):
        raise ReconcileInputError(f"{where} has no {name!r}")
    return data[name]


def parse_time(text: str, where: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError as exc:
        raise ReconcileInputError(f"{where}: {text!r} is not an ISO-8601 time") from exc


def _md5_matches(data: bytes, expected: str) -> bool:
    """S3 Inventory manifests give the MD5 in hex, DynamoDB export manifests in base64."""
    digest = hashlib.md5(data).digest()
    return expected.lower() == digest.hex() or expected == base64.b64encode(digest).decode()


def data_file(location: Location, size: int | None = None, md5: str | None = None) -> bytes:
    """A data file's bytes, checked against its manifest entry: an empty, truncated or replaced
    file is an error, never "no objects" (which would read as every object missing).
    """
    data = location.read()
    if not data:
        raise ReconcileInputError(f"{location.text} is empty (0 bytes): a damaged or truncated data file")
    if size is not None and len(data) != size:
        raise ReconcileInputError(f"{location.text} is {len(data)} bytes, its manifest says {size}")
    if md5 and not _md5_matches(data, md5):
        raise ReconcileInputError(
            f"{location.text}: its MD5 does not match the manifest's checksum (damaged or replaced)"
        )
    return data


def refuse_duplicates(keys: list[str], where: str) -> None:
    """A manifest that lists a data file twice would count its rows twice: refused."""
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise ReconcileInputError(f"{where}: data file {key!r} is listed twice (its rows would count twice)")
        seen.add(key)


@contextmanager
def opened(data: bytes) -> Iterator[BinaryIO]:
    """A data file as a stream, gunzipped on the fly when it is gzip."""
    with io.BytesIO(data) as handle:
        if data[:2] == b"\x1f\x8b":
            with _gzip_open(handle) as inflated:
                yield inflated
        else:
            yield handle


@dataclass(frozen=True)
class DataFile:
    """One data file a manifest lists, with what the manifest says about it."""

    location: Location
    item_count: int | None = None  # exports
    size: int | None = None  # inventories
    md5: str | None = None

    def read(self) -> bytes:
        """The checked bytes; a gzip file that inflates to nothing is refused unless the manifest
        counts 0 items in it (an export of an empty table segment).
        """
        data = data_file(self.location, self.size, self.md5)
        if self.item_count != 0 and data[:2] == b"\x1f\x8b":
            try:
                with _gzip_open(io.BytesIO(data)) as inflated:
                    empty = not inflated.read(1)
            except (OSError, EOFError) as exc:
                raise ReconcileInputError(f"{self.location.text} is not valid gzip: {exc}") from exc
            if empty:
                raise ReconcileInputError(f"{self.location.text} holds no rows (an empty data file): damaged")
        return data


def bounded_map(fn: Callable[[T], R], entries: list[T], width: int = 2) -> Iterator[R]:
    """`fn` over `entries` on `width` threads, results in order, at most `width` ahead of the
    consumer (Executor.map would parse every file before the first is consumed).
    """
    with ThreadPoolExecutor(width, thread_name_prefix="files") as pool:
        pending: deque[Future[R]] = deque()
        for entry in entries:
            pending.append(pool.submit(fn, entry))
            if len(pending) >= width:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
