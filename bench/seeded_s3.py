"""moto's S3 server, started with objects already in it: seeding for benchmarks at 100k+ objects.

Uploading 200,000 objects over HTTP takes about 15 minutes here (moto serves ~250 PUT/s); loading
them into the backend inside the server's own process takes seconds. Only the seeding skips HTTP:
whatever is measured afterwards talks to this server over loopback like to any S3. Each object
gets the ETag and LastModified its row names (a one-byte body: listings never read bodies).

    python -m bench.seeded_s3 PORT OBJECTS.parquet     (columns bucket, key, etag, lastModified)
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # started as a script by the benchmark: make `jobs` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import s3_backends
from moto.server import main as serve

from jobs.local.moto_server import patch
from jobs.local.servers import ServerSpec
from jobs.local.stack import REGION

OBJECT_COLUMNS = ("bucket", "key", "etag", "lastModified")


def server_spec(objects: Path, port: int, log_dir: Path) -> ServerSpec:
    """The local stack's S3 server, started by this script with `objects` already in it."""
    return ServerSpec("s3", port, [sys.executable, str(Path(__file__)), str(port), str(objects)], log_dir / "s3.log")


def seed(objects: Path) -> int:
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    frame = pl.read_parquet(objects, columns=list(OBJECT_COLUMNS))
    for bucket in frame.get_column("bucket").unique().to_list():
        backend.create_bucket(bucket, REGION)
    for bucket, key, etag, modified in frame.iter_rows():
        backend.put_object(bucket, key, b"x", etag=etag).last_modified = modified.replace(tzinfo=None)
    return frame.height


def main(argv: list[str]) -> None:
    port, objects = argv
    seed(Path(objects))
    patch()  # the same server as the local stack's (jobs/local/moto_server.py)
    serve(["-H", "127.0.0.1", "-p", port])  # same process, so the same in-memory backend


if __name__ == "__main__":
    main(sys.argv[1:])
