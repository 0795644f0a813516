"""Reconcile's repairs reach the nightly drain (issue 27): repair → drain → reconcile clean.

The nightly ingest drains the arrival queue and sees nothing else, so every repair that leaves
work for the ingest must queue it. Each test breaks one document the way the finding describes,
runs `reconcile --repair` (deep, no grace) as the schedule would, then one drain, and ends on the
reliability invariants and a clean deep reconcile.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from reliability_helpers import assert_clean

from jobs.contract import ResultDocument, Status, layout
from jobs.contract.actors import ActorKind, actor
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.ingest.plans import DrainPlan
from jobs.ingest.run import IngestRun
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.run import ReconcileRun
from jobs.store.dynamo_wire import to_wire

DOCS = 4


def drain(stack):
    return IngestRun(stack.settings, DrainPlan(idle_seconds=1)).execute()


def repair(stack):
    options = LivePlan(deep=True, grace=timedelta(0), repair=True, write_report=False)
    return ReconcileRun(stack.settings, options).execute()


def _missing_result(stack, item) -> None:
    stack.s3().delete_object(
        Bucket=stack.settings.store.processed_bucket, Key=layout.result_key(item.userId, item.documentId)
    )


def _stuck(stack, item) -> None:
    stuck = item.evolve(
        status=Status.PROCESSING,
        leaseOwner="crashed-host:1:run",
        leaseExpiresAt=layout.utc_now() - timedelta(days=1),
        version=item.version + 1,
        updatedBy=actor(ActorKind.INGEST, "crashed-run"),
    )
    stack.dynamodb().put_item(TableName=stack.settings.store.table_name, Item=to_wire(stuck.to_item()))


def _foreign_result(stack, item) -> None:
    """result.json left by a writer of another upload (a stale writer's bytes)."""
    s3, key = stack.s3(), layout.result_key(item.userId, item.documentId)
    doc = ResultDocument.from_json_bytes(
        s3.get_object(Bucket=stack.settings.store.processed_bucket, Key=key)["Body"].read()
    )
    foreign = doc.model_copy(update={"source": doc.source.model_copy(update={"etag": '"an-older-upload"'})})
    s3.put_object(Bucket=stack.settings.store.processed_bucket, Key=key, Body=foreign.to_json_bytes())


BREAKS = {"MISSING_RESULT": _missing_result, "STUCK_PROCESSING": _stuck, "RESULT_SOURCE_MISMATCH": _foreign_result}


@pytest.mark.parametrize("code", BREAKS)
def test_a_document_marked_for_reprocessing_is_processed_by_the_next_drain(stack, code: str) -> None:
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(1, DOCS, bad_ratio=0, review_ratio=0, seed=61))
    assert drain(stack).processed == DOCS
    broken = stack.items()[0]
    BREAKS[code](stack, broken)

    repaired = repair(stack)

    (action,) = [a for a in repaired.summary.repairs if a.documentId == broken.documentId]
    assert (action.code, action.outcome) == (code, "applied") and "re-queued" in action.detail
    healed = drain(stack)
    assert healed.processed == 1 and healed.decisions == {"CLAIM": 1}
    assert_clean(stack, DOCS)


def test_a_tombstone_whose_file_is_uploaded_again_is_reported_repaired_and_processed(stack) -> None:
    (doc,) = generate(1, 1, bad_ratio=0, review_ratio=0, seed=67)
    key = layout.raw_key(doc.user_id, doc.document_id, doc.filename)
    s3, raw = stack.s3(), stack.settings.store.raw_bucket
    s3.put_object(Bucket=raw, Key=key, Body=doc.body)
    assert drain(stack).processed == 1
    s3.delete_object(Bucket=raw, Key=key)
    assert [a.code for a in repair(stack).summary.repairs] == ["MISSING_RAW"]  # the tombstone
    s3.put_bucket_notification_configuration(Bucket=raw, NotificationConfiguration={})  # its arrival is lost
    s3.put_object(Bucket=raw, Key=key, Body=doc.body)  # the same file again

    repaired = repair(stack)

    assert repaired.findings.get_column("code").to_list() == ["DELETED_RAW_EXISTS"]
    (action,) = repaired.summary.repairs
    assert (action.action, action.outcome) == ("re-queue the arrival", "applied")
    healed = drain(stack)
    assert healed.decisions == {"CLAIM": 1} and healed.statuses == {"PROCESSED": 1}
    assert_clean(stack, 1)
