"""The engines agree: polars rules vs the Athena SQL executed locally (DuckDB), finding for finding.

One state holds every kind of finding (and the states that must give none: a tombstone, a claim
in flight, a reviewer's settlement, objects within the grace period, an item past retention,
documents holding their duplicate markers and a duplicate holding none),
with keys the layout accepts only through its slow path and keys it refuses for every reason it
has. It is written in the AWS file layouts (export + CSV or Parquet inventories) and judged by
both engines from the same files.
"""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from jobs.contract import DocumentItem, DuplicateKind, DuplicateMarker, RetentionClass, RetentionPolicy, Status, layout
from jobs.contract.erasure import ErasureMarker, ErasureState
from jobs.local.writers import export_line, write_export, write_inventory
from jobs.reconcile.engines import partitions
from jobs.reconcile.engines.duckdb import DuckdbEngine
from jobs.reconcile.engines.polars import FileInputs, PolarsEngine
from jobs.reconcile.inputs import inventory
from jobs.reconcile.inputs.inventory import inventory_pair
from jobs.reconcile.inputs.table_state import export_source
from jobs.reconcile.rules import frames
from jobs.reconcile.rules import sql_rules as sql
from jobs.reconcile.rules.findings import AUDIT_CODES, INVENTORY_CODES, LIVE_ONLY, Code, render
from jobs.reconcile.rules.frames import OBJECTS_SCHEMA, RESULTS_SCHEMA
from jobs.reconcile.rules.params import RuleParams
from jobs.store.dynamo_wire import to_wire
from tests.jobs.reconcile.reconcile_helpers import files_snapshot, judged_in_memory

RAW, PROC = "eq-raw", "eq-processed"
AS_OF = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
OLD = AS_OF - timedelta(days=1)
FRESH = AS_OF - timedelta(minutes=5)

# Keys outside the fast path that the layout accepts, and keys it refuses, one per reason.
ODD_IDS = [("ü.ser", "dök é"), ("u+1", "d%41"), ("x" * 128, "d.d"), ("u", "\u00a0x"[1:] + "ß"), ("u%2e", "d.%2")]
BAD_RAW_KEYS = [
    "notes/readme.txt",
    "raw/u1/d1",
    "raw/u1/d1/a.xml/deeper",
    "raw/u#1/d1/a.xml",
    "raw/u1/../a.xml",
    "raw/u1/d1/..x",
    "raw/u1/d1/a%2Fb.xml",
    "raw/u1/d\u0007/a.xml",
    "raw/ u1/d1/a.xml",
    "raw/u1/d1\u00a0/a.xml",
    "raw/u1/d\u200b/a.xml",
    "raw/" + "x" * 129 + "/d1/a.xml",
    "raw/u1/d1/" + "é" * 128 + ".pdf",
    "raw/u1/./a.xml",
    "raw//d1/a.xml",
    "raw/u1/d1/a\nb.xml",
    "raw/u1/d%2e%2e/a.xml",  # ids that decode to a traversal, or to a separator
    "raw/u1/d.%2E/a.xml",
    "raw/%2e/d1/a.xml",
    "raw/u%2F1/d1/a.xml",
    "raw/u1/de\u0301/a.xml",  # an id not in Unicode NFC
]
BAD_RESULT_KEYS = [
    "processed/u1/d1/result.json.bak",
    "processed/u1/d1/other.json",
    "processed/u1/result.json",
    "processed/u\\1/d1/result.json",
]


def _item(user: str, doc: str, **changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "userId": user,
        "documentId": doc,
        "status": Status.PROCESSED,
        "createdAt": OLD,
        "updatedAt": OLD,
        "rawS3Uri": layout.s3_uri(RAW, layout.raw_key(user, doc, "a.xml")),
        "rawEtag": f'"e-{doc}"',
        "version": 2,
        "attempts": 1,
        "resultS3Uri": layout.s3_uri(PROC, layout.result_key(user, doc)),
        "vendorName": "ACME",
        "totalAmount": "12.50",
    }
    wire_changes = {k: v for k, v in changes.items() if k in (layout.GSI1_PK_ATTR, layout.GSI1_SK_ATTR, layout.PK_ATTR)}
    fields.update({k: v for k, v in changes.items() if k not in wire_changes})
    return {**DocumentItem(**fields).to_item(), **wire_changes}


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def _marker(
    user: str, holder: str, kind: DuplicateKind, name: str, created: datetime = OLD, expires: datetime | None = None
) -> dict[str, Any]:
    return DuplicateMarker(
        userId=user,
        kind=kind,
        digest=_digest(name),
        documentId=holder,
        createdAt=created,
        updatedBy="ingest:r",
        expiresAt=expires,
    ).to_item()


