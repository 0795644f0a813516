"""The lifecycle rules that read object versions, legal holds and tags (jobs.reconcile.rules.lifecycle):
which items they look at, what they report (pure), and a live run that finds a deleted document
whose versions outlived their grace.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
from polars.testing import assert_frame_equal

from jobs.contract import DocumentItem, RetentionClass, Status, layout
from jobs.contract.duplicates import marker_key
from jobs.contract.erasure import ErasureMarker, ErasureState
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.reconcile.inputs.live import item_row
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.rules import lifecycle
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.rules.frames import ITEMS_SCHEMA, OBJECTS_SCHEMA, Snapshot, empty
from jobs.reconcile.rules.params import RuleParams
from jobs.reconcile.run import ReconcileRun
from jobs.store.dynamo_wire import to_wire
from tests.jobs.lifecycle.lifecycle_helpers import invoice, put_raw

AS_OF = datetime(2031, 6, 1, tzinfo=UTC)
OLD = AS_OF - timedelta(days=400)


def _items(*items: dict[str, object]) -> pl.DataFrame:
    return pl.DataFrame([item_row(i, deep=False) for i in items], schema=ITEMS_SCHEMA, orient="row")


def _doc(doc: str, **changes: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "userId": "u",
        "documentId": doc,
        "status": Status.PROCESSED,
        "createdAt": OLD,
        "updatedAt": OLD,
        "rawS3Uri": layout.s3_uri("raw", layout.raw_key("u", doc, "a.xml")),
        "rawEtag": '"e"',
        "retentionClass": RetentionClass.STANDARD,
        "retainUntil": OLD + timedelta(days=1827),
    }
    return DocumentItem(**{**fields, **changes}).to_item()  # type: ignore[arg-type]


def test_candidates_are_the_held_the_hard_deleted_and_under_deep_the_finished() -> None:
    deleted = {"deletedAt": OLD, "deletedBy": "user:u", "restoreStatus": Status.PROCESSED}
    items = _items(
        _doc("plain"),
        _doc("held", legalHoldAt=OLD, legalHoldBy="operator:x"),
        _doc("gone", status=Status.DELETED, hardDeleteAt=AS_OF - timedelta(days=8), **deleted),
        _doc("grace", status=Status.DELETED, hardDeleteAt=AS_OF - timedelta(days=6), **deleted),  # within the gap
        _doc("claimed", status=Status.PROCESSING),
        ErasureMarker(userId="u", runId="r", state=ErasureState.DONE, startedAt=OLD, updatedBy="erasure:r").to_item(),
    )
    params = RuleParams(raw_bucket="raw", processed_bucket="processed", as_of=AS_OF)
    # "plain"'s upload is the one its item names; "held"'s was replaced since.
    raw = pl.DataFrame(
        [
            {
                "bucket": "raw",
                "key": layout.raw_key("u", "plain", "a.xml"),
                "etag": "e",
                "size": 1,
                "lastModified": OLD,
            },
            {
                "bucket": "raw",
                "key": layout.raw_key("u", "held", "a.xml"),
                "etag": "new",
                "size": 1,
                "lastModified": OLD,
            },
        ],
        schema=OBJECTS_SCHEMA,
    )
    snapshot = Snapshot(items, raw, empty(OBJECTS_SCHEMA), {"table": AS_OF})
    shallow = lifecycle.candidates(snapshot, params)
    assert shallow.held.get_column("documentId").to_list() == ["held"]
    assert shallow.past_hard_delete.get_column("documentId").to_list() == ["gone"]
    assert shallow.tagged.is_empty()
    deep_params = RuleParams(raw_bucket="raw", processed_bucket="processed", as_of=AS_OF, deep=True)
    deep = lifecycle.candidates(snapshot, deep_params)
    assert deep.tagged.select("documentId", "rawCurrent").rows() == [("plain", True), ("held", False)]
    assert deep.tagged.get_column("rawKey").to_list()[0] == layout.raw_key("u", "plain", "a.xml")


def test_the_rules_report_what_disagrees_and_nothing_else() -> None:
    ids = {"userId": "u", "pk": layout.user_pk("u"), "bucket": "b", "key": "k"}
    facts = lifecycle.LifecycleFacts(
        tags=pl.DataFrame(
            [
                {**ids, "documentId": "ok", "sk": "s1", "retentionClass": "standard", "tag": "standard"},
                {**ids, "documentId": "wrong", "sk": "s2", "retentionClass": "compliance", "tag": "standard"},
                {**ids, "documentId": "untagged", "sk": "s3", "retentionClass": "standard", "tag": None},
            ],
            schema=lifecycle.TAGS_SCHEMA,
        ),
        holds=pl.DataFrame(
            [
                {**ids, "documentId": "h", "sk": "s4", "versionId": "v1", "legalHoldAt": "t", "held": True},
                {**ids, "documentId": "h", "sk": "s4", "versionId": "v2", "legalHoldAt": "t", "held": False},
            ],
            schema=lifecycle.HOLDS_SCHEMA,
        ),
        leftovers=pl.DataFrame(
            [
                {**ids, "documentId": "d", "sk": "s5", "hardDeleteAt": "t", "versions": 2},
                {**ids, "documentId": "d", "sk": "s5", "hardDeleteAt": "t", "versions": 0},
            ],
            schema=lifecycle.LEFTOVERS_SCHEMA,
        ),
    )
    found = lifecycle.find_wide(facts)
    expected = pl.DataFrame(
        {
            "code": [Code.RETENTION_TAG_MISMATCH.value] * 2
            + [Code.LEGAL_HOLD_MISSING.value, Code.NOT_HARD_DELETED.value],
            "document_id": ["wrong", "untagged", "h", "d"],
            "ev_tag": ["standard", None, None, None],
            "ev_version_id": [None, None, "v2", None],
            "ev_versions": [None, None, None, 2],
        },
        schema_overrides={"ev_versions": pl.Int64},
    )
    assert_frame_equal(found.select(expected.columns), expected)


def test_a_live_run_finds_versions_left_past_the_hard_delete_date(stack) -> None:
    put_raw(stack, "u1", "d1", invoice())
    IngestRun(stack.settings, BackfillPlan()).execute()
    (item,) = stack.items()
    long_ago = layout.utc_now() - timedelta(days=100)
    deleted = item.evolve(
        status=Status.DELETED,
        deletedAt=long_ago,
        deletedBy="user:u1",
        restoreStatus=item.status,
        hardDeleteAt=long_ago + timedelta(days=30),
        version=item.version + 1,
        updatedBy="user:u1",
    )
    # Put without its TTL attribute: DynamoDB Local's own TTL sweep must not remove the item
    # before the run reads it (AWS's TTL may take days; the run must judge such an item).
    unswept = {k: v for k, v in deleted.to_item().items() if k != layout.TTL_ATTR}
    stack.dynamodb().put_item(TableName=stack.settings.store.table_name, Item=to_wire(unswept))
    for kind, digest in item.held_markers.items():  # the delete's transaction gave them up
        stack.dynamodb().delete_item(
            TableName=stack.settings.store.table_name, Key=to_wire(marker_key("u1", kind, digest))
        )
    outcome = ReconcileRun(stack.settings, LivePlan(grace=timedelta(0), write_report=False)).execute()
    found = outcome.findings.select("code", "documentId", "bucket").rows()
    # Its objects were never hidden either: DELETED_RAW_EXISTS says the raw one is visible.
    assert sorted(found) == sorted(
        [
            (Code.DELETED_RAW_EXISTS.value, "d1", stack.settings.store.raw_bucket),
            (Code.NOT_HARD_DELETED.value, "d1", stack.settings.store.raw_bucket),
            (Code.NOT_HARD_DELETED.value, "d1", stack.settings.store.processed_bucket),
        ]
    )
