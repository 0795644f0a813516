"""The stand-in of the audit Pipe and Firehose on the live local stack: the table's stream, every
record of it, delivered as Parquet of the contract's columns into the stage's audit bucket.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
from botocore.exceptions import ClientError

from jobs.audit.schema import changes_schema
from jobs.contract import DocumentItem, Status, layout
from jobs.contract.actors import ActorKind, actor
from jobs.contract.audit import stream_record
from jobs.errors import S3ObjectExistsError
from jobs.local.standins.audit_pipe import StagePipe
from jobs.local.standins.firehose import ConversionError, converter
from jobs.observability import CallMetrics
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
INGEST = actor(ActorKind.INGEST, "run-1")


def _item(doc: str, version: int, status: Status) -> DocumentItem:
    return DocumentItem(
        userId="alice",
        documentId=doc,
        status=status,
        createdAt=T0,
        updatedAt=T0,
        rawS3Uri=layout.s3_uri("raw", layout.raw_key("alice", doc, "a.xml")),
        rawEtag='"e1"',
        version=version,
        updatedBy=INGEST,
    )


def _table(stack) -> DocumentTable:
    return DocumentTable(
        stack.dynamodb(), stack.settings.store.table_name, stack.settings.store.index_name, CallMetrics()
    )


def _objects(stack, prefix: str) -> list[str]:
    return stack.keys(stack.settings.audit.audit_bucket, prefix)


def _rows(stack) -> list[dict]:
    s3 = stack.s3()
    rows = []
    for key in _objects(stack, layout.AUDIT_CHANGES_PREFIX):
        body = s3.get_object(Bucket=stack.settings.audit.audit_bucket, Key=key)["Body"].read()
        table = pq.read_table(io.BytesIO(body))
        assert table.schema == changes_schema()
        rows += table.to_pylist()
    return rows


def test_every_insert_modify_and_remove_lands_in_the_log_with_its_images(stack) -> None:
    table = _table(stack)
    assert table.put_if_version(_item("d1", 1, Status.PROCESSING), None)
    assert table.put_if_version(_item("d1", 2, Status.PROCESSED), 1)
    stack.dynamodb().delete_item(
        TableName=stack.settings.store.table_name, Key={"PK": {"S": "USER#alice"}, "SK": {"S": "DOC#d1"}}
    )
    assert stack.audit_flush() == 3
    (key,) = _objects(stack, layout.AUDIT_CHANGES_PREFIX)
    today = datetime.now(UTC).date()
    assert key.startswith(layout.audit_changes_prefix(today) + layout.audit_delivery_name(stack.settings.stage) + "-1-")
    assert key.endswith(".parquet")
    rows = _rows(stack)
    assert [r["eventname"] for r in rows] == ["INSERT", "MODIFY", "REMOVE"]
    insert, modify, remove = (r["dynamodb"] for r in rows)
    assert insert["oldimage"] is None and insert["newimage"]["version"] == {"n": "1"}
    assert modify["oldimage"]["status"] == {"s": "PROCESSING"} and modify["newimage"]["status"] == {"s": "PROCESSED"}
    assert modify["newimage"]["updatedby"] == {"s": INGEST}
    assert remove["newimage"] is None and remove["oldimage"]["version"] == {"n": "2"}
    assert len({r["eventid"] for r in rows}) == 3
    assert all(r["eventsourcearn"].startswith("arn:aws:dynamodb:") for r in rows)
    assert all(abs(r["dynamodb"]["approximatecreationdatetime"] - datetime.now(UTC).timestamp()) < 300 for r in rows)
    # Nothing new: a second flush delivers nothing and writes no object.
    assert stack.audit_flush() == 0
    assert len(_objects(stack, layout.AUDIT_CHANGES_PREFIX)) == 1


def test_a_restarted_stand_in_delivers_again_at_least_once(stack) -> None:
    assert _table(stack).put_if_version(_item("d1", 1, Status.PROCESSING), None)
    assert stack.audit_flush() == 1
    again = StagePipe.for_settings(stack.settings)  # a new process: positions start over
    assert again.flush() == 1
    rows = _rows(stack)
    assert len(rows) == 2 and rows[0]["eventid"] == rows[1]["eventid"]


def test_records_that_do_not_fit_the_table_are_kept_as_conversion_failures(stack) -> None:
    assert _table(stack).put_if_version(_item("d1", 1, Status.PROCESSING), None)
    stack.audit_pipe.firehose.put_record_batch(
        [b"{not json", json.dumps({"eventID": "x", "dynamodb": "not an object"}).encode()]
    )
    assert stack.audit_flush() == 1  # the good record is delivered beside them
    (errors,) = _objects(stack, layout.AUDIT_ERRORS_PREFIX)
    assert errors.startswith(f"{layout.AUDIT_ERRORS_PREFIX}{layout.AUDIT_CONVERSION_FAILED}/dt=")
    body = stack.s3().get_object(Bucket=stack.settings.audit.audit_bucket, Key=errors)["Body"].read()
    failures = [json.loads(line) for line in body.splitlines()]
    assert [f["lastErrorCode"] for f in failures] == ["DataFormatConversion.MalformedData"] * 2
    assert "$.dynamodb: expected an object" in failures[1]["lastErrorMessage"]
    assert stack.audit_pipe.firehose.delivered.failed == 2


def test_a_delivered_object_is_neither_overwritten_nor_deleted(stack) -> None:
    assert _table(stack).put_if_version(_item("d1", 1, Status.PROCESSING), None)
    stack.audit_flush()
    (key,) = _objects(stack, layout.AUDIT_CHANGES_PREFIX)
    s3, bucket = stack.s3(), stack.settings.audit.audit_bucket
    lock = s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]["Rule"]["DefaultRetention"]
    assert (lock["Mode"], lock["Days"]) == ("GOVERNANCE", 730)
    head = s3.head_object(Bucket=bucket, Key=key)
    assert head["ObjectLockMode"] == "GOVERNANCE"
    assert (head["ObjectLockRetainUntilDate"] - datetime.now(UTC)).days in (729, 730)
    buckets = Buckets(s3, CallMetrics())
    with pytest.raises(S3ObjectExistsError):
        buckets.put_once(bucket, key, b"forged", "application/octet-stream")
    with pytest.raises(ClientError, match="AccessDenied"):
        s3.delete_object(Bucket=bucket, Key=key, VersionId=head["VersionId"])
    assert s3.get_object(Bucket=bucket, Key=key, VersionId=head["VersionId"])["ContentLength"] == head["ContentLength"]


def test_conversion_reads_json_as_firehose_openx_does() -> None:
    convert = converter(stream_record())
    row = convert({"EventID": "e1", "extra": 1, "dynamodb": {"sequencenumber": "7", "SizeBytes": "12"}})
    assert row["eventid"] == "e1" and "extra" not in row and row["eventname"] is None
    assert row["dynamodb"]["sequencenumber"] == "7" and row["dynamodb"]["sizebytes"] == 12
    assert row["dynamodb"]["newimage"] is None
    for bad in ({"dynamodb": []}, {"dynamodb": {"SizeBytes": "many"}}, {"eventID": {"S": "x"}}):
        with pytest.raises(ConversionError):
            convert(bad)