def _obj(bucket: str, key: str, etag: str, modified: datetime = OLD) -> dict[str, Any]:
    return {"bucket": bucket, "key": key, "etag": etag, "size": 10, "lastModified": modified}


def _result(user: str, doc: str, **changes: Any) -> dict[str, Any]:
    return {
        "key": layout.result_key(user, doc),
        "userId": user,
        "documentId": doc,
        "status": "PROCESSED",
        "vendorName": "ACME",
        "invoiceDate": None,
        "totalAmount": "12.5",
        "sourceUri": layout.s3_uri(RAW, layout.raw_key(user, doc, "a.xml")),
        "sourceEtag": f"e-{doc}",
        "readError": None,
    } | changes


def state() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    items, raw, processed, results = [], [], [], []

    def document(
        user: str,
        doc: str,
        with_raw: bool = True,
        with_result: bool = True,
        result: dict[str, Any] | None = None,
        **item: Any,
    ) -> None:
        items.append(_item(user, doc, **item))
        if with_raw:
            raw.append(_obj(RAW, layout.raw_key(user, doc, "a.xml"), f"e-{doc}"))
        if with_result:
            processed.append(_obj(PROC, layout.result_key(user, doc), f"r-{doc}"))
            results.append(_result(user, doc, **(result or {})))

    document("u1", "ok")
    for user, doc in ODD_IDS:
        document(user, doc)
    document("u1", "noresult", with_result=False)  # MISSING_RESULT
    document("u1", "failed", with_result=False, status=Status.FAILED)  # no finding: FAILED promises none
    document("u1", "noraw", with_raw=False)  # MISSING_RAW
    document("u1", "expired", with_raw=False, createdAt=AS_OF - timedelta(days=6 * 365))  # past retention
    document("u1", "tomb", with_raw=False, status=Status.DELETED, result={"status": "PROCESSED"})  # tombstone
    document("u1", "reborn", status=Status.DELETED, result={"status": "PROCESSED"})  # DELETED_RAW_EXISTS
    document("u1", "stale")
    raw[-1]["etag"] = "e-new"  # STALE_RESULT
    document("u1", "stuck", status=Status.PROCESSING, leaseOwner="w", leaseExpiresAt=AS_OF - timedelta(hours=7))
    document(
        "u1",
        "leased",
        status=Status.PROCESSING,
        leaseOwner="w",
        leaseExpiresAt=AS_OF + timedelta(hours=1),
        result={"status": "PROCESSED"},
    )
    document("u1", "drift", GSI1PK=layout.status_pk("FAILED"))  # INDEX_DRIFT
    document("u1", "drift2", GSI1SK="2020-01-01T00:00:00.000Z")
    document("u1", "pk", PK=layout.user_pk("other"))  # KEY_MISMATCH
    document("u1", "wronguri", resultS3Uri=layout.s3_uri(PROC, layout.result_key("u1", "ok")))
    # KEY_MISMATCH and MISSING_RESULT, whose evidence is the URI as the item has it
    document("u1", "wronguri2", with_result=False, resultS3Uri=layout.s3_uri(PROC, layout.result_key("u1", "ok")))
    document("u1", "elsewhere", rawS3Uri=layout.s3_uri("another-bucket", layout.raw_key("u1", "elsewhere", "a.xml")))
    document("u1", "otherdoc", rawS3Uri=layout.s3_uri(RAW, layout.raw_key("u1", "ok", "a.xml")))
    document(
        "u1", "vendor", result={"vendorName": "Other GmbH", "totalAmount": "12.500"}
    )  # SUMMARY_MISMATCH (vendor only)
    document("u1", "settled", result={"status": "REVIEW_REQUIRED"})  # a reviewer's settlement: none
    document("u1", "unsettled", status=Status.REVIEW_REQUIRED, reviewReasons=["x"])  # SUMMARY_MISMATCH (status)
    document("u1", "ids", result={"userId": "u9"})  # KEY_MISMATCH (deep)
    document("u1", "foreign", result={"sourceEtag": "e-old"})  # RESULT_SOURCE_MISMATCH
    document("u1", "moved", result={"sourceUri": layout.s3_uri(RAW, layout.raw_key("u1", "moved", "old.xml"))})
    document(
        "u1",
        "unreadable",
        result=dict.fromkeys(("userId", "documentId", "status", "sourceUri", "sourceEtag")) | {"readError": "gone"},
    )
    _markers(document, items)
    _lifecycle(document, items, raw, processed, results)
    raw.append(_obj(RAW, layout.raw_key("u2", "new", "a.xml"), "e"))  # UNPROCESSED_RAW
    raw.append(_obj(RAW, layout.raw_key("u2", "fresh", "a.xml"), "e", FRESH))  # within grace
    raw.append(_obj(RAW, layout.raw_key("ü.ser", "dök é", "zweite Datei.pdf"), "e"))  # odd UNPROCESSED_RAW
    processed.append(_obj(PROC, layout.result_key("u3", "orphan"), "r"))  # ORPHAN_RESULT
    results.append(_result("u3", "orphan"))
    processed.append(_obj(PROC, layout.result_key("u3", "fresh"), "r", FRESH))
    raw += [_obj(RAW, key, '"q"') for key in BAD_RAW_KEYS]  # BAD_KEY
    raw.append(_obj(RAW, "stray/fresh.txt", "e", FRESH))  # outside the layout, within grace
    processed += [_obj(PROC, key, "r") for key in BAD_RESULT_KEYS]
    return items, raw, processed, results


