"""The pure rules: small frames in, the exact findings frame out (no I/O)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from jobs.contract import DocumentItem, Status, layout
from jobs.reconcile.inputs.live import item_row
from jobs.reconcile.rules.findings import FINDINGS_SCHEMA, Code, Severity, counts, worst_severity
from jobs.reconcile.rules.frames import ITEMS_SCHEMA, OBJECTS_SCHEMA, RESULTS_SCHEMA, Snapshot
from jobs.reconcile.rules.params import RuleParams
from tests.jobs.reconcile.reconcile_helpers import judged_in_memory

RAW, PROC = "raw-bucket", "processed-bucket"
AS_OF = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
OLD = AS_OF - timedelta(days=1)
PARAMS = RuleParams(raw_bucket=RAW, processed_bucket=PROC, as_of=AS_OF)


def _item(user: str = "u1", doc: str = "d1", **changes: Any) -> dict[str, Any]:
    """A consistent PROCESSED item as the sources deliver it (through DocumentItem.to_item)."""
    model = DocumentItem(
        userId=user,
        documentId=doc,
        status=Status.PROCESSED,
        createdAt=OLD,
        updatedAt=OLD,
        rawS3Uri=layout.s3_uri(RAW, layout.raw_key(user, doc, "a.xml")),
        rawEtag='"e1"',
        version=2,
        attempts=1,
        resultS3Uri=layout.s3_uri(PROC, layout.result_key(user, doc)),
        vendorName="ACME",
        totalAmount="12.50",
    )
    row = item_row(model.to_item(), deep=True)
    row.update(changes)
    return row


def _raw(
    user: str = "u1", doc: str = "d1", key: str | None = None, etag: str = "e1", modified: datetime = OLD
) -> dict[str, Any]:
    return {
        "bucket": RAW,
        "key": key or layout.raw_key(user, doc, "a.xml"),
        "etag": etag,
        "size": 10,
        "lastModified": modified,
    }


def _result(user: str = "u1", doc: str = "d1", key: str | None = None, modified: datetime = OLD) -> dict[str, Any]:
    return {
        "bucket": PROC,
        "key": key or layout.result_key(user, doc),
        "etag": "r1",
        "size": 20,
        "lastModified": modified,
    }


def _find(
    items: list, raw: list, processed: list, params: RuleParams = PARAMS, results: list | None = None
) -> pl.DataFrame:
    def frame(rows: list, schema: dict) -> pl.DataFrame:
        return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)

    def read(keys: list[str]) -> pl.DataFrame:
        assert results is not None
        return frame(results, RESULTS_SCHEMA).filter(pl.col("key").is_in(keys))

    snapshot = Snapshot(
        frame(items, ITEMS_SCHEMA),
        frame(raw, OBJECTS_SCHEMA),
        frame(processed, OBJECTS_SCHEMA),
        {"table": params.as_of},
    )
    return judged_in_memory(snapshot, params, read if results is not None else None)


def _keys(findings: pl.DataFrame) -> list[tuple]:
    return [tuple(r) for r in findings.select("code", "userId", "documentId", "key").iter_rows()]


def test_a_consistent_state_has_no_findings_and_the_schema_is_fixed() -> None:
    found = _find([_item()], [_raw()], [_result()])
    assert_frame_equal(found, pl.DataFrame(schema=FINDINGS_SCHEMA))


def test_orphan_result_exact_frame() -> None:
    found = _find([], [], [_result("u2", "d9")])
    expected = pl.DataFrame(
        [
            {
                "code": "ORPHAN_RESULT",
                "severity": "error",
                "userId": "u2",
                "documentId": "d9",
                "bucket": PROC,
                "key": layout.result_key("u2", "d9"),
                "pk": None,
                "sk": None,
                "evidence": json.dumps(
                    {"etag": "r1", "size": 20, "lastModified": layout.format_ts(OLD)}, separators=(",", ":")
                ),
            }
        ],
        schema=FINDINGS_SCHEMA,
    )
    assert_frame_equal(found, expected)


@pytest.mark.parametrize(
    ("items", "raw", "processed", "expected"),
    [
        # MISSING_RESULT: PROCESSED and REVIEW_REQUIRED promise a result.json; FAILED does not.
        ([_item()], [_raw()], [], [("MISSING_RESULT", "u1", "d1", layout.result_key("u1", "d1"))]),
        ([_item(status="FAILED", gsi1pk=layout.status_pk("FAILED"))], [_raw()], [], []),
        # UNPROCESSED_RAW, and not within the grace period.
        ([], [_raw("u3", "d3")], [], [("UNPROCESSED_RAW", "u3", "d3", layout.raw_key("u3", "d3", "a.xml"))]),
        ([], [_raw("u3", "d3", modified=AS_OF - timedelta(minutes=5))], [], []),
        # MISSING_RAW, except when retention expired it.
        ([_item()], [], [_result()], [("MISSING_RAW", "u1", "d1", layout.raw_key("u1", "d1", "a.xml"))]),
        (
            [
                _item(
                    createdAt=layout.format_ts(AS_OF - timedelta(days=6 * 365)),
                    gsi1sk=layout.format_ts(AS_OF - timedelta(days=6 * 365)),
                )
            ],
            [],
            [_result()],
            [],
        ),
        # STALE_RESULT: quotes around ETags do not matter, a different ETag does.
        ([_item()], [_raw(etag='"e1"')], [_result()], []),
        (
            [_item()],
            [_raw(etag="e2")],
            [_result()],
            [("STALE_RESULT", "u1", "d1", layout.raw_key("u1", "d1", "a.xml"))],
        ),
        # INDEX_DRIFT on either index attribute.
        ([_item(gsi1pk=layout.status_pk("FAILED"))], [_raw()], [_result()], [("INDEX_DRIFT", "u1", "d1", None)]),
        ([_item(gsi1sk="2020-01-01T00:00:00.000Z")], [_raw()], [_result()], [("INDEX_DRIFT", "u1", "d1", None)]),
        # KEY_MISMATCH: a PK naming another user (the item is then also an orphan's partner).
        ([_item(pk=layout.user_pk("someone"))], [_raw()], [_result()], [("KEY_MISMATCH", "u1", "d1", None)]),
        # BAD_KEY: outside the layout in either bucket, through the layout parser's slow path too.
        ([], [_raw(key="misc/x.txt")], [], [("BAD_KEY", None, None, "misc/x.txt")]),
        (
            [],
            [_raw(key=layout.raw_key("u1", "d1", "a.xml") + "/deeper")],
            [],
            [("BAD_KEY", None, None, layout.raw_key("u1", "d1", "a.xml") + "/deeper")],
        ),
        (
            [],
            [],
            [_result(key=layout.result_key("u1", "d1") + ".bak")],
            [("BAD_KEY", None, None, layout.result_key("u1", "d1") + ".bak")],
        ),
    ],
)
def test_each_rule(items: list, raw: list, processed: list, expected: list) -> None:
    assert _keys(_find(items, raw, processed)) == expected


def test_slow_path_accepts_what_the_layout_accepts() -> None:
    """Ids outside the fast path's character class go through layout.parse_raw_key itself."""
    odd = layout.raw_key("ü.ser", "dök é", "Rechnung März.pdf")
    item = _item("ü.ser", "dök é", rawS3Uri=layout.s3_uri(RAW, odd))
    assert _keys(_find([item], [_raw(key=odd)], [_result("ü.ser", "dök é")])) == []


