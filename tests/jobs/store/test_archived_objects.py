"""Archived objects at the store boundary: a GET of a GLACIER object is S3ObjectArchivedError (a
state of that object), never access denied (an outage); the archive adapter reads the class and
restore state and asks for the restore. Live on moto's S3, which keeps storage classes, answers
InvalidObjectState as S3 does and restores at once.
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from jobs.errors import S3ObjectArchivedError, StoreAccessDeniedError, StoreUnavailableError
from jobs.observability import CallMetrics
from jobs.store._aws import translate
from jobs.store.archive import Archives, Readable
from jobs.store.s3 import Buckets

KEY = "raw/u1/d1/a.xml"


def test_invalid_object_state_is_archived_not_access_denied() -> None:
    error = ClientError(
        {
            "Error": {"Code": "InvalidObjectState", "Message": "m", "StorageClass": "DEEP_ARCHIVE"},
            "ResponseMetadata": {"HTTPStatusCode": 403},
        },
        "GetObject",
    )
    translated = translate(error, "s3.GetObject", "s3://b/k")
    assert isinstance(translated, S3ObjectArchivedError)
    assert not isinstance(translated, StoreUnavailableError)  # not an outage: the run goes on
    assert translated.reason == "ARCHIVED" and translated.code == "InvalidObjectState"
    assert str(translated).startswith("ARCHIVED: ") and "s3://b/k is in DEEP_ARCHIVE" in str(translated)
    denied = ClientError({"Error": {"Code": "AccessDenied"}, "ResponseMetadata": {"HTTPStatusCode": 403}}, "Op")
    assert isinstance(translate(denied, "s3.GetObject"), StoreAccessDeniedError)


def test_a_glacier_object_reads_as_archived_until_restored(stack) -> None:
    s3, bucket = stack.s3(), stack.settings.store.raw_bucket
    s3.put_object(Bucket=bucket, Key=KEY, Body=b"<Invoice/>", StorageClass="GLACIER")
    buckets, archives = Buckets(s3, CallMetrics()), Archives(s3, CallMetrics())
    with pytest.raises(S3ObjectArchivedError, match=f"s3://{bucket}/{KEY} is in GLACIER"):
        buckets.get_bytes(bucket, KEY)
    state = archives.state(bucket, KEY)
    assert state is not None and state.storage_class == "GLACIER" and state.readable == Readable.ARCHIVED

    archives.request_restore(bucket, KEY, days=2, tier="Bulk")
    archives.request_restore(bucket, KEY, days=2, tier="Bulk")  # asked twice: no error
    state = archives.state(bucket, KEY)
    assert state is not None and state.readable == Readable.RESTORED and state.restored_until
    assert buckets.get_bytes(bucket, KEY) == b"<Invoice/>"


def test_instant_retrieval_and_standard_need_no_restore(stack) -> None:
    s3, bucket = stack.s3(), stack.settings.store.processed_bucket
    s3.put_object(Bucket=bucket, Key="processed/u1/d1/result.json", Body=b"{}", StorageClass="GLACIER_IR")
    s3.put_object(Bucket=bucket, Key="processed/u1/d2/result.json", Body=b"{}")
    archives = Archives(s3, CallMetrics())
    assert Buckets(s3, CallMetrics()).get_bytes(bucket, "processed/u1/d1/result.json") == b"{}"
    ir = archives.state(bucket, "processed/u1/d1/result.json")
    standard = archives.state(bucket, "processed/u1/d2/result.json")
    assert ir is not None and (ir.storage_class, ir.readable) == ("GLACIER_IR", Readable.YES)
    assert standard is not None and (standard.storage_class, standard.readable) == ("STANDARD", Readable.YES)
    assert archives.state(bucket, "processed/u1/none/result.json") is None