def _markers(document: Any, items: list[dict[str, Any]]) -> None:
    """Duplicate markers: held as they should be (none), and each way they can disagree."""
    content, invoice = DuplicateKind.CONTENT, DuplicateKind.INVOICE
    document("u4", "holder", contentMarker=_digest("a"), invoiceMarker=_digest("ia"))
    items += [_marker("u4", "holder", content, "a"), _marker("u4", "holder", invoice, "ia")]
    document("u4", "duplicate", contentDigest=_digest("a"), invoiceDigest=_digest("ia"))  # holds none: fine
    items.append(_marker("u4", "gone", content, "b"))  # ORPHAN_MARKER: no such document
    document("u4", "other", contentMarker=_digest("c"))  # holds another digest than the marker names:
    items += [_marker("u4", "other", content, "c"), _marker("u4", "other", content, "c-old")]  # one ORPHAN
    document("u4", "buried", with_raw=False, status=Status.DELETED, result={"status": "PROCESSED"})
    items.append(_marker("u4", "buried", content, "d"))  # ORPHAN_MARKER: a tombstone holds nothing
    items.append({**_marker("u4", "junk", content, "e"), layout.SK_ATTR: layout.marker_sk_prefix() + "JUNK"})
    document("u4", "nomarker", invoiceMarker=_digest("f"))  # MISSING_MARKER
    document("u4", "taken", contentMarker=_digest("g"))  # MISSING_MARKER: the marker names another
    items.append(_marker("u4", "holder", content, "g"))  # ... which does not hold it: ORPHAN_MARKER
    items.append(_marker("u4", "young", content, "h", FRESH))  # within grace: not judged yet
    document("u4", "recent", contentMarker=_digest("i"), updatedAt=FRESH)  # within grace
    # Past their TTL, a marker and its document go at any time, apart: no finding either way.
    past, ahead = AS_OF - timedelta(days=1), AS_OF + timedelta(days=1)
    items.append(_marker("u4", "ttlholder", content, "j", expires=past))  # the document went first
    std = {"retentionClass": RetentionClass.STANDARD, "retainUntil": past}
    document("u4", "ttlclaim", contentMarker=_digest("k"), **std)  # its marker went first
    items.append(_marker("u4", "ttllater", content, "l", expires=ahead))  # TTL still ahead: ORPHAN_MARKER


