"""Shared benchmark plumbing: a fresh local stack per benchmark, result files, tables, peak memory."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

from jobs.local.servers import ServerSpec, s3_spec
from jobs.local.stack import LOCAL_OCR_ENGINE, Endpoints, bootstrap_endpoints, ephemeral
from jobs.settings import ExtractionSection, JobSettings
from jobs.store.clients import dynamodb_client, s3_client

RESULTS = Path(__file__).resolve().parent / "results"


@contextmanager
def fresh_stack(s3_spec: Callable[[int, Path], ServerSpec] = s3_spec) -> Iterator[Endpoints]:
    """New DynamoDB Local (in memory) and moto S3 processes: no stream backlog from earlier runs."""
    with tempfile.TemporaryDirectory(prefix="docuflow-bench-") as tmp, ephemeral(Path(tmp), s3_spec) as endpoints:
        os.environ.update(endpoints.aws_env())
        yield endpoints


def stage(endpoints: Endpoints, name: str) -> JobSettings:
    return bootstrap_endpoints(
        endpoints, JobSettings(stage=name, extraction=ExtractionSection(ocr_engine=LOCAL_OCR_ENGINE))
    )


def run_measured(
    command: list[str], env: dict[str, str], cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run a command; return it with the peak RSS (MB) of its whole process tree, sampled at 10 Hz."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True, cwd=cwd)
        parent = psutil.Process(process.pid)
        peak = 0
        while process.poll() is None:
            try:
                tree = [parent, *parent.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree))
            except psutil.Error:
                pass
            time.sleep(0.1)
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(command, process.returncode, out.read(), err.read())
    return done, round(peak / 2**20, 1)


def machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "machine": platform.machine()}


def write_json(path: Path, data: dict[str, Any]) -> Path:
    """Write atomically: a benchmark killed mid-write never leaves half a results file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n")
    tmp.replace(path)
    return path


def write_result(name: str, payload: dict[str, Any]) -> Path:
    body = {
        "benchmark": name,
        "measuredAt": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        **payload,
    }
    return write_json(RESULTS / f"{name}.json", body)


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def read_ceiling(settings: JobSettings, table_name: str, segments: int) -> float:
    """The reconcile's reads doing nothing: a parallel Scan and both listings, concurrently."""
    ddb, s3 = dynamodb_client(settings), s3_client(settings)

    def scan(segment: int) -> int:
        pages = ddb.get_paginator("scan").paginate(TableName=table_name, Segment=segment, TotalSegments=segments)
        return sum(page["Count"] for page in pages)

    def listing(bucket: str) -> int:
        return sum(p.get("KeyCount", 0) for p in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket))

    started = time.perf_counter()
    with ThreadPoolExecutor(segments + 2) as pool:
        reads = [pool.submit(scan, i) for i in range(segments)]
        reads += [pool.submit(listing, b) for b in (settings.store.raw_bucket, settings.store.processed_bucket)]
        for read in reads:
            read.result()
    return time.perf_counter() - started
