"""Test helpers: a live stack's state in the AWS file layouts reconcile reads, and files or frames
judged whole in memory.

The table goes out as a DYNAMODB_JSON export (items straight from a Scan, already DynamoDB JSON),
each bucket as an S3 Inventory report, so a files-source run sees exactly the live state. The
readers stream data file by data file; `read_export` and `files_snapshot` hold everything at once,
and `judged_in_memory` runs the polars engine over such a snapshot with fixed rule parameters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

from jobs.contract import layout
from jobs.local.writers import (
    change_line,
    export_line,
    write_export,
    write_incremental_export,
    write_inventory,
)
from jobs.reconcile.engines import ReadResults
from jobs.reconcile.engines.polars import PolarsEngine
from jobs.reconcile.inputs.export import export_frames, full_export_manifest
from jobs.reconcile.inputs.inventory import InventoryManifest, inventory_frames, inventory_pair
from jobs.reconcile.rules.findings import render
from jobs.reconcile.rules.frames import ITEMS_SCHEMA, OBJECTS_SCHEMA, Snapshot, concat
from jobs.reconcile.rules.params import RuleParams
from jobs.store.s3 import Buckets


def read_export(location: str, buckets: Buckets | None, deep: bool) -> tuple[pl.DataFrame, datetime]:
    """A full export's items in one frame, and its export time."""
    manifest = full_export_manifest(location, buckets)
    return concat(list(export_frames(manifest, deep)), ITEMS_SCHEMA), manifest.export_time


def _objects(manifest: InventoryManifest) -> pl.DataFrame:
    return concat(list(inventory_frames(manifest)), OBJECTS_SCHEMA)


def files_snapshot(
    export: str, manifests: list[str], buckets: Buckets | None, raw_bucket: str, processed_bucket: str, deep: bool
) -> Snapshot:
    """An export and the two buckets' inventories, every row in memory."""
    items, export_time = read_export(export, buckets, deep)
    raw, processed = inventory_pair(manifests, buckets, raw_bucket, processed_bucket)
    return Snapshot(
        items,
        _objects(raw),
        _objects(processed),
        taken_at={"table": export_time, "raw": raw.created, "processed": processed.created},
        inputs={"table": export, "raw": raw.where, "processed": processed.where},
    )


def judged_in_memory(snapshot: Snapshot, params: RuleParams, read: ReadResults | None = None) -> pl.DataFrame:
    """The polars engine's findings over `snapshot` in memory, rendered, judged with `params` as given."""
    found = PolarsEngine(lambda: snapshot, read).find(lambda _as_of: params)
    return render(found.wide)


@dataclass(frozen=True)
class ExportedState:
    export: str
    manifests: list[str]

    def argv(self) -> list[str]:
        out = ["files", "--dynamodb-export", self.export]
        for manifest in self.manifests:
            out += ["--s3-inventory", manifest]
        return out

    def in_s3(self, stack, root: Path) -> ExportedState:
        """Upload the bucket trees under `root` (one bucket per top directory) and return the
        same state as s3:// locations, as AWS would leave them.
        """
        s3 = stack.s3()
        for bucket_dir in (d for d in root.iterdir() if d.is_dir()):
            s3.create_bucket(Bucket=bucket_dir.name)
            for path in (p for p in bucket_dir.rglob("*") if p.is_file()):
                s3.put_object(
                    Bucket=bucket_dir.name, Key=path.relative_to(bucket_dir).as_posix(), Body=path.read_bytes()
                )

        return ExportedState(s3_location(root, self.export) + "/", [s3_location(root, m) for m in self.manifests])


def s3_location(root: Path, local: str) -> str:
    """Where a file under `root` is once the tree is uploaded (`ExportedState.in_s3`)."""
    relative = Path(local).relative_to(root)
    return f"s3://{relative.parts[0]}/{Path(*relative.parts[1:]).as_posix()}"


def scan(stack) -> list[dict]:
    """Every item of the table, in DynamoDB JSON."""
    pages = stack.dynamodb().get_paginator("scan").paginate(TableName=stack.settings.store.table_name)
    return [item for page in pages for item in page.get("Items", [])]


def export_changes(stack, root: Path, before: list[dict], since: datetime) -> str:
    """An incremental export of what changed in the table since `before` was scanned: the final
    image of every new or changed item, the key of every deleted one.
    """
    key = (layout.PK_ATTR, layout.SK_ATTR)

    def by_key(items: list[dict]) -> dict[tuple, dict]:
        return {tuple(json.dumps(item[a], sort_keys=True) for a in key): item for item in items}

    old, new = by_key(before), by_key(scan(stack))
    now = layout.utc_now()
    lines = [change_line({a: item[a] for a in key}, item, now) for k, item in new.items() if old.get(k) != item]
    lines += [change_line({a: item[a] for a in key}, None, now) for k, item in old.items() if k not in new]
    table_arn = f"arn:aws:dynamodb:local:000000000000:table/{stack.settings.store.table_name}"
    return str(
        write_incremental_export(
            root / f"{stack.settings.stage}-exports", table_arn, since, now, ["".join(lines).encode()]
        )
    )


def export_state(stack, root: Path, fmt: str = "CSV", rows_per_file: int = 3) -> ExportedState:
    settings = stack.settings
    lines: list[str] = []
    for page in stack.dynamodb().get_paginator("scan").paginate(TableName=settings.store.table_name):
        lines += [export_line(item) for item in page.get("Items", [])]
    # Several data files, as AWS writes them, so the readers' per-file path is exercised.
    chunks = [("".join(lines[i : i + rows_per_file])).encode() for i in range(0, len(lines), rows_per_file)]
    # Directory names double as bucket names when the tree is uploaded (upload_tree).
    exports_root = root / f"{settings.stage}-exports"
    export = write_export(
        exports_root, f"arn:aws:dynamodb:local:000000000000:table/{settings.store.table_name}", layout.utc_now(), chunks
    )
    inventory_root = root / f"{settings.stage}-inventory"
    manifests = []
    s3 = stack.s3()
    for bucket in (settings.store.raw_bucket, settings.store.processed_bucket):
        rows = [
            {"bucket": bucket, "key": o["Key"], "size": o["Size"], "lastModified": o["LastModified"], "etag": o["ETag"]}
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for o in page.get("Contents", [])
        ]
        frame = pl.DataFrame(
            rows,
            schema={
                "bucket": pl.String,
                "key": pl.String,
                "size": pl.Int64,
                "lastModified": pl.Datetime("ms", "UTC"),
                "etag": pl.String,
            },
            orient="row",
        )
        frames = [frame.slice(i, rows_per_file) for i in range(0, max(frame.height, 1), rows_per_file)]
        manifests.append(write_inventory(inventory_root, bucket, layout.utc_now(), frames, fmt))
    return ExportedState(str(export), [str(m) for m in manifests])
