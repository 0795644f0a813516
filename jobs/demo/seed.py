"""Upload a generated demo corpus into raw/ in parallel (idempotent: same seed, same keys and bytes)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from jobs.contract import layout
from jobs.demo.corpus import DemoDocument

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


def upload(client: S3Client, bucket: str, documents: Iterable[DemoDocument], threads: int = 16) -> Counter[str]:
    kinds: Counter[str] = Counter()

    def put(doc: DemoDocument) -> str:
        client.put_object(Bucket=bucket, Key=layout.raw_key(doc.user_id, doc.document_id, doc.filename), Body=doc.body)
        return f"{doc.kind}{'+review' if doc.review else ''}"

    with ThreadPoolExecutor(threads) as pool:
        # map() keeps at most one result per document in memory; bodies are generated lazily.
        for kind in pool.map(put, documents):
            kinds[kind] += 1
    return kinds
