"""Test helper: export a live stack's table and buckets to the AWS file layouts reconcile reads.

The table goes out as a DYNAMODB_JSON export (items straight from a Scan, already DynamoDB JSON),
each bucket as an S3 Inventory report, so a files-source run sees exactly the live state.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from jobs.contract import layout
from jobs.reconcile.exports import export_line, write_export, write_inventory


@dataclass(frozen=True)
class ExportedState:
    export: Path
    manifests: list[Path]

    def argv(self) -> list[str]:
        out = ["--source", "files", "--dynamodb-export", str(self.export)]
        for manifest in self.manifests:
            out += ["--s3-inventory", str(manifest)]
        return out


def export_state(stack, root: Path, fmt: str = "CSV", rows_per_file: int = 3) -> ExportedState:  # noqa: ANN001
    settings = stack.settings
    lines: list[str] = []
    for page in stack.dynamodb().get_paginator("scan").paginate(TableName=settings.table_name):
        lines += [export_line(item) for item in page.get("Items", [])]
    # Several data files, as AWS writes them, so the readers' per-file path is exercised.
    chunks = [("".join(lines[i : i + rows_per_file])).encode() for i in range(0, len(lines), rows_per_file)]
    exports_root = root / "exports-bucket"
    export = write_export(exports_root, f"arn:aws:dynamodb:local:000000000000:table/{settings.table_name}", layout.utc_now(), chunks)
    inventory_root = root / "inventory-bucket"
    manifests = []
    s3 = stack.s3()
    for bucket in (settings.raw_bucket, settings.processed_bucket):
        rows = [
            {"bucket": bucket, "key": o["Key"], "size": o["Size"], "lastModified": o["LastModified"], "etag": o["ETag"]}
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for o in page.get("Contents", [])
        ]
        frame = pl.DataFrame(
            rows,
            schema={"bucket": pl.String, "key": pl.String, "size": pl.Int64, "lastModified": pl.Datetime("ms", "UTC"), "etag": pl.String},
            orient="row",
        )
        frames = [frame.slice(i, rows_per_file) for i in range(0, max(frame.height, 1), rows_per_file)]
        manifests.append(write_inventory(inventory_root, bucket, layout.utc_now(), frames, fmt))
    return ExportedState(export, manifests)
