"""The arrival queue's messages: S3 event notifications for raw/, read into ObjectInfo (pure).

S3 sends one JSON body per message with `Records` (ObjectCreated:Put, :Post, :Copy,
:CompleteMultipartUpload), or a bare `s3:TestEvent` when the notification is first configured.
Keys arrive URL-encoded (`+` for a space) and ETags without quotes; both are brought back to
what S3's own API returns, so an event and a listing describe an object identically. Reconcile's
repair re-queues lost arrivals in the same shape (eventSource `docuflow:reconcile`).
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jobs.contract import layout
from jobs.contract.objects import ObjectInfo, bare_etag
from jobs.errors import QueueMessageInvalidError

S3_EVENT_SOURCE = "aws:s3"
REQUEUE_EVENT_SOURCE = "docuflow:reconcile"
OBJECT_CREATED = "ObjectCreated:"
TEST_EVENT = "s3:TestEvent"
MAX_BODY_BYTES = 256 * 1024  # SQS's own limit; anything larger was not sent by S3


@dataclass(frozen=True, slots=True)
class QueueMessage:
    """One received message: what the queue adapter hands over, before its body is read."""

    message_id: str
    receipt: str
    body: str
    receive_count: int


@dataclass(frozen=True, slots=True)
class Arrival:
    """One ObjectCreated record: the object as the event saw it."""

    obj: ObjectInfo
    event_name: str
    source: str


@dataclass(frozen=True, slots=True)
class Notice:
    """A record that is not an arrival (a test event, another event type): recorded, not worked."""

    kind: str
    detail: str


def parse_body(body: str) -> list[Arrival | Notice]:
    """The records of one message body; QueueMessageInvalidError when it is not an S3 event."""
    if len(body.encode()) > MAX_BODY_BYTES:
        raise QueueMessageInvalidError(f"message body of {len(body.encode())} bytes is larger than any S3 event")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise QueueMessageInvalidError(f"message body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise QueueMessageInvalidError("message body is not a JSON object")
    if data.get("Event") == TEST_EVENT:
        return [Notice("test-event", f"s3:TestEvent for bucket {data.get('Bucket')!r}")]
    records = data.get("Records")
    if not isinstance(records, list) or not records:
        raise QueueMessageInvalidError("message body has no Records")
    return [_record(record) for record in records]


def _record(record: Any) -> Arrival | Notice:
    try:
        name = str(record["eventName"])
        source = str(record.get("eventSource", ""))
        if not name.startswith(OBJECT_CREATED):
            return Notice("other-event", f"{name} ({source})")
        s3 = record["s3"]
        bucket = str(s3["bucket"]["name"])
        key = urllib.parse.unquote_plus(str(s3["object"]["key"]))
        etag = f'"{bare_etag(str(s3["object"]["eTag"]))}"'
        size = int(s3["object"].get("size", 0))
        when = datetime.fromisoformat(str(record["eventTime"]).replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise QueueMessageInvalidError(f"S3 event record is missing or has a malformed field: {exc!r}") from exc
    if when.tzinfo is None:
        raise QueueMessageInvalidError(f"S3 event time {record['eventTime']!r} has no timezone")
    if size < 0:
        raise QueueMessageInvalidError(f"S3 event for {key!r} has a negative size")
    return Arrival(ObjectInfo(bucket, key, etag, size, when.astimezone(UTC)), name, source)


def requeue_body(obj: ObjectInfo) -> str:
    """The message reconcile's repair sends for a raw object no arrival ever reached the ingest."""
    record = {
        "eventVersion": "2.1",
        "eventSource": REQUEUE_EVENT_SOURCE,
        "eventTime": layout.format_ts(obj.last_modified),
        "eventName": f"{OBJECT_CREATED}Requeue",
        "s3": {
            "bucket": {"name": obj.bucket},
            "object": {
                "key": urllib.parse.quote_plus(obj.key, safe="/"),
                "size": obj.size,
                "eTag": bare_etag(obj.etag),
            },
        },
    }
    return json.dumps({"Records": [record]})
