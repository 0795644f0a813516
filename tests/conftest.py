"""Fixtures for tests against the live local stack.

Each pytest session starts its own DynamoDB Local (in memory) and moto S3 server on free loopback
ports: a fresh engine per session, because DynamoDB Local slows down on new stream-enabled tables
once one process has accumulated many stream records. Each test that asks for `stack` gets its own
stage (its own table and buckets), so tests never see each other's data. Under pytest-xdist
(`make test` runs one worker per core) each worker is a session with its own servers, so workers
share nothing but the machine.

The session also runs the stand-in of the audit Pipe and Firehose (jobs/local/standins/audit_pipe.py)
on a background thread: every stage a test uses gets its change log, delivered when the test ends
(or when it calls `stack.audit_flush()`, the analogue of waiting for Firehose's buffer).
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest

from jobs.contract import DocumentItem, DuplicateMarker, layout
from jobs.contract.duplicates import is_marker_item
from jobs.local.stack import LOCAL_OCR_ENGINE, Endpoints, bootstrap_endpoints, ephemeral, job_env
from jobs.local.standins.audit_pipe import AuditPipes, StagePipe
from jobs.settings import ExtractionSection, JobSettings
from jobs.store.clients import botocore_config
from jobs.store.dynamo_wire import from_wire

REPO_ROOT = Path(__file__).resolve().parents[1]
CORPUS = REPO_ROOT / "tests" / "data" / "corpus"


class _LostBatches:
    """A delivery stream whose batches vanish."""

    def put_record_batch(self, records: list[bytes]) -> None:
        pass


@dataclass
class LocalServers:
    endpoints: Endpoints


@dataclass
class Stack:
    """One isolated stage on the session's servers, with clients configured like the jobs'."""

    settings: JobSettings
    endpoints: Endpoints
    audit_pipe: StagePipe

    def audit_flush(self) -> int:
        """Deliver the stage's change log now (records so far); returns the rows delivered."""
        return self.audit_pipe.flush()

    @contextmanager
    def audit_records_lost(self) -> Iterator[None]:
        """Changes made inside (and any not yet delivered) never reach the change log: a delivery
        that failed for good. The pipe's lock is held throughout, so its background round can
        neither deliver those changes first nor see the delivery stream that loses them.
        """
        pipe = self.audit_pipe
        with pipe.lock:
            yield
            real, pipe.firehose = pipe.firehose, _LostBatches()  # type: ignore[assignment]  # only put_record_batch is called
            try:
                pipe.pump()
            finally:
                pipe.firehose = real

    def s3(self):
        return boto3.client("s3", config=botocore_config(self.settings))

    def dynamodb(self):
        return boto3.client("dynamodb", config=botocore_config(self.settings))

    def table(self):
        return boto3.resource("dynamodb").Table(self.settings.store.table_name)

    def raw_items(self) -> list[dict]:
        pages = self.dynamodb().get_paginator("scan").paginate(TableName=self.settings.store.table_name)
        return [from_wire(raw) for page in pages for raw in page["Items"]]

    def items(self) -> list[DocumentItem]:
        """The documents of the table (a user's partition may also hold their duplicate markers,
        see `markers`, and their erasure marker).
        """
        return [
            DocumentItem.from_item(item) for item in self.raw_items() if layout.is_document_sk(item[layout.SK_ATTR])
        ]

    def markers(self) -> list[DuplicateMarker]:
        return [DuplicateMarker.from_item(item) for item in self.raw_items() if is_marker_item(item)]

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = self.s3().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))

    def stream_changes(self, documents_only: bool = True) -> list[StreamChange]:
        """Every record on the table stream so far, oldest first per shard (of the documents
        only, unless asked: the duplicate markers' records ride the stream too, and the status
        events' pipe leaves them out by their entityType).
        """
        arn = self.dynamodb().describe_table(TableName=self.settings.store.table_name)["Table"]["LatestStreamArn"]
        streams = boto3.client("dynamodbstreams", endpoint_url=self.endpoints.dynamodb)
        changes: list[StreamChange] = []
        for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
            iterator = streams.get_shard_iterator(
                StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            while iterator:
                response = streams.get_records(ShardIterator=iterator, Limit=1000)
                for record in response["Records"]:
                    data = record["dynamodb"]
                    if documents_only and is_marker_item({"SK": data["Keys"]["SK"]["S"]}):
                        continue
                    old = data.get("OldImage", {}).get("status", {}).get("S")
                    new = data.get("NewImage", {}).get("status", {}).get("S")
                    by = data.get("OldImage", {}).get("updatedBy", {}).get("S")
                    changes.append(StreamChange(record["eventName"], data["Keys"]["SK"]["S"], old, new, by))
                if not response["Records"]:
                    break
                iterator = response.get("NextShardIterator")
        return changes


@dataclass(frozen=True)
class StreamChange:
    event: str
    sort_key: str
    old_status: str | None
    new_status: str | None
    old_updated_by: str | None = None  # who wrote the version a MODIFY or REMOVE replaced


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """A job's main() sets up its logging on the root logger (INFO, its handler); undo it so later
    tests log as before (jobs.local's bootstrap logs an `extra` key LogRecord refuses once INFO is on).
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"acceptance corpus not found at {CORPUS} (tests/data/corpus is part of the repository)")
    return CORPUS


@pytest.fixture(scope="session")
def local_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServers]:
    with ephemeral(tmp_path_factory.mktemp("local-stack")) as endpoints, pytest.MonkeyPatch.context() as patch:
        for key, value in endpoints.aws_env().items():
            patch.setenv(key, value)
        yield LocalServers(endpoints)


@pytest.fixture(scope="session")
def audit_pipes(local_servers: LocalServers) -> Iterator[AuditPipes]:
    pipes = AuditPipes()
    pipes.start(poll_seconds=2.0)
    yield pipes
    pipes.stop()


_stage_numbers = itertools.count(1)


@pytest.fixture
def stack(local_servers: LocalServers, audit_pipes: AuditPipes, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    """A fresh stage: its own table (with stream, GSI, TTL) and buckets, env vars pointing at it,
    and its change log (delivered when the test ends).
    """
    settings = JobSettings(
        stage=f"t{os.getpid() % 1000}x{next(_stage_numbers)}", extraction=ExtractionSection(ocr_engine=LOCAL_OCR_ENGINE)
    )
    settings = bootstrap_endpoints(local_servers.endpoints, settings)
    for key, value in job_env(local_servers.endpoints, settings).items():
        monkeypatch.setenv(key, value)
    pipe = audit_pipes.watch(settings)
    yield Stack(settings=settings, endpoints=local_servers.endpoints, audit_pipe=pipe)
    try:
        pipe.flush()
    finally:
        audit_pipes.forget(settings.stage)
