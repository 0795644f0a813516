"""The erasure of a user with 1,000 documents of 3 versions each, on the local stack: nothing is
left, in ceil(versions / 1,000) DeleteObjects requests per bucket plus the listing and Query
pages. Prints the requests and the time (the figures in docs/lifecycle.md).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from jobs.contract import RetentionClass, Status, layout
from jobs.contract.item import DocumentItem
from jobs.erasure.run import ErasureRun
from jobs.observability import CallMetrics
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from jobs.store.table_writes import claim_put
from tests.jobs.lifecycle.lifecycle_helpers import listed

DOCUMENTS = 1000


def _seed(stack, user: str) -> int:
    """Each document: its raw upload twice (two versions) and one result.json: 3 versions."""
    s, s3 = stack.settings, stack.s3()
    now = layout.utc_now()

    def one(n: int) -> None:
        doc = f"d{n:04d}"
        for body in (b"first", b"second"):
            s3.put_object(Bucket=s.store.raw_bucket, Key=layout.raw_key(user, doc, "invoice.xml"), Body=body)
        s3.put_object(Bucket=s.store.processed_bucket, Key=layout.result_key(user, doc), Body=b"{}")

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, range(DOCUMENTS)))
    items = [
        DocumentItem(
            userId=user,
            documentId=f"d{n:04d}",
            status=Status.PROCESSED,
            createdAt=now,
            updatedAt=now,
            updatedBy="ingest:seed",
            rawS3Uri=layout.s3_uri(s.store.raw_bucket, layout.raw_key(user, f"d{n:04d}", "invoice.xml")),
            rawEtag='"e"',
            retentionClass=RetentionClass.STANDARD,
            retainUntil=now + timedelta(days=1827),
        )
        for n in range(DOCUMENTS)
    ]
    table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, CallMetrics())
    assert all(table.put_all([claim_put(i, None) for i in items], "seed"))
    return 3 * DOCUMENTS


@pytest.mark.slow
def test_erasing_a_thousand_documents_of_three_versions(stack) -> None:
    versions = _seed(stack, "big")
    metrics = CallMetrics()
    s = stack.settings
    run = ErasureRun(
        s,
        DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics),
        Buckets(stack.s3(), metrics),
        metrics,
    )
    started = time.perf_counter()
    done = run.execute("big")
    seconds = time.perf_counter() - started
    raw_prefix, result_prefix = layout.user_prefixes("big")
    assert stack.items() == []
    assert listed(stack, s.store.raw_bucket, raw_prefix) == listed(stack, s.store.processed_bucket, result_prefix) == []
    assert done.receipt is not None
    assert done.receipt.deleted.model_dump() == {
        "items": DOCUMENTS,
        "documents": DOCUMENTS,
        "versions": versions,
        "deleteMarkers": 0,
    }
    calls = {name: int(v["calls"]) for name, v in metrics.summary().items()}
    # 2,000 raw versions and 1,000 results: 2 + 1 requests = ceil(3,000 / 1,000); a pass that
    # deletes and one that finds nothing: the listing and Query pages of two passes (and the
    # first look whether anything is stored).
    assert calls["s3.DeleteObjects.versions"] == math.ceil(versions / 1000) and done.receipt.passes == 2
    # Each document's last version names the run, then it goes: two transactions of 100 per 100.
    assert calls["dynamodb.TransactWrite.erase"] == 2 * math.ceil(DOCUMENTS / 100)
    print(f"\nerasure of {DOCUMENTS} documents, {versions} versions: {seconds:.1f} s; requests {calls}")