def test_stuck_processing_only_when_the_lease_expired_long_ago() -> None:
    def processing(lease: datetime) -> dict[str, Any]:
        return _item(
            status="PROCESSING",
            gsi1pk=layout.status_pk("PROCESSING"),
            leaseOwner="w",
            leaseExpiresAt=layout.format_ts(lease),
        )

    assert _keys(_find([processing(AS_OF - timedelta(hours=7))], [_raw()], [])) == [
        ("STUCK_PROCESSING", "u1", "d1", None)
    ]
    assert _keys(_find([processing(AS_OF - timedelta(hours=1))], [_raw()], [])) == []


def test_deep_compares_summary_fields_with_canonical_amounts() -> None:
    result = {
        "key": layout.result_key("u1", "d1"),
        "userId": "u1",
        "documentId": "d1",
        "status": "PROCESSED",
        "vendorName": "ACME",
        "invoiceDate": None,
        "totalAmount": "12.5",
        "sourceUri": layout.s3_uri(RAW, layout.raw_key("u1", "d1", "a.xml")),
        "sourceEtag": "e1",
        "readError": None,
    }
    deep = RuleParams(raw_bucket=RAW, processed_bucket=PROC, as_of=AS_OF, deep=True)
    assert _keys(_find([_item()], [_raw()], [_result()], deep, [result])) == []
    other = {**result, "vendorName": "Other", "userId": "u7"}
    found = _find([_item()], [_raw()], [_result()], deep, [other])
    assert _keys(found) == [
        ("KEY_MISMATCH", "u1", "d1", layout.result_key("u1", "d1")),
        ("SUMMARY_MISMATCH", "u1", "d1", layout.result_key("u1", "d1")),
    ]
    assert json.loads(found.row(1, named=True)["evidence"])["fields"] == "vendorName"


def test_counts_and_severity() -> None:
    found = _find([], [_raw("u3", "d3")], [_result("u2", "d2")])
    assert counts(found)[Code.UNPROCESSED_RAW] == 1 and counts(found)[Code.ORPHAN_RESULT] == 1
    assert list(counts(found)) == [c.value for c in Code]
    assert worst_severity(found) == Severity.ERROR
    assert worst_severity(pl.DataFrame(schema=FINDINGS_SCHEMA)) is None
