"""Full table exports as a restore source: find them under a location, read their items whole.

An export is what `ExportTableToPointInTime` writes (and what the local stand-in, `python -m jobs
local export-table`, writes the same way): `AWSDynamoDB/<id>/manifest-summary.json`, the manifest
of its data files, and gzip data files of `{"Item": {...}}` lines in DynamoDB JSON. AWS's import
from S3 reads exactly these files ("exports from point in time are supported as an import source
by default", DynamoDB developer guide, "Amazon S3 import formats for DynamoDB"); DynamoDB Local has
no import, so the items are written into the new table in batches instead, file by file, each file
checked against its manifest entry (size, MD5, item count) before any of its items is written.

Manifests are read by the reconcile package's export reader (one reader of the format); unlike
the reconcile, a restore keeps every attribute of every item, so the data files are parsed here.
"""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs.contract import layout
from jobs.errors import ReconcileInputError
from jobs.reconcile.inputs.export import EXPORT_SUMMARY, ExportManifest, export_manifest, full_export_manifest

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

ITEMS_PER_BATCH = 500


def find_exports(root: str, buckets: Buckets | None) -> list[ExportManifest]:
    """Every readable export under `root` (a directory or an s3:// prefix); an unreadable one is
    logged and left out, so it can never be the one restored.
    """
    found = []
    for location in _summaries(root, buckets):
        try:
            found.append(export_manifest(location, buckets))
        except ReconcileInputError as exc:
            logger.warning("export left out: unreadable", extra={"export": location, "reason": str(exc)})
    return found


def _summaries(root: str, buckets: Buckets | None) -> list[str]:
    if not root.startswith("s3://"):
        path = Path(root)
        return sorted(str(p) for p in path.rglob(EXPORT_SUMMARY)) if path.is_dir() else []
    if buckets is None:
        raise ReconcileInputError(f"{root}: no S3 client to list it with")
    bucket, _, prefix = root.removeprefix("s3://").partition("/")
    return sorted(
        layout.s3_uri(bucket, o.key)
        for page in buckets.list_pages(bucket, prefix)
        for o in page
        if o.key.endswith(f"/{EXPORT_SUMMARY}")
    )


def export_batches(location: str, buckets: Buckets | None) -> Iterator[list[dict[str, Any]]]:
    """The export's items in DynamoDB JSON, ITEMS_PER_BATCH at a time, file by checked file."""
    manifest = full_export_manifest(location, buckets)
    total = 0
    for entry in manifest.files:
        items = _items(entry.read(), entry.location.text)
        if entry.item_count is not None and len(items) != entry.item_count:
            raise ReconcileInputError(
                f"{entry.location.text} holds {len(items)} items, the manifest says {entry.item_count}"
            )
        total += len(items)
        for start in range(0, len(items), ITEMS_PER_BATCH):
            yield items[start : start + ITEMS_PER_BATCH]
    if manifest.item_count is not None and manifest.item_count != total:
        raise ReconcileInputError(f"{manifest.where} declares {manifest.item_count} items, the data files hold {total}")


def _items(data: bytes, where: str) -> list[dict[str, Any]]:
    try:
        text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")
        return [json.loads(line)["Item"] for line in text.splitlines() if line.strip()]
    except (OSError, EOFError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise ReconcileInputError(f"{where} is not a DYNAMODB_JSON data file: {type(exc).__name__}: {exc}") from exc
