"""Writers of the file layouts reconcile reads: DynamoDB exports (full and incremental) and S3
Inventory reports.

AWS writes these files in production; these writers produce the same layouts from a live stack
(tests: "the same state exported to files gives the same findings") or from generated data
(bench/bench_reconcile.py). The readers are `export` and `inventory` beside this module;
docs/reconcile.md describes the formats.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import re
import urllib.parse
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import polars as pl

from jobs.reconcile.inputs.export import EXPORT_FILES, EXPORT_SUMMARY
from jobs.reconcile.inputs.inventory import INVENTORY_MANIFEST

INVENTORY_FIELDS = ("Bucket", "Key", "Size", "LastModifiedDate", "ETag")
_PARQUET_NAMES = {
    "Bucket": "bucket",
    "Key": "key",
    "Size": "size",
    "LastModifiedDate": "last_modified_date",
    "ETag": "e_tag",
}
_URL_SAFE = re.compile(r"^[A-Za-z0-9_.~/-]*$")


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def write_export(
    root: Path, table_arn: str, export_time: datetime, chunks: Iterable[bytes], s3_prefix: str = ""
) -> Path:
    """A full DYNAMODB_JSON export under `root` (the bucket): one gzip data file per chunk.

    A chunk is newline-terminated lines `{"Item": {...DynamoDB JSON...}}`. Returns the export
    directory (`{s3_prefix}AWSDynamoDB/<exportId>/`), the LOCATION reconcile takes.
    """
    return _write(root, table_arn, export_time, chunks, {"exportTime": _stamp(export_time)}, s3_prefix)


def write_incremental_export(
    root: Path, table_arn: str, from_time: datetime, to_time: datetime, chunks: Iterable[bytes]
) -> Path:
    """An incremental export of the window [from_time, to_time): chunks of `change_line`s."""
    window = {
        "exportFromTime": _stamp(from_time),
        "exportToTime": _stamp(to_time),
        "exportType": "INCREMENTAL_EXPORT",
        "outputView": "NEW_AND_OLD_IMAGES",
    }
    return _write(root, table_arn, to_time, chunks, window)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _write(
    root: Path,
    table_arn: str,
    export_time: datetime,
    chunks: Iterable[bytes],
    times: dict[str, str],
    s3_prefix: str = "",
) -> Path:
    export_id = f"{_ms(export_time):013d}-{hashlib.sha256((table_arn + json.dumps(times)).encode()).hexdigest()[:8]}"
    # AWS writes every key under the request's S3Prefix, the manifests' keys included.
    prefix = f"{s3_prefix}AWSDynamoDB/{export_id}/"
    directory = root / prefix
    (directory / "data").mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, object]] = []
    total = 0
    billed = 0
    for number, chunk in enumerate(chunks):
        key = f"{prefix}data/{number:05d}-{export_id[-8:]}.json.gz"
        # mtime=0: the same items give byte-identical files (reproducible fixtures).
        body = gzip.compress(chunk, compresslevel=1, mtime=0)
        (root / key).write_bytes(body)
        count = chunk.count(b"\n")
        total += count
        billed += len(chunk)
        entries.append(
            {
                "itemCount": count,
                # AWS writes the MD5 of an export data file in base64 (inventories: hex).
                "md5Checksum": base64.b64encode(hashlib.md5(body).digest()).decode(),
                "etag": hashlib.md5(body).hexdigest(),
                "dataFileS3Key": key,
            }
        )
    (root / prefix / EXPORT_FILES).write_text("".join(json.dumps(e) + "\n" for e in entries))
    stamp = _stamp(export_time)
    summary = {
        "version": "2020-06-30",
        "exportArn": f"{table_arn}/export/{export_id}",
        "startTime": stamp,
        "endTime": stamp,
        "tableArn": table_arn,
        "tableId": hashlib.sha256(table_arn.encode()).hexdigest()[:32],
        **times,
        "s3Bucket": root.name,
        "s3Prefix": s3_prefix.rstrip("/") or None,
        "s3SseAlgorithm": "AES256",
        "s3SseKmsKeyId": None,
        "manifestFilesS3Key": prefix + EXPORT_FILES,
        "billedSizeBytes": billed,
        "itemCount": total,
        "outputFormat": "DYNAMODB_JSON",
    }
    (root / prefix / EXPORT_SUMMARY).write_text(json.dumps(summary, indent=2))
    return directory


def _url_encode(key: str) -> str:
    return key if _URL_SAFE.match(key) else urllib.parse.quote_plus(key, safe="/")


def write_inventory(
    root: Path,
    source_bucket: str,
    created: datetime,
    frames: Iterable[pl.DataFrame],
    fmt: str = "CSV",
    config_id: str = "docuflow-daily",
) -> Path:
    """An S3 Inventory report under `root` (the destination bucket); returns manifest.json.

    Each frame (columns bucket, key, size, lastModified, etag) becomes one data file:
    `CSV` gzip with URL-encoded keys and every field quoted, or `Parquet` with AWS's column names.
    """
    base = f"{source_bucket}/{config_id}/"
    (root / base / "data").mkdir(parents=True, exist_ok=True)
    files: list[dict[str, object]] = []
    for number, frame in enumerate(f for f in frames if f.height):
        out = frame.select(
            pl.col("bucket").alias("Bucket"),
            pl.col("key").alias("Key"),
            pl.col("size").alias("Size"),
            pl.col("lastModified").dt.convert_time_zone("UTC").alias("LastModifiedDate"),
            pl.col("etag").str.strip_chars('"').alias("ETag"),
        )
        if fmt == "CSV":
            out = out.with_columns(
                pl.col("Key").map_elements(_url_encode, return_dtype=pl.String),
                pl.col("LastModifiedDate").dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"),
            )
            buffer = io.BytesIO()
            out.write_csv(buffer, include_header=False, quote_style="always")
            body = gzip.compress(buffer.getvalue(), compresslevel=1, mtime=0)
            key = f"{base}data/{number:05d}.csv.gz"
        elif fmt == "Parquet":
            buffer = io.BytesIO()
            out.rename(_PARQUET_NAMES).write_parquet(buffer)
            body = buffer.getvalue()
            key = f"{base}data/{number:05d}.parquet"
        else:
            raise ValueError(f"inventory format {fmt!r}: CSV or Parquet")
        (root / key).write_bytes(body)
        files.append({"key": key, "size": len(body), "MD5checksum": hashlib.md5(body).hexdigest()})
    manifest = {
        "sourceBucket": source_bucket,
        "destinationBucket": f"arn:aws:s3:::{root.name}",
        "version": "2016-11-30",
        "creationTimestamp": str(_ms(created)),
        "fileFormat": fmt,
        "fileSchema": ", ".join(INVENTORY_FIELDS),
        "files": files,
    }
    manifest_dir = root / base / created.strftime("%Y-%m-%dT%H-%MZ")
    manifest_dir.mkdir(parents=True, exist_ok=True)
    (manifest_dir / INVENTORY_MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest_dir / INVENTORY_MANIFEST


def export_line(wire_item: dict[str, object]) -> str:
    """One export line for an item already in DynamoDB JSON (e.g. straight from a Scan)."""
    return json.dumps({"Item": wire_item}, separators=(",", ":")) + "\n"


def change_line(keys: dict[str, object], new_image: dict[str, object] | None, written: datetime) -> str:
    """One incremental export line: the item's key attributes and its final image in the window
    (None: it was deleted), in DynamoDB JSON.
    """
    record: dict[str, object] = {
        "Metadata": {"WriteTimestampMicros": {"N": str(int(written.timestamp() * 1_000_000))}},
        "Keys": keys,
    }
    if new_image is not None:
        record["NewImage"] = new_image
    return json.dumps(record, separators=(",", ":")) + "\n"
