"""Reconcile knows the duplicate markers: what the jobs leave is clean, what breaks them is found.

On the live local stack: duplicates flagged, re-uploads, a review that corrects and settles, and
a tombstone written by repair leave no finding, live or from export files, with either engine
(polars, and the Athena SQL on DuckDB), --deep included (result.json's review record is what the
item repeats). A marker without its document and a document without its marker are each found,
by every engine alike.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import polars as pl
from polars.testing import assert_frame_equal

from jobs.contract import DuplicateKind, Status, layout
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.reconcile.plans import FilesPlan, LivePlan, Plan
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.run import ReconcileRun
from jobs.review.desk import ReviewDesk
from jobs.store.dynamo_wire import to_wire
from tests.jobs.reconcile.reconcile_helpers import export_state

INVOICE = {
    "invoiceNumber": "M-1",
    "vendorName": "Acme GmbH",
    "invoiceDate": "2026-03-01",
    "currency": "EUR",
    "subtotal": "100.00",
    "tax": "19.00",
    "totalAmount": "119.00",
}


def upload(stack, user: str, doc: str, **fields: Any) -> str:
    key = layout.raw_key(user, doc, "invoice.json")
    stack.s3().put_object(
        Bucket=stack.settings.store.raw_bucket, Key=key, Body=json.dumps({**INVOICE, **fields}).encode()
    )
    return key


def ingest(stack) -> None:
    IngestRun(stack.settings, BackfillPlan()).execute()


def reconcile(stack, plan: type[Plan] = LivePlan, **options: Any) -> Any:
    return ReconcileRun(stack.settings, plan(grace=timedelta(0), write_report=False, **options)).execute()


def every_engine(stack, root: Path) -> list[pl.DataFrame]:
    """The findings live (--deep too) and from export files with polars and the Athena SQL."""
    exported = export_state(stack, root, "Parquet")
    files = {"dynamodb_export": exported.export, "s3_inventories": tuple(exported.manifests)}
    return [
        reconcile(stack).findings,
        reconcile(stack, deep=True).findings,
        *(reconcile(stack, FilesPlan, engine=engine, **files).findings for engine in ("polars", "duckdb")),
    ]


def test_what_the_jobs_leave_is_clean_for_every_engine(stack, tmp_path: Path) -> None:
    for n in range(5):
        upload(stack, "u1", f"copy-{n}")  # one document, four duplicates
    upload(stack, "u1", "nov", vendorName=None, invoiceNumber="M-2")  # in review: no seller
    # Its own invoice from the start: were it a copy too, it might hold the copies' markers and
    # take them along to M-3, leaving the copies' identity held by nobody.
    upload(stack, "u1", "moved", invoiceNumber="M-0")
    ingest(stack)
    upload(stack, "u1", "moved", invoiceNumber="M-3")  # re-uploaded: its markers move
    ingest(stack)
    desk = ReviewDesk.from_settings(stack.settings)
    for doc, fixes in (("nov", ["vendor=Nova AG", "total=119"]), ("copy-3", [])):
        doc = doc if doc != "copy-3" else next(i.documentId for i in stack.items() if i.reviewReasons)
        desk.claim("u1", doc, "alice")
        if fixes:
            desk.correct("u1", doc, "alice", fixes)
        desk.settle("u1", doc, "alice")  # a duplicate settled as not one
    assert len(stack.markers()) == 2 + 2 + 2  # the copies' holder, nov (after its correction), moved
    for found in every_engine(stack, tmp_path):
        assert found.height == 0, found.to_dicts()


def test_a_marker_without_its_document_and_the_reverse_are_found_alike(stack, tmp_path: Path) -> None:
    upload(stack, "u1", "a")
    upload(stack, "u1", "b", invoiceNumber="M-9")
    ingest(stack)
    table = stack.dynamodb()
    a = next(i for i in stack.items() if i.documentId == "a")
    # a's item goes behind the jobs' back; b's content marker too.
    table.delete_item(TableName=stack.settings.store.table_name, Key=to_wire(a.key()))
    (b_content,) = [m for m in stack.markers() if m.documentId == "b" and m.kind is DuplicateKind.CONTENT]
    table.delete_item(TableName=stack.settings.store.table_name, Key=to_wire(b_content.key()))
    expected = {(Code.ORPHAN_MARKER.value, "a"), (Code.MISSING_MARKER.value, "b")}
    found = [f.filter(pl.col("code").str.ends_with("_MARKER")) for f in every_engine(stack, tmp_path)]
    for markers in found:
        assert {(c, d) for c, d in markers.select("code", "documentId").iter_rows()} == expected
        assert markers.height == 3  # both of a's markers, b's content marker
        assert_frame_equal(markers, found[0])  # every engine renders the same findings
    missing = found[0].filter(pl.col("code") == Code.MISSING_MARKER).row(0, named=True)
    assert json.loads(missing["evidence"])["kind"] == "CONTENT" and missing["severity"] == "error"


def test_repair_writes_a_tombstone_that_gives_its_markers_up(stack) -> None:
    key = upload(stack, "u1", "gone")
    upload(stack, "u1", "kept", invoiceNumber="M-8")
    ingest(stack)
    stack.s3().delete_object(Bucket=stack.settings.store.raw_bucket, Key=key)
    repaired = reconcile(stack, repair=True)
    assert [(r.code, r.documentId, r.outcome) for r in repaired.summary.repairs] == [
        (Code.MISSING_RAW, "gone", "applied")
    ]
    gone = next(i for i in stack.items() if i.documentId == "gone")
    assert gone.status == Status.DELETED and gone.held_markers == {}
    assert {m.documentId for m in stack.markers()} == {"kept"}
    assert reconcile(stack).findings.height == 0
    upload(stack, "u1", "again")  # gone's bytes again: nobody's duplicate now
    ingest(stack)
    assert next(i for i in stack.items() if i.documentId == "again").status == Status.PROCESSED
