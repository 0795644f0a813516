"""The arrival queue's message bodies (jobs.contract.events): what the contract reads, and that
anything else is a QueueMessageInvalidError, never another exception (issue 27).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.contract.events import MAX_BODY_BYTES, Arrival, Notice, parse_body, requeue_body
from jobs.contract.objects import ObjectInfo
from jobs.errors import QueueMessageInvalidError


def record(**changes: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "key": "raw/u1/d1/a+b.xml",
        "size": 12,
        "eTag": "0123abcd",
        "sequencer": "0062E99A88DC407460",
    }
    obj.update(changes.pop("object", {}))
    base: dict[str, Any] = {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "eventTime": "2026-11-30T01:02:03.456Z",
        "eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": "raw-bucket"}, "object": obj},
    }
    return base | changes


def body(*records: dict[str, Any]) -> str:
    return json.dumps({"Records": list(records)})


def test_an_s3_event_is_read_as_the_object_a_listing_would_show() -> None:
    (arrival,) = parse_body(body(record()))
    assert isinstance(arrival, Arrival)
    assert arrival.obj == ObjectInfo(
        "raw-bucket",
        "raw/u1/d1/a b.xml",
        '"0123abcd"',
        12,
        datetime(2026, 11, 30, 1, 2, 3, 456000, tzinfo=UTC),
        sequencer="0062E99A88DC407460",
    )


def test_a_requeued_arrival_reads_back_as_the_object_it_names() -> None:
    obj = ObjectInfo("raw-bucket", "raw/u1/d1/a b+c.xml", '"e1"', 3, datetime(2026, 11, 30, 1, 2, 3, tzinfo=UTC))
    (arrival,) = parse_body(requeue_body(obj))
    assert isinstance(arrival, Arrival) and arrival.obj == obj


def test_a_test_event_and_other_event_types_are_notices() -> None:
    assert parse_body(json.dumps({"Event": "s3:TestEvent", "Bucket": "b"})) == [
        Notice("test-event", "s3:TestEvent for bucket 'b'")
    ]
    (notice,) = parse_body(body(record(eventName="ObjectRemoved:Delete")))
    assert isinstance(notice, Notice) and notice.kind == "other-event"


# Bodies that are JSON (or nearly) but hold values Python cannot take: each crashed the drain.
HOSTILE = {
    "size 1e999 (an infinite float)": body(record(object={"size": 1e999})),
    "size -1e999": body(record(object={"size": -1e999})),
    "size NaN": body(record(object={"size": float("nan")})),
    "size true": body(record(object={"size": True})),
    "size a string": body(record(object={"size": "12"})),
    "size 2**70": body(record(object={"size": 2**70})),
    "year 9999 with a negative offset": body(record(eventTime="9999-12-31T23:59:59-14:00")),
    "year 1 with a positive offset": body(record(eventTime="0001-01-01T00:00:00+14:00")),
    "no timezone": body(record(eventTime="2026-11-30T01:02:03")),
    "time as a number": body(record(eventTime=1764464523)),
    "nested 100,000 deep": '{"Records": [' + "[" * 100_000 + "]" * 100_000 + "]}",
    "object nested 100,000 deep in a field": body(record(eventName="x"))[:-3]
    + ', "deep": '
    + "[" * 100_000
    + "]" * 100_000
    + "}]}",
    "eventName a deep list": '{"Records": [{"eventName": ' + "[" * 900 + "]" * 900 + "}]}",
    "key a lone surrogate": body(record(object={"key": "raw/u1/d\ud800/a.xml"})),
    "key a list": body(record(object={"key": ["raw/u1/d1/a.xml"]})),
    "bucket a number": body(record(s3={"bucket": {"name": 7}, "object": record()["s3"]["object"]})),
    "eTag missing": body(record(object={"eTag": None})),
    "sequencer not hex": body(record(object={"sequencer": "xyz"})),
    "records not a list": json.dumps({"Records": {"a": 1}}),
    "record not an object": json.dumps({"Records": [7]}),
    "empty records": json.dumps({"Records": []}),
    "not JSON": "{broken",
    "a JSON string": json.dumps("Records"),
    "larger than SQS allows": body(record(object={"key": "raw/u/d/" + "x" * MAX_BODY_BYTES})),
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_body_the_contract_cannot_read_is_a_malformed_message(text: str) -> None:
    with pytest.raises(QueueMessageInvalidError):
        parse_body(text)


# --- fuzzing: any body gives records or QueueMessageInvalidError, nothing else ------------------
JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


def _mutated(draw: st.DrawFn) -> str:
    """An S3 event with one field replaced by an arbitrary JSON value (or removed)."""
    data = record()
    paths = [
        ("eventName",),
        ("eventTime",),
        ("eventSource",),
        ("s3",),
        ("s3", "bucket"),
        ("s3", "bucket", "name"),
        ("s3", "object"),
        ("s3", "object", "key"),
        ("s3", "object", "size"),
        ("s3", "object", "eTag"),
        ("s3", "object", "sequencer"),
    ]
    path = draw(st.sampled_from(paths))
    target = data
    for step in path[:-1]:
        target = target[step]
    if draw(st.booleans()):
        target[path[-1]] = draw(JSON_VALUES)
    else:
        target.pop(path[-1], None)
    return json.dumps({"Records": [data]}, allow_nan=True)


TIMES = st.one_of(
    st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
    st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([+-][0-9]{2}:[0-9]{2}|Z)?\Z"),
)


@st.composite
def bodies(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["text", "json", "mutated", "time", "number"]))
    if kind == "text":
        return draw(st.text(max_size=200))
    if kind == "json":
        return json.dumps(draw(JSON_VALUES), allow_nan=True)
    if kind == "time":
        return body(record(eventTime=draw(TIMES)))
    if kind == "number":
        number = draw(st.sampled_from(["1e999", "-1e999", "NaN", "Infinity", "1" * 5000, "-0", "1.5", "1e308"]))
        return body(record())[:-3].replace('"size": 12', f'"size": {number}') + "}]}"
    return _mutated(draw)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies())
def test_the_parser_never_raises_anything_but_the_contracts_error(text: str) -> None:
    try:
        records = parse_body(text)
    except QueueMessageInvalidError:
        return
    for item in records:
        assert isinstance(item, Arrival | Notice)
        if isinstance(item, Arrival):
            assert item.obj.size >= 0 and item.obj.last_modified.utcoffset() is not None
            item.obj.key.encode()  # a key S3 could hold
