"""Stand-in for the change log's EventBridge Pipe: each stage's table stream into its Firehose stand-in.

What the Pipe does (docs/audit.md): it polls every shard of the table's stream (a parent before
its children), and hands each batch of records, in stream order and unchanged (no filter, no
input template: every record of the table is logged; a removal the TTL stand-in made gets the
identity DynamoDB gives its TTL deletions, jobs/local/standins/ttl.py), to the delivery stream, at most 500 to a
PutRecordBatch (the Firehose target's limit). It moves past a batch only once the target took it,
so every record is delivered at least once. Here the positions live in memory: a stand-in that
starts again reads its streams from the start, which is that at-least-once as the log sees it
(the audit queries count the copies of one eventID once).

`AuditPipes` serves a set of stages: a background thread pumps each one and delivers a buffer
when its hints say so, and `flush(stage)` reads the stream to its end and delivers at once
(Firehose buffers for a minute or more; a flush is the honest analogue of waiting for it). Tests
start it for the session and flush each test's stage; `python -m jobs local up` runs this module
as a process beside the emulators (SIGUSR1 flushes and writes a status file, SIGTERM flushes and
stops). On AWS every stage has its own Pipe; here one process serves every stage brought up on
the servers: each `local up` registers its stage (a file of the stage's settings in `--stages`),
and the process takes up a newly registered stage before its next round or flush, reading its
stream from the start, so nothing the stage wrote before is missed. A failing round is logged
and tried again on the next one: nothing stops the log.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from jobs.contract import layout
from jobs.contract.audit import REMOVE
from jobs.errors import DocuFlowError, StoreResourceMissingError, StreamPositionLostError
from jobs.local.standins.firehose import BUFFER_SECONDS, FirehoseStandIn
from jobs.local.standins.ttl import Journal, journalled, with_ttl_identity
from jobs.observability import CallMetrics, setup_logging
from jobs.runtime.stores import buckets as stack_buckets
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, streams_client
from jobs.store.streams import Shard, TableStream, stream_arn

logger = logging.getLogger(__name__)

BATCH = 500  # a Firehose target's largest PutRecordBatch
POLL_SECONDS = 1.0
# This process's own settings are its first stage's: a registered stage's come from its file alone.
_SETTINGS_PREFIX = "DOCUFLOW_"


def pipe_event(record: dict[str, Any], arn: str) -> dict[str, Any]:
    """A stream record as a Pipe hands it on: JSON, the stream time in epoch seconds, the
    stream's ARN added. Anything else is passed as it came (the delivery stream judges it).
    """
    event = {**record, "eventSourceARN": arn}
    data = record.get("dynamodb")
    if isinstance(data, dict) and isinstance(data.get("ApproximateCreationDateTime"), datetime):
        event["dynamodb"] = {**data, "ApproximateCreationDateTime": data["ApproximateCreationDateTime"].timestamp()}
    return event


def _parents_first(shards: list[Shard]) -> list[Shard]:
    ids = {s.shard_id for s in shards}
    roots = [s for s in shards if s.parent_id not in ids]
    ordered: list[Shard] = []
    while roots:
        shard = roots.pop(0)
        ordered.append(shard)
        roots += [s for s in shards if s.parent_id == shard.shard_id]
    return ordered


class StagePipe:
    """One stage: its table's stream into its audit bucket."""

    def __init__(
        self,
        settings: JobSettings,
        open_stream: Callable[[], TableStream | None],
        firehose: FirehoseStandIn,
        ttl_journal: Callable[[], Journal] = dict,
    ) -> None:
        """`ttl_journal`: the removals the TTL stand-in made (their REMOVE records get the TTL's
        identity, as DynamoDB writes it into its own deletions' records).
        """
        self.stage = settings.stage
        self.firehose = firehose
        self.lock = threading.Lock()
        self._open_stream = open_stream
        self._ttl_journal = ttl_journal
        self._stream: TableStream | None = None
        self._positions: dict[str, str] = {}  # shard → the last sequence number delivered
        self._read: set[str] = set()  # closed shards read to their end

    @classmethod
    def for_settings(cls, settings: JobSettings, buffer_seconds: float = BUFFER_SECONDS) -> StagePipe:
        """Clients from the environment (the emulators' endpoints locally), as every job's are."""
        metrics = CallMetrics()
        dynamodb, streams = dynamodb_client(settings), streams_client(settings)

        def open_stream() -> TableStream | None:
            try:
                arn = stream_arn(dynamodb, settings.store.table_name, metrics)
            except StoreResourceMissingError:
                return None  # no table (yet, or any more)
            return TableStream(streams, arn, metrics) if arn else None

        buckets = stack_buckets(settings, metrics)
        name = layout.audit_delivery_name(settings.stage)
        firehose = FirehoseStandIn(buckets, settings.audit.audit_bucket, name, buffer_seconds=buffer_seconds)
        return cls(settings, open_stream, firehose, lambda: journalled(dynamodb, settings.store.table_name))

    def pump(self) -> int:
        """Put what is new on every shard to the delivery stream; returns the records moved."""
        self._stream = self._stream or self._open_stream()
        if self._stream is None:
            return 0
        shards = self._stream.shards()
        known = {s.shard_id for s in shards}
        moved = 0
        for shard in _parents_first(shards):
            waiting = shard.parent_id in known and shard.parent_id not in self._read
            if shard.shard_id not in self._read and not waiting:
                moved += self._drain(self._stream, shard)
        return moved

    def _drain(self, stream: TableStream, shard: Shard) -> int:
        try:
            iterator = stream.iterator(shard.shard_id, self._positions.get(shard.shard_id))
        except StreamPositionLostError:
            # Trimmed before it was read: those records are a gap the reconcile will report.
            logger.warning(
                "audit stream position lost: reading the shard from its start", extra={"shard": shard.shard_id}
            )
            iterator = stream.iterator(shard.shard_id, None)
        moved = 0
        while iterator is not None:
            records, iterator = stream.read(iterator)
            if any(r.get("eventName") == REMOVE for r in records):
                journal = self._ttl_journal()
                records = [with_ttl_identity(r, journal) for r in records]
            for start in range(0, len(records), BATCH):
                batch = records[start : start + BATCH]
                self.firehose.put_record_batch([orjson.dumps(pipe_event(r, stream.arn), default=str) for r in batch])
                last = (batch[-1].get("dynamodb") or {}).get("SequenceNumber")
                if last:
                    self._positions[shard.shard_id] = last
            moved += len(records)
            if not records:
                break  # caught up on an open shard
        if iterator is None:
            self._read.add(shard.shard_id)
        return moved

    def flush(self) -> int:
        """Read the stream to its end and deliver everything now; returns the rows delivered."""
        with self.lock:
            while self.pump():
                pass
            return self.firehose.flush()

    def tick(self) -> None:
        with self.lock:
            self.pump()
            if self.firehose.due():
                self.firehose.flush()


