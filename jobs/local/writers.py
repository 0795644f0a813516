"""Writers of the file layouts reconcile reads: DynamoDB exports (full and incremental) and S3
Inventory reports.

AWS writes these files in production; these writers produce the same layouts from a live stack
(tests: "the same state exported to files gives the same findings") or from generated data
(bench/bench_reconcile.py). The readers are jobs/reconcile/inputs/export.py and inventory.py;
docs/reconcile.md describes the formats. Part of the local stack, which the job image does not
carry: production reads these files, it never writes them.
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
    return _written(root, export_objects(table_arn, export_time, chunks, None, root.name, s3_prefix))


def write_incremental_export(
    root: Path, table_arn: str, from_time: datetime, to_time: datetime, chunks: Iterable[bytes]
) -> Path:
    """An incremental export of the window [from_time, to_time): chunks of `change_line`s."""
    return _written(root, export_objects(table_arn, to_time, chunks, from_time, root.name))


def _written(root: Path, export: tuple[str, dict[str, bytes]]) -> Path:
    directory, objects = export
    for key, body in objects.items():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(body)
    return root / directory


def _data_files(
    directory: str, export_id: str, chunks: Iterable[bytes]
) -> tuple[dict[str, bytes], list[dict[str, object]]]:
    """One gzip data file per chunk, and its manifest entry (with its uncompressed size, `billed`)."""
    objects: dict[str, bytes] = {}
    entries: list[dict[str, object]] = []
    for number, chunk in enumerate(chunks):
        key = f"{directory}data/{number:05d}-{export_id[-8:]}.json.gz"
        # mtime=0: the same items give byte-identical files (reproducible fixtures).
        objects[key] = body = gzip.compress(chunk, compresslevel=1, mtime=0)
        entries.append(
            {
                "itemCount": chunk.count(b"\n"),
                # AWS writes the MD5 of an export data file in base64 (inventories: hex).
                "md5Checksum": base64.b64encode(hashlib.md5(body).digest()).decode(),
                "etag": hashlib.md5(body).hexdigest(),
                "dataFileS3Key": key,
                "billed": len(chunk),
            }
        )
    return objects, entries


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def export_objects(
    table_arn: str,
    export_time: datetime,
    chunks: Iterable[bytes],
    from_time: datetime | None,
    bucket: str,
    prefix: str = "",
) -> tuple[str, dict[str, bytes]]:
    """The objects of one export as DynamoDB writes them under `prefix` of `bucket`: (the export
    directory's key, {key: bytes}). A full export at `export_time`, or with `from_time` the
    incremental export of [from_time, export_time).
    """
    times = {"exportTime": _stamp(export_time)}
    if from_time is not None:
        times = {
            "exportFromTime": _stamp(from_time),
            "exportToTime": _stamp(export_time),
            "exportType": "INCREMENTAL_EXPORT",
            "outputView": "NEW_IMAGE",
        }
    export_id = f"{_ms(export_time):013d}-{hashlib.sha256((table_arn + json.dumps(times)).encode()).hexdigest()[:8]}"
    directory = f"{prefix}AWSDynamoDB/{export_id}/"
    objects, entries = _data_files(directory, export_id, chunks)
    total = sum(int(str(e["itemCount"])) for e in entries)
    billed = sum(int(str(e.pop("billed"))) for e in entries)
    objects[directory + EXPORT_FILES] = "".join(json.dumps(e) + "\n" for e in entries).encode()
    stamp = _stamp(export_time)
    summary = {
        "version": "2020-06-30",
        "exportArn": f"{table_arn}/export/{export_id}",
        "startTime": stamp,
        "endTime": stamp,
        "tableArn": table_arn,
        "tableId": hashlib.sha256(table_arn.encode()).hexdigest()[:32],
        **times,
        "s3Bucket": bucket,
        "s3Prefix": prefix.rstrip("/") or None,
        "s3SseAlgorithm": "AES256",
        "s3SseKmsKeyId": None,
        "manifestFilesS3Key": directory + EXPORT_FILES,
        "billedSizeBytes": billed,
        "itemCount": total,
        "outputFormat": "DYNAMODB_JSON",
    }
    objects[directory + EXPORT_SUMMARY] = json.dumps(summary, indent=2).encode()
    return directory, objects


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
    """An S3 Inventory report under `root` (the destination bucket); returns manifest.json."""
    objects = inventory_objects(root.name, "", source_bucket, created, frames, fmt, config_id)
    _written(root, ("", objects))
    return root / next(key for key in objects if key.endswith("/" + INVENTORY_MANIFEST))


def inventory_objects(
    destination: str,
    prefix: str,
    source_bucket: str,
    created: datetime,
    frames: Iterable[pl.DataFrame],
    fmt: str = "CSV",
    config_id: str = "docuflow-daily",
) -> dict[str, bytes]:
    """The objects of one S3 Inventory report as S3 writes them under `prefix` of `destination`.

    Each frame (columns bucket, key, size, lastModified, etag) becomes one data file:
    `CSV` gzip with URL-encoded keys and every field quoted, or `Parquet` with AWS's column names;
    then `<created>/manifest.json` and the Hive symlink of its `dt` partition.
    """
    base = f"{prefix}{source_bucket}/{config_id}/"
    objects: dict[str, bytes] = {}
    files: list[dict[str, object]] = []
    for number, frame in enumerate(f for f in frames if f.height):
        key, body = _inventory_file(base, number, frame, fmt)
        objects[key] = body
        files.append({"key": key, "size": len(body), "MD5checksum": hashlib.md5(body).hexdigest()})
    manifest = {
        "sourceBucket": source_bucket,
        "destinationBucket": f"arn:aws:s3:::{destination}",
        "version": "2016-11-30",
        "creationTimestamp": str(_ms(created)),
        "fileFormat": fmt,
        "fileSchema": ", ".join(INVENTORY_FIELDS),
        "files": files,
    }
    objects[f"{base}{created:%Y-%m-%dT%H-%MZ}/{INVENTORY_MANIFEST}"] = json.dumps(manifest, indent=2).encode()
    symlinks = "".join(f"s3://{destination}/{f['key']}\n" for f in files)
    objects[f"{base}hive/dt={created:%Y-%m-%d-%H-%M}/symlink.txt"] = symlinks.encode()
    return objects


def _inventory_file(base: str, number: int, frame: pl.DataFrame, fmt: str) -> tuple[str, bytes]:
    out = frame.select(
        pl.col("bucket").alias("Bucket"),
        pl.col("key").alias("Key"),
        pl.col("size").alias("Size"),
        pl.col("lastModified").dt.convert_time_zone("UTC").alias("LastModifiedDate"),
        pl.col("etag").str.strip_chars('"').alias("ETag"),
    )
    buffer = io.BytesIO()
    if fmt == "CSV":
        out = out.with_columns(
            pl.col("Key").map_elements(_url_encode, return_dtype=pl.String),
            pl.col("LastModifiedDate").dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"),
        )
        out.write_csv(buffer, include_header=False, quote_style="always")
        return f"{base}data/{number:05d}.csv.gz", gzip.compress(buffer.getvalue(), compresslevel=1, mtime=0)
    if fmt == "Parquet":
        out.rename(_PARQUET_NAMES).write_parquet(buffer)
        return f"{base}data/{number:05d}.parquet", buffer.getvalue()
    raise ValueError(f"inventory format {fmt!r}: CSV or Parquet")


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
