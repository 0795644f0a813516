"""A killed erasure resumed at scale (issue 46), on the live local stack: a user of 15 documents
and more than 1,000 versions (two DeleteObjects requests for the raw prefix alone, at S3's real
1,000 a request), killed at several points of a real run: before a request, after a request
landed but before its count was saved, after an item transaction, in a later pass, and several
times over. The resumed receipt must equal what the user had stored before the first run.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

import pytest

from jobs.contract import RetentionClass, Status, layout
from jobs.contract.erasure import ErasureState
from jobs.contract.item import DocumentItem
from jobs.erasure.run import ErasureRun
from jobs.observability import CallMetrics
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from jobs.store.table_writes import claim_put
from tests.jobs.lifecycle.lifecycle_helpers import listed

USER = "alice"
DOCUMENTS = 15
RAW_VERSIONS = 70  # per document: 1,050 raw versions, two DeleteObjects requests
OTHERS = 4  # items in the partition that are not documents


class Killed(BaseException):
    """The process killed between two requests (nothing the run could handle)."""


@dataclass
class Kills:
    """Where a run dies: DeleteObjects calls (1-based, over the run) killed before they go out or
    right after they land (before the run could save their count), and item-delete transactions
    killed right after they land.
    """

    before_delete: int = 0
    after_delete: int = 0
    after_items: int = 0


class KillingBuckets(Buckets):
    def __init__(self, client, metrics, kills: Kills) -> None:
        super().__init__(client, metrics)
        self.kills, self.calls = kills, 0

    def delete_versions(self, bucket, versions):
        self.calls += 1
        if self.calls == self.kills.before_delete:
            raise Killed
        refused = super().delete_versions(bucket, versions)
        if self.calls == self.kills.after_delete:
            raise Killed
        return refused


class KillingTable(DocumentTable):
    def __init__(self, client, table_name, index_name, metrics, kills: Kills) -> None:
        super().__init__(client, table_name, index_name, metrics)
        self.kills, self.deletes = kills, 0

    def put_all(self, writes, operation, chunk=100):
        landed = super().put_all(writes, operation, chunk)
        # The erasure's item transactions come in pairs: the signing versions, then the deletes.
        if operation == "dynamodb.TransactWrite.erase" and all(
            w.__class__.__name__ == "ConditionalDelete" for w in writes
        ):
            self.deletes += 1
            if self.deletes == self.kills.after_items:
                raise Killed
        return landed


def _run(stack, kills: Kills | None = None, **options) -> ErasureRun:
    s, metrics = stack.settings, CallMetrics()
    if kills is None:
        table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics)
        return ErasureRun(s, table, Buckets(stack.s3(), metrics), metrics, **options)
    table = KillingTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics, kills)
    return ErasureRun(s, table, KillingBuckets(stack.s3(), metrics, kills), metrics, **options)


def _put_versions(stack, user: str, docs: range, per_doc: int) -> None:
    s, s3 = stack.settings, stack.s3()

    def one(n: int) -> None:
        for v in range(per_doc):
            s3.put_object(
                Bucket=s.store.raw_bucket, Key=layout.raw_key(user, f"d{n:02d}", "invoice.xml"), Body=b"%d" % v
            )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, docs))


def _seed(stack, user: str = USER) -> dict[str, int]:
    """15 documents: raw uploads of many versions, two result.json versions, a delete marker on
    five raw objects; their items and a few other items. Returns what is stored, counted.
    """
    s, s3 = stack.settings, stack.s3()
    _put_versions(stack, user, range(DOCUMENTS), RAW_VERSIONS)
    for n in range(DOCUMENTS):
        for body in (b"{}", b"{ }"):
            s3.put_object(Bucket=s.store.processed_bucket, Key=layout.result_key(user, f"d{n:02d}"), Body=body)
    for n in range(5):
        s3.delete_object(Bucket=s.store.raw_bucket, Key=layout.raw_key(user, f"d{n:02d}", "invoice.xml"))
    _put_items(stack, user, range(DOCUMENTS))
    for n in range(OTHERS):
        stack.dynamodb().put_item(
            TableName=s.store.table_name, Item={"PK": {"S": layout.user_pk(user)}, "SK": {"S": f"NOTE#{n}"}}
        )
    return _stored(stack, user)


def _put_items(stack, user: str, docs: range) -> None:
    s, now = stack.settings, layout.utc_now()
    items = [
        DocumentItem(
            userId=user,
            documentId=f"d{n:02d}",
            status=Status.PROCESSED,
            createdAt=now,
            updatedAt=now,
            updatedBy="ingest:seed",
            rawS3Uri=layout.s3_uri(s.store.raw_bucket, layout.raw_key(user, f"d{n:02d}", "invoice.xml")),
            rawEtag='"e"',
            retentionClass=RetentionClass.STANDARD,
            retainUntil=now + timedelta(days=1827),
        )
        for n in docs
    ]
    table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, CallMetrics())
    assert all(table.put_all([claim_put(i, None) for i in items], "seed"))


def _stored(stack, user: str) -> dict[str, int]:
    """What of the user is stored, counted as a receipt counts it."""
    s = stack.settings
    raw_prefix, result_prefix = layout.user_prefixes(user)
    entries = listed(stack, s.store.raw_bucket, raw_prefix) + listed(stack, s.store.processed_bucket, result_prefix)
    response = stack.dynamodb().query(
        TableName=s.store.table_name,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": layout.user_pk(user)}},
        ConsistentRead=True,
    )
    items = [i for i in response["Items"] if i["SK"]["S"] != layout.erasure_sk()]
    return {
        "items": len(items),
        "documents": sum(layout.is_document_sk(i["SK"]["S"]) for i in items),
        "versions": sum(not e.marker for e in entries),
        "deleteMarkers": sum(e.marker for e in entries),
    }


NOTHING = {"items": 0, "documents": 0, "versions": 0, "deleteMarkers": 0}


def _resume_and_check(stack, expected: dict[str, int]) -> None:
    done = _run(stack).execute(USER)
    assert done.outcome == "erased" and done.receipt is not None
    assert _stored(stack, USER) == NOTHING
    assert done.receipt.deleted.model_dump() == expected
    marker = stack.dynamodb().get_item(TableName=stack.settings.store.table_name, Key=_marker_key())["Item"]
    assert marker["state"]["S"] == ErasureState.DONE and "pending" not in marker


def _marker_key() -> dict:
    return {k: {"S": v} for k, v in layout.erasure_key(USER).items()}


def test_two_kills_in_a_row_after_requests_landed(stack) -> None:
    """The default run's case: killed after the first DeleteObjects landed, then (resumed)
    after its item transaction landed; the third run finishes.
    """
    before = _seed(stack)
    # 1,050 raw versions and 5 delete markers: two DeleteObjects requests for raw/ alone.
    assert before == {"items": DOCUMENTS + OTHERS, "documents": DOCUMENTS, "versions": 1080, "deleteMarkers": 5}
    with pytest.raises(Killed):
        _run(stack, Kills(after_delete=1)).execute(USER)
    with pytest.raises(Killed):
        _run(stack, Kills(after_items=1)).execute(USER)
    _resume_and_check(stack, before)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kills",
    [
        pytest.param(Kills(after_delete=1), id="after-the-first-request-landed"),
        pytest.param(Kills(before_delete=2), id="before-the-second-request"),
        pytest.param(Kills(after_delete=2), id="after-the-second-request-landed"),
        pytest.param(Kills(after_items=1), id="after-the-item-transaction-landed"),
    ],
)
def test_a_resumed_erasure_counts_everything_whatever_the_kill_hit(stack, kills: Kills) -> None:
    before = _seed(stack)
    with pytest.raises(Killed):
        _run(stack, kills).execute(USER)
    marker = stack.dynamodb().get_item(TableName=stack.settings.store.table_name, Key=_marker_key())["Item"]
    assert marker["state"]["S"] == ErasureState.RUNNING  # the kill left the run to resume
    _resume_and_check(stack, before)


@pytest.mark.slow
def test_a_kill_in_a_later_pass_then_in_the_resumed_run(stack) -> None:
    """Pass 1 erases what it listed; 11 documents of 100 versions each arrive before pass 2 (two
    more requests and an item transaction), which is killed after its first request landed; the
    next run dies after its item transaction; the third finishes.
    """
    before = _seed(stack)
    late = range(DOCUMENTS, DOCUMENTS + 11)

    def upload(number: int) -> None:
        if number == 1:
            _put_versions(stack, USER, late, 100)
            _put_items(stack, USER, late)

    # Pass 1: raw (2 requests) and processed (1); pass 2's raw listing goes in requests 4 and 5.
    with pytest.raises(Killed):
        _run(stack, Kills(after_delete=4), between_passes=upload).execute(USER)
    with pytest.raises(Killed):
        _run(stack, Kills(after_items=1)).execute(USER)
    expected = {
        "items": before["items"] + len(late),
        "documents": before["documents"] + len(late),
        "versions": before["versions"] + 100 * len(late),
        "deleteMarkers": before["deleteMarkers"],
    }
    _resume_and_check(stack, expected)
