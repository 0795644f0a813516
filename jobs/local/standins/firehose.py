"""Stand-in for the change log's Amazon Data Firehose stream: JSON records in, Parquet out.

What Firehose does with the records the Pipe puts (docs/audit.md): it converts each JSON record
to a row of the Glue table (`jobs.contract.audit.stream_record`) the way its OpenX JSON
deserializer reads it (names matched case-insensitively, keys the table lacks ignored, a missing
value null), buffers the rows, and delivers them as one Parquet object (Snappy) per buffer under
`changes/dt=<day>/` of the audit-log bucket, named `<stream>-1-<yyyy-MM-dd-HH-mm-ss>-<id>.parquet`
by the arrival time of the buffer's first record. A record that does not fit the table (a
string where a struct belongs, a number that is not one) is not dropped and does not stop the
others: it goes, as Firehose writes its conversion failures, to
`errors/format-conversion-failed/dt=<day>/` (JSON lines with the raw record in base64).

Objects are written once (If-None-Match), as the bucket policy on AWS demands of everyone but
Firehose. What is not emulated: Firehose's buffer survives a crash, this one does not; the Pipe
stand-in therefore re-reads what it had not seen delivered (jobs/local/standins/audit_pipe.py).
"""

from __future__ import annotations

import base64
import io
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from jobs.audit.schema import changes_schema
from jobs.contract import layout
from jobs.contract.audit import Array, HiveType, Struct, stream_record

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

logger = logging.getLogger(__name__)

# Firehose's lowest buffering hints with format conversion are 64 MiB or 60 s; locally a buffer
# is delivered sooner (the stack's default) or when a test flushes.
BUFFER_BYTES = 64 * 1024 * 1024
BUFFER_SECONDS = 60.0
ERROR_CODE = "DataFormatConversion.MalformedData"


class ConversionError(ValueError):
    """A value that does not fit its column (Firehose: the record is a conversion failure)."""


Convert = Callable[[Any], Any]


def converter(t: HiveType, path: str = "$") -> Convert:
    """A function turning a parsed JSON value into a row value of type `t`, or raising
    ConversionError naming where it does not fit (built once per schema: one is called per record).
    """
    if isinstance(t, Struct):
        fields = [(name.lower(), converter(inner, f"{path}.{name}")) for name, inner in t.fields]

        def struct(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, dict):
                raise ConversionError(f"{path}: expected an object, got {type(value).__name__}")
            given = {str(k).lower(): v for k, v in value.items()}
            return {name: convert(given.get(name)) for name, convert in fields}

        return struct
    if isinstance(t, Array):
        element = converter(t.element, f"{path}[]")

        def array(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, list):
                raise ConversionError(f"{path}: expected an array, got {type(value).__name__}")
            return [element(v) for v in value]

        return array
    if t == "string":
        return lambda value: value if value is None or type(value) is str else _primitive(value, t, path)
    return lambda value: None if value is None else _primitive(value, t, path)


def _primitive(value: Any, t: str, path: str) -> Any:
    if t == "string" and isinstance(value, str | int | float) and not isinstance(value, bool):
        return value if isinstance(value, str) else str(value)
    if t == "boolean" and isinstance(value, bool):
        return value
    if t in ("double", "bigint") and not isinstance(value, bool | dict | list):
        try:
            number = float(value) if t == "double" else int(value)
        except (TypeError, ValueError) as exc:
            raise ConversionError(f"{path}: {value!r} is not a {t}") from exc
        return number
    raise ConversionError(f"{path}: {type(value).__name__} {str(value)[:40]!r} does not fit a {t}")


@dataclass
class _Buffer:
    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    size: int = 0
    first_arrival: float | None = None


@dataclass
class Delivered:
    """What one stream has delivered so far (and how fast it converted and wrote)."""

    records: int = 0
    failed: int = 0
    objects: int = 0
    seconds: float = 0.0  # spent converting, encoding and writing


class FirehoseStandIn:
    """One delivery stream into one bucket; thread-safe (the Pipe puts, a test flushes)."""

    def __init__(
        self,
        buckets: Buckets,
        bucket: str,
        stream_name: str,
        *,
        buffer_bytes: int = BUFFER_BYTES,
        buffer_seconds: float = BUFFER_SECONDS,
        clock: Any = time.time,
    ) -> None:
        self.bucket = bucket
        self.stream_name = stream_name
        self._buckets = buckets
        self._buffer_bytes = buffer_bytes
        self._buffer_seconds = buffer_seconds
        self._clock = clock
        self._schema = stream_record()
        self._convert = converter(self._schema)
        self._arrow = changes_schema(self._schema)
        self._buffer = _Buffer()
        self._lock = threading.Lock()
        self.delivered = Delivered()

    def put_record_batch(self, records: list[bytes]) -> None:
        """PutRecordBatch: each record a JSON document (what the Pipe sends, one per stream record)."""
        started = time.perf_counter()
        now = self._clock()
        with self._lock:
            buffer = self._buffer
            buffer.first_arrival = buffer.first_arrival or now
            for data in records:
                buffer.size += len(data)
                try:
                    buffer.rows.append(self._convert(orjson.loads(data)))
                except (ConversionError, orjson.JSONDecodeError) as exc:
                    buffer.errors.append(_failure(data, str(exc), now))
            self.delivered.seconds += time.perf_counter() - started

    def due(self) -> bool:
        with self._lock:
            first = self._buffer.first_arrival
            full = self._buffer.size >= self._buffer_bytes
            return first is not None and (full or self._clock() - first >= self._buffer_seconds)

    def flush(self) -> int:
        """Deliver what is buffered (one object, plus one of failures if any); returns the rows."""
        with self._lock:
            buffer, self._buffer = self._buffer, _Buffer()
            if buffer.first_arrival is None:
                return 0
            started = time.perf_counter()
            arrived = datetime.fromtimestamp(buffer.first_arrival, UTC)
            name = f"{self.stream_name}-1-{arrived:%Y-%m-%d-%H-%M-%S}-{uuid.uuid4()}"
            if buffer.rows:
                body = io.BytesIO()
                pq.write_table(pa.Table.from_pylist(buffer.rows, schema=self._arrow), body, compression="snappy")
                key = layout.audit_changes_prefix(arrived.date()) + name + ".parquet"
                self._buckets.put_once(self.bucket, key, body.getvalue(), "application/octet-stream")
                self.delivered.objects += 1
            if buffer.errors:
                key = layout.audit_errors_prefix(layout.AUDIT_CONVERSION_FAILED, arrived.date()) + name
                lines = "".join(json.dumps(e) + "\n" for e in buffer.errors).encode()
                self._buckets.put_once(self.bucket, key, lines, "application/json")
                self.delivered.objects += 1
                logger.warning("audit records failed conversion", extra={"count": len(buffer.errors), "key": key})
            self.delivered.records += len(buffer.rows)
            self.delivered.failed += len(buffer.errors)
            self.delivered.seconds += time.perf_counter() - started
            return len(buffer.rows)


def _failure(data: bytes, message: str, now: float) -> dict[str, Any]:
    """One record in the shape of Firehose's conversion-failure output."""
    millis = int(now * 1000)
    return {
        "attemptsMade": 1,
        "arrivalTimestamp": millis,
        "lastErrorCode": ERROR_CODE,
        "lastErrorMessage": message[:1000],
        "attemptEndingTimestamp": millis,
        "rawData": base64.b64encode(data).decode(),
    }