def _lifecycle(document: Any, items: list[Any], raw: list[Any], processed: list[Any], results: list[Any]) -> None:
    """A document's life: the states that must give no finding, and the ones that must."""
    std, days = RetentionClass.STANDARD, RetentionPolicy().standard_days
    past, ahead = AS_OF - timedelta(days=1), AS_OF + timedelta(days=100)
    deleted = {"deletedAt": OLD, "deletedBy": "user:u4", "restoreStatus": Status.PROCESSED}
    # A user's delete within its grace: objects hidden behind delete markers (not listed).
    document("u4", "userdel", with_raw=False, with_result=False, status=Status.DELETED, hardDeleteAt=ahead, **deleted)
    # Past retention, not yet removed by TTL, objects already hidden by lifecycle; held too.
    document("u4", "retained", with_raw=False, with_result=False, retentionClass=std, retainUntil=past)
    hold = {"legalHoldAt": OLD, "legalHoldBy": "operator:legal"}
    document("u4", "heldpast", with_raw=False, with_result=False, retentionClass=std, retainUntil=past, **hold)
    # A compliance document six years old has its raw object for four more years: MISSING_RAW.
    six = AS_OF - timedelta(days=6 * 365)
    comp = {"retentionClass": RetentionClass.COMPLIANCE, "retainUntil": six + timedelta(days=3653)}
    document("u4", "complianceraw", with_raw=False, createdAt=six, **comp)
    items.append(
        ErasureMarker(userId="u4", runId="r", state=ErasureState.DONE, startedAt=OLD, updatedBy="erasure:r").to_item()
    )
    # Objects whose items the TTL removed while lifecycle has not hidden them yet (no finding),
    # and objects far past their retention that lifecycle should have hidden (findings).
    expired = AS_OF - timedelta(days=days + 2)
    raw.append(_obj(RAW, layout.raw_key("u5", "ttlfirst", "a.xml"), "e", expired))
    processed.append(_obj(PROC, layout.result_key("u5", "ttlfirst"), "r", expired + timedelta(days=10)))
    results.append(_result("u5", "ttlfirst"))
    stuck = AS_OF - timedelta(days=days + 30)
    raw.append(_obj(RAW, layout.raw_key("u5", "notexpired", "a.xml"), "e", stuck))  # UNPROCESSED_RAW


