"""Test helpers: a stage with processed documents, its table exported as AWS would, its tables,
and what a bad image writes.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from jobs.contract import DocumentItem, ResultDocument, RetentionClass, layout
from jobs.contract.actors import ActorKind, actor
from jobs.demo.corpus import DemoDocument, generate
from jobs.demo.seed import upload
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.local.stack import REGION
from jobs.local.table_export import export_table
from jobs.observability import CallMetrics
from jobs.store.clients import dynamodb_client, s3_client
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets


def ingest(stack: Any, docs: list[DemoDocument]) -> None:
    """Upload `docs` into raw/ and run the backfill sweep over them (one extraction worker)."""
    upload(stack.s3(), stack.settings.store.raw_bucket, docs)
    settings = stack.settings.changed(extract_workers=1)
    IngestRun(settings, BackfillPlan()).execute()


def processed_stage(stack: Any, docs: int = 12, seed: int = 7) -> list[DemoDocument]:
    corpus = list(generate(3, docs, bad_ratio=0.1, seed=seed))
    ingest(stack, corpus)
    return corpus


def export(stack: Any) -> str:
    """A full export of the stage's table where the stack keeps exports (the local stand-in)."""
    settings = stack.settings
    return export_table(settings, dynamodb_client(settings), s3_client(settings), REGION)


def scan(stack: Any, table: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Every item of `table` in DynamoDB JSON, by key."""
    pages = stack.dynamodb().get_paginator("scan").paginate(TableName=table)
    return {(i["PK"]["S"], i["SK"]["S"]): i for page in pages for i in page.get("Items", [])}


def tables(stack: Any) -> set[str]:
    names = stack.dynamodb().list_tables()["TableNames"]
    return {n for n in names if n.startswith(stack.settings.store.table_name)}


def reports(stack: Any, prefix: str = "runs/drill/") -> dict[str, dict[str, Any]]:
    s3 = stack.s3()
    return {
        key: json.loads(s3.get_object(Bucket=stack.settings.store.reports_bucket, Key=key)["Body"].read())
        for key in stack.keys(stack.settings.store.reports_bucket, prefix)
    }


BAD_VENDOR = "Bad Image GmbH"


def _bad_image(stack: Any) -> tuple[DocumentTable, Buckets]:
    s = stack.settings
    metrics = CallMetrics()
    return DocumentTable(dynamodb_client(s), s.store.table_name, s.store.index_name, metrics), Buckets(
        s3_client(s), metrics
    )


def corrupt(stack: Any, item: DocumentItem, *, result_too: bool) -> None:
    """What the bad image writes for one document: a wrong vendor and total, conditionally on the
    version it read, and (result_too) a result.json saying the same, fenced on the current one.
    """
    table, buckets = _bad_image(stack)
    result_etag = item.resultEtag
    if result_too:
        key = layout.result_key(item.userId, item.documentId)
        doc = ResultDocument.from_json_bytes(buckets.get_bytes(stack.settings.store.processed_bucket, key))
        assert doc.invoice is not None
        wrong = doc.model_copy(
            update={
                "invoice": doc.invoice.model_copy(update={"vendorName": BAD_VENDOR, "totalAmount": Decimal("0.01")})
            }
        )
        result_etag = buckets.put_json(
            stack.settings.store.processed_bucket,
            key,
            wrong.to_json_bytes(),
            replaces=item.resultEtag,
            retention=item.retentionClass or RetentionClass.STANDARD,
        )
    bad = item.evolve(
        vendorName=BAD_VENDOR,
        totalAmount=Decimal("0.01") if result_too else item.totalAmount,
        resultEtag=result_etag,
        version=item.version + 1,
        updatedAt=layout.utc_now(),
        updatedBy=actor(ActorKind.INGEST, "bad-image-run"),
    )
    assert table.put_if_version(bad, item.version)