class AuditPipes:
    """The stand-in for every watched stage, with an optional background thread."""

    def __init__(self, make: Callable[[JobSettings], StagePipe] = StagePipe.for_settings) -> None:
        self._make = make
        self._pipes: dict[str, StagePipe] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, settings: JobSettings) -> StagePipe:
        pipe = self._make(settings)
        with self._lock:
            self._pipes[settings.stage] = pipe
        return pipe

    def watch_registered(self, directory: Path) -> list[str]:
        """Watch every stage registered in `directory` not watched yet; returns those taken up.

        A registration is `<stage>.json`: the stage's settings as environment variables
        (JobSettings.env), over this process's own environment less its DOCUFLOW_ settings (the
        endpoints and credentials are the servers', the rest is the stage's own).
        """
        base = {k: v for k, v in os.environ.items() if not k.startswith(_SETTINGS_PREFIX)}
        added = []
        for path in sorted(directory.glob("*.json")):
            with self._lock:
                if path.stem in self._pipes:
                    continue
            try:
                settings = JobSettings.from_env({**base, **json.loads(path.read_text())})
            except (OSError, ValueError):
                logger.exception("audit stage registration unreadable; skipped", extra={"path": str(path)})
                continue
            self.watch(settings)
            added.append(settings.stage)
            logger.info("audit pipe watches a new stage", extra={"stage": settings.stage})
        return added

    def forget(self, stage: str) -> None:
        with self._lock:
            self._pipes.pop(stage, None)

    def pipes(self) -> list[StagePipe]:
        with self._lock:
            return list(self._pipes.values())

    def flush(self, stage: str | None = None) -> int:
        return sum(p.flush() for p in self.pipes() if stage is None or p.stage == stage)

    def tick(self) -> None:
        for pipe in self.pipes():
            try:
                pipe.tick()
            except Exception:  # a background stand-in must outlive any one failed round
                logger.exception("audit pipe round failed; trying again next round", extra={"stage": pipe.stage})

    def start(self, poll_seconds: float = POLL_SECONDS) -> None:
        def loop() -> None:
            while not self._stop.wait(poll_seconds):
                self.tick()

        self._thread = threading.Thread(target=loop, name="audit-pipe", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread, then deliver what is left."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.flush()


def status(pipes: AuditPipes) -> dict[str, Any]:
    """Counters of every stage's delivery stream (written to the status file on each flush)."""
    stages = {}
    for pipe in pipes.pipes():
        d = pipe.firehose.delivered
        rate = round(d.records / d.seconds, 1) if d.seconds else None
        stages[pipe.stage] = {"records": d.records, "failed": d.failed, "objects": d.objects, "recordsPerSecond": rate}
    return {"flushedAt": time.time(), "stages": stages}


def write_status(path: Path, pipes: AuditPipes) -> None:
    """Replace the status file in one step (a reader never sees half of it)."""
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(status(pipes)))
    partial.replace(path)


def main(argv: list[str] | None = None) -> int:
    """The process `local up` starts: watch the environment's stage until SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m jobs.local.standins.audit_pipe", description=__doc__)
    parser.add_argument("--status", type=Path, required=True, help="where each flush writes its counters")
    parser.add_argument("--buffer-seconds", type=float, default=5.0)
    parser.add_argument("--stages", type=Path, help="the directory `local up` registers each stage's settings in")
    args = parser.parse_args(argv)
    setup_logging()
    settings = JobSettings.from_env()
    pipes = AuditPipes(lambda s: StagePipe.for_settings(s, args.buffer_seconds))
    pipes.watch(settings)
    flush_now, stop = threading.Event(), threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: flush_now.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    write_status(args.status, pipes)
    while not stop.is_set():
        if args.stages is not None:
            pipes.watch_registered(args.stages)
        if flush_now.wait(POLL_SECONDS):
            if args.stages is not None:  # a stage registered during the wait is in this flush
                pipes.watch_registered(args.stages)
            flush_now.clear()
            _guarded(pipes.flush)
            write_status(args.status, pipes)
        else:
            pipes.tick()
    _guarded(pipes.flush)
    write_status(args.status, pipes)
    return 0


def _guarded(action: Callable[[], object]) -> None:
    try:
        action()
    except DocuFlowError:
        logger.exception("audit pipe flush failed; the next one tries again")


if __name__ == "__main__":
    sys.exit(main())
