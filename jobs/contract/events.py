"""The arrival queue's messages: S3 event notifications for raw/, read into ObjectInfo (pure).

S3 sends one JSON body per message with `Records` (ObjectCreated:Put, :Post, :Copy,
:CompleteMultipartUpload), or a bare `s3:TestEvent` when the notification is first configured.
Keys arrive URL-encoded (`+` for a space) and ETags without quotes; both are brought back to
what S3's own API returns, so an event and a listing describe an object identically. Reconcile's
repair re-queues lost arrivals in the same shape (eventSource `docuflow:reconcile`).

Every field is checked for the type S3 sends before it is used, and any body the contract cannot
read (not JSON, not an S3 event, values Python cannot take) is one QueueMessageInvalidError: the
drain records it and leaves the message for the dead-letter queue.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime

from jobs.contract import layout
from jobs.contract.objects import ObjectInfo, bare_etag
from jobs.errors import QueueMessageInvalidError

S3_EVENT_SOURCE = "aws:s3"
REQUEUE_EVENT_SOURCE = "docuflow:reconcile"
OBJECT_CREATED = "ObjectCreated:"
TEST_EVENT = "s3:TestEvent"
MAX_BODY_BYTES = 256 * 1024  # SQS's own limit; anything larger was not sent by S3
MAX_OBJECT_SIZE = 2**63 - 1  # what the summary and reconcile's Int64 columns can hold
SEQUENCER = re.compile(r"[0-9A-Fa-f]{1,128}")


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
    """The records of one message body; QueueMessageInvalidError when it is not an S3 event the
    contract can read, and never another exception: a body that parses as JSON can still hold
    values Python cannot take (an infinite size, a date past the calendar once its offset is
    applied, nesting deeper than the decoder's recursion limit), and one such message must not
    stop a drain.
    """
    try:
        return _parse(body)
    except QueueMessageInvalidError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError) as exc:
        raise QueueMessageInvalidError(f"message body cannot be read: {type(exc).__name__}: {str(exc)[:200]}") from exc


def _parse(body: str) -> list[Arrival | Notice]:
    size = len(body.encode())
    if size > MAX_BODY_BYTES:
        raise QueueMessageInvalidError(f"message body of {size} bytes is larger than any S3 event")
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


def _record(record: object) -> Arrival | Notice:
    name = _text(_field(record, "eventName"), "eventName")
    source = _text(_field(record, "eventSource", ""), "eventSource")
    if not name.startswith(OBJECT_CREATED):
        return Notice("other-event", f"{name} ({source})")
    s3 = _field(record, "s3")
    obj = _field(s3, "object")
    key = urllib.parse.unquote_plus(_text(_field(obj, "key"), "s3.object.key"))
    _text(key, "s3.object.key")  # decoded: still a name S3 could hold
    info = ObjectInfo(
        bucket=_text(_field(_field(s3, "bucket"), "name"), "s3.bucket.name"),
        key=key,
        etag=f'"{bare_etag(_text(_field(obj, "eTag"), "s3.object.eTag"))}"',
        size=_size(_field(obj, "size", 0)),
        last_modified=_time(_text(_field(record, "eventTime"), "eventTime")),
        sequencer=_sequencer(_field(obj, "sequencer", None)),
    )
    return Arrival(info, name, source)


_MISSING = object()


def _field(container: object, name: str, default: object = _MISSING) -> object:
    if not isinstance(container, dict):
        raise QueueMessageInvalidError(f"S3 event record: expected an object holding {name!r}")
    if name not in container:
        if default is _MISSING:
            raise QueueMessageInvalidError(f"S3 event record has no {name!r}")
        return default
    return container[name]


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise QueueMessageInvalidError(f"S3 event field {name} is not a string")
    value.encode()  # S3 names are UTF-8: a lone surrogate names nothing S3 holds (UnicodeEncodeError)
    return value


def _size(value: object) -> int:
    # bool is an int to Python, and a float may be infinite or NaN: S3 sends a plain integer.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_OBJECT_SIZE:
        raise QueueMessageInvalidError(f"S3 event size {str(value)[:40]!r} is not a byte count")
    return value


def _time(text: str) -> datetime:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise QueueMessageInvalidError(f"S3 event time {text!r} has no timezone")
    return when.astimezone(UTC)  # OverflowError past the calendar's ends: caught by parse_body


def _sequencer(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not SEQUENCER.fullmatch(value):
        raise QueueMessageInvalidError(f"S3 event sequencer {str(value)[:40]!r} is not hexadecimal")
    return value


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
