"""Retention on the live local stack: the ingest decides a document's class once, when it first
finishes, and gives the item, its result.json and its raw object the same clock.
"""

from __future__ import annotations

from datetime import timedelta

from jobs.contract import RetentionClass, layout
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.store.dynamo_wire import to_wire
from tests.jobs.lifecycle.lifecycle_helpers import POLICY, credit_note, invoice, put_raw


def _ingest(stack):
    return IngestRun(stack.settings, BackfillPlan()).execute()


def test_each_type_gets_its_class_on_the_item_result_and_raw_object(stack) -> None:
    stack.settings = stack.settings.changed(retention=POLICY)
    put_raw(stack, "u1", "inv", invoice())
    put_raw(stack, "u1", "cn", credit_note())
    first = _ingest(stack)
    assert first.processed == 2
    # One retention tag per new upload (result.json carries its tag in its own PutObject).
    assert first.calls["s3.PutObjectTagging"]["calls"] == 2
    s3, items = stack.s3(), {i.documentId: i for i in stack.items()}
    for doc, retention in (("inv", RetentionClass.STANDARD), ("cn", RetentionClass.COMPLIANCE)):
        item = items[doc]
        assert item.retentionClass is retention
        assert item.retainUntil == item.createdAt + timedelta(days=POLICY.days(retention))  # from the upload
        raw_key = layout.parse_s3_uri(item.rawS3Uri)[1]
        head = s3.head_object(Bucket=stack.settings.store.raw_bucket, Key=raw_key)
        assert abs(head["LastModified"] - item.createdAt) < timedelta(seconds=1)  # the lifecycle's clock
        result_key = layout.result_key("u1", doc)
        for bucket, key in (
            (stack.settings.store.raw_bucket, raw_key),
            (stack.settings.store.processed_bucket, result_key),
        ):
            tags = s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]
            assert tags == [{"Key": layout.RETENTION_TAG, "Value": retention.value}], key
        key = to_wire({layout.PK_ATTR: layout.user_pk("u1"), layout.SK_ATTR: layout.document_sk(doc)})
        stored = stack.dynamodb().get_item(TableName=stack.settings.store.table_name, Key=key)
        assert stored["Item"][layout.TTL_ATTR] == {"N": str(int(item.retainUntil.timestamp()))}


def test_the_class_is_decided_once_and_a_new_upload_restarts_only_the_clock(stack) -> None:
    stack.settings = stack.settings.changed(retention=POLICY)
    put_raw(stack, "u1", "d", credit_note())
    _ingest(stack)
    (before,) = stack.items()
    # The same document id uploaded again, now as an invoice: its class stays compliance.
    # Named after the first: within the same second the larger key is the newer upload.
    put_raw(stack, "u1", "d", invoice(), name="z-corrected.xml")
    again = _ingest(stack)
    (after,) = stack.items()
    assert after.retentionClass is RetentionClass.COMPLIANCE and after.rawS3Uri.endswith("/z-corrected.xml")
    assert after.createdAt >= before.createdAt
    assert after.retainUntil == after.createdAt + timedelta(days=POLICY.compliance_days)
    assert again.calls["s3.PutObjectTagging"]["calls"] == 1  # the new upload only
    assert _ingest(stack).calls.get("s3.PutObjectTagging") is None  # nothing new: nothing tagged