def _both(tmp_path: Path, fmt: str, deep: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[pl.DataFrame, pl.DataFrame]:
    items, raw, processed, results_rows = state()
    lines = [export_line(to_wire(item)).encode() for item in items]
    export = write_export(
        tmp_path / "exports", "arn:aws:dynamodb:eq:0:table/t", AS_OF, [b"".join(lines[:10]), b"".join(lines[10:]), b""]
    )
    manifests = [
        str(
            write_inventory(
                tmp_path / "inventory", bucket, AS_OF, [pl.DataFrame(rows, schema=OBJECTS_SCHEMA, orient="row")], fmt
            )
        )
        for bucket, rows in ((RAW, raw), (PROC, processed))
    ]
    results = pl.DataFrame(results_rows, schema=RESULTS_SCHEMA, orient="row")
    params = RuleParams(raw_bucket=RAW, processed_bucket=PROC, as_of=AS_OF, deep=deep)

    def read(keys: list[str]) -> pl.DataFrame:
        return results.filter(pl.col("key").is_in(keys))

    def params_for(as_of: datetime) -> RuleParams:
        return dataclasses.replace(params, as_of=as_of)

    snapshot = files_snapshot(str(export), manifests, None, RAW, PROC, deep)
    assert snapshot.as_of == AS_OF
    by_polars = judged_in_memory(snapshot, params, read if deep else None)
    # The same rules over key-hash partitions, three of them for this small state, --deep's
    # result.json files judged a few at a time.
    monkeypatch.setattr(partitions, "ROWS_PER_PARTITION", 20)
    monkeypatch.setattr(partitions, "DEEP_CHUNK", 4)
    monkeypatch.setattr(inventory, "PARSE_BLOCK_BYTES", 2048)  # CSV files streamed in small chunks
    monkeypatch.setattr(inventory, "CHUNK_ROWS", 3)
    inventories = inventory_pair(manifests, None, RAW, PROC)
    files = FileInputs(export_source(str(export), None, deep), *inventories)
    spilled = PolarsEngine(files, read if deep else None).find(params_for)
    assert_frame_equal(render(spilled.wide), by_polars)
    duck = DuckdbEngine(str(export), *inventories, None, read if deep else None).find(params_for)
    return by_polars, render(duck.wide)


def test_a_spill_write_that_fails_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces are written on a thread of their own: a failed write (a full disk) is the run's
    error, never a partition read without it.
    """

    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_ipc", full)
    with pytest.raises(OSError, match="No space left"):
        _both(tmp_path, "Parquet", False, monkeypatch)


@pytest.mark.parametrize("fmt", ["CSV", "Parquet"])
@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_polars_and_the_athena_sql_on_duckdb_give_the_same_findings(
    tmp_path: Path, fmt: str, deep: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_polars, by_sql = _both(tmp_path, fmt, deep, monkeypatch)
    assert_frame_equal(by_sql, by_polars)
    kinds = set(by_polars.get_column("code").to_list())
    deep_only = {Code.SUMMARY_MISMATCH, Code.RESULT_SOURCE_MISMATCH, Code.RESULT_UNREADABLE}
    # The change log's and the inventories' codes are found apart; the lifecycle's version rules
    # on live runs only.
    engines = {c.value for c in Code if c not in AUDIT_CODES | LIVE_ONLY | INVENTORY_CODES}
    assert kinds == (engines if deep else engines - deep_only)
    bad = by_polars.filter(pl.col("code") == Code.BAD_KEY).get_column("key").to_list()
    assert sorted(bad) == sorted(BAD_RAW_KEYS + BAD_RESULT_KEYS)
    # A tombstone whose raw object is back (uploaded again): reported, by every engine.
    reborn = by_polars.filter(pl.col("documentId") == "reborn")
    assert reborn.get_column("code").to_list() == ["DELETED_RAW_EXISTS"]
    # No finding for the states that must give none.
    quiet = {"ok", "failed", "expired", "tomb", "leased", "settled", "fresh", *(d for _, d in ODD_IDS[1:])}
    quiet |= {"duplicate", "young", "recent", "userdel", "retained", "heldpast", "ttlfirst", "ttlholder", "ttlclaim"}
    assert not quiet & set(by_polars.get_column("documentId").drop_nulls().to_list())
    assert not by_polars.filter(pl.col("sk") == layout.erasure_sk()).height  # the marker is no document
    found = set(by_polars.select("code", "documentId").iter_rows())
    assert {(Code.MISSING_RAW, "complianceraw"), (Code.UNPROCESSED_RAW, "notexpired")} <= found
    # Markers: each disagreement once, from the side that is wrong.
    for code, documents in (
        (Code.ORPHAN_MARKER, ["buried", "gone", "holder", "junk", "other", "ttllater"]),
        (Code.MISSING_MARKER, ["nomarker", "taken"]),
    ):
        assert sorted(by_polars.filter(pl.col("code") == code).get_column("documentId").to_list()) == documents


def test_the_sql_names_only_the_columns_the_stack_must_declare() -> None:
    """The Glue export table's columns are the contract's attributes the rules read, nothing more."""
    columns = sql.export_columns(deep=False)
    assert columns[layout.PK_ATTR] == "S" and columns["version"] == "N"
    assert set(columns) == {a for c, a in frames.ITEM_ATTRIBUTE_OF.items() if c not in frames.DEEP_ONLY_COLUMNS}
    text = sql.query(sql.Relations("E", "R", "P"), RuleParams(raw_bucket=RAW, processed_bucket=PROC, as_of=AS_OF))
    for column in ("bucket", "key", "size", "last_modified_date", "e_tag"):
        assert column in text
