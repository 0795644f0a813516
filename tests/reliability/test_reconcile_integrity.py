"""Reconcile under the states issue 13's adversarial review produced: stale writers, deleted raw
objects, foreign attributes, damaged export/inventory files, a reviewer's settlement, bad options.

Each test builds the state on the local stack (real DynamoDB Local and S3 servers), runs the
reconcile job as the scheduler would (`cli.main` or `ReconcileRun`) and checks findings, repairs
and exit codes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from jobs.contract import DocumentFormat, DocumentItem, ResultDocument, SourceObject, Status, ValidationResult, layout
from jobs.reconcile import cli
from jobs.reconcile.plans import FilesPlan, LivePlan, Plan
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.run import ReconcileRun
from jobs.store.dynamo_wire import to_wire

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jobs" / "reconcile"))
from reconcile_helpers import export_state

T0 = layout.utc_now() - timedelta(days=1)


def _raw(stack, user: str, doc: str, body: bytes = b"<Invoice/>", name: str = "a.xml") -> tuple[str, str]:
    key = layout.raw_key(user, doc, name)
    return key, stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=body)["ETag"]


def _result(
    stack, user: str, doc: str, etag: str, status: Status = Status.PROCESSED, raw_key: str | None = None
) -> ResultDocument:
    result = ResultDocument(
        userId=user,
        documentId=doc,
        source=SourceObject(
            bucket=stack.settings.store.raw_bucket,
            key=raw_key or layout.raw_key(user, doc, "a.xml"),
            etag=etag,
            size=10,
            lastModified=T0,
            format=DocumentFormat.UBL,
        ),
        engine="ubl",
        validation=ValidationResult(
            status=status, reasons=["low confidence"] if status == Status.REVIEW_REQUIRED else []
        ),
        createdAt=T0,
        processedAt=T0,
        pipelineVersion="test",
    )
    stack.s3().put_object(
        Bucket=stack.settings.store.processed_bucket, Key=layout.result_key(user, doc), Body=result.to_json_bytes()
    )
    return result


def _document(stack, user: str, doc: str, status: Status = Status.PROCESSED, **extra: Any) -> DocumentItem:
    """A consistent finished document: raw object, result.json and item (plus `extra` attributes)."""
    key, etag = _raw(stack, user, doc)
    _result(stack, user, doc, etag, status)
    item = DocumentItem(
        userId=user,
        documentId=doc,
        status=status,
        createdAt=T0,
        updatedAt=T0,
        rawS3Uri=layout.s3_uri(stack.settings.store.raw_bucket, key),
        rawEtag=etag,
        version=2,
        attempts=1,
        resultS3Uri=layout.s3_uri(stack.settings.store.processed_bucket, layout.result_key(user, doc)),
        reviewReasons=["low confidence"] if status == Status.REVIEW_REQUIRED else [],
    )
    stack.dynamodb().put_item(TableName=stack.settings.store.table_name, Item=to_wire({**item.to_item(), **extra}))
    return item


def _run(stack, plan: type[Plan] = LivePlan, **options: Any) -> Any:
    options.setdefault("grace", timedelta(0))
    options.setdefault("write_report", False)
    return ReconcileRun(stack.settings, plan(**options)).execute()


def _codes(outcome: Any) -> list[tuple[str, str | None]]:
    return [(r["code"], r["documentId"]) for r in outcome.findings.iter_rows(named=True)]


def _item(stack, user: str, doc: str) -> DocumentItem | None:
    return ReconcileRun(stack.settings, LivePlan()).table.get(user, doc)


# --- (1) a stale writer's result.json ---------------------------------------------------------
def test_deep_reports_a_result_json_from_another_upload_and_repair_marks_it_for_reprocessing(stack) -> None:
    _document(stack, "u1", "ok")
    item = _document(stack, "u1", "stale")
    # A writer that lost its claim left the old upload's result.json as the current version.
    _result(stack, "u1", "stale", '"old-upload-etag"')
    assert _codes(_run(stack)) == []  # only the contents show it
    deep = _run(stack, deep=True)
    assert _codes(deep) == [(Code.RESULT_SOURCE_MISMATCH, "stale")]
    evidence = json.loads(deep.findings.item(0, "evidence"))
    assert evidence["itemEtag"] == item.rawEtag.strip('"') and evidence["resultEtag"] == "old-upload-etag"
    repaired = _run(stack, deep=True, repair=True)
    assert [(r.code, r.outcome) for r in repaired.summary.repairs] == [(Code.RESULT_SOURCE_MISMATCH, "applied")]
    marked = _item(stack, "u1", "stale")
    assert (marked.status, marked.failureCode, marked.attempts, marked.version) == (
        Status.FAILED,
        "INTERNAL",
        0,
        item.version + 1,
    )


# --- (4) repair does not resurrect deleted documents ------------------------------------------
def test_repair_rebuilds_an_orphan_only_when_its_raw_object_is_still_there_unchanged(stack) -> None:
    _, etag = _raw(stack, "u2", "alive")
    _result(stack, "u2", "alive", etag)
    _result(stack, "u2", "deleted", '"e-gone"')  # its raw object was deleted
    _raw(stack, "u2", "replaced", b"<Invoice>new</Invoice>")
    _result(stack, "u2", "replaced", '"e-old"')  # its raw object is another upload now
    outcome = _run(stack, repair=True)
    outcomes = {r.documentId: r.outcome for r in outcome.summary.repairs if r.code == "ORPHAN_RESULT"}
    assert outcomes["alive"] == "applied"
    assert outcomes["deleted"].startswith("skipped: the raw object") and "is gone" in outcomes["deleted"]
    assert outcomes["replaced"].startswith("skipped: the raw object") and "changed" in outcomes["replaced"]
    assert _item(stack, "u2", "alive").status == Status.PROCESSED
    assert _item(stack, "u2", "deleted") is None and _item(stack, "u2", "replaced") is None
    # What was not rebuilt stays in the report.
    assert {d for c, d in _codes(_run(stack)) if c == Code.ORPHAN_RESULT} == {"deleted", "replaced"}


# --- (5) the DELETED lifecycle ------------------------------------------------------------------
def test_a_deleted_raw_object_ends_in_the_deleted_tombstone_and_reconcile_agrees(stack) -> None:
    done = _document(stack, "u3", "done")
    claimed = _document(stack, "u3", "inflight")
    stack.dynamodb().put_item(
        TableName=stack.settings.store.table_name,
        Item=to_wire(
            claimed.evolve(
                status=Status.PROCESSING,
                leaseOwner="w",
                leaseExpiresAt=layout.utc_now() + timedelta(hours=1),
                version=3,
                updatedBy="ingest:w",
            ).to_item()
        ),
    )
    for doc in ("done", "inflight"):
        stack.s3().delete_object(Bucket=stack.settings.store.raw_bucket, Key=layout.raw_key("u3", doc, "a.xml"))
    assert _codes(_run(stack, deep=True)) == [(Code.MISSING_RAW, "done"), (Code.MISSING_RAW, "inflight")]
    repaired = _run(stack, deep=True, repair=True)
    outcomes = {r.documentId: r.outcome for r in repaired.summary.repairs}
    assert outcomes == {"done": "applied", "inflight": "skipped: status is PROCESSING, not finished"}
    tombstone = _item(stack, "u3", "done")
    assert (tombstone.status, tombstone.version) == (Status.DELETED, done.version + 1)
    # The tombstone and the result.json it keeps are no discrepancy, shallow or deep.
    assert _codes(_run(stack, deep=True)) == [(Code.MISSING_RAW, "inflight")]
    # A second repair has nothing left to do for it.
    assert [r.documentId for r in _run(stack, repair=True).summary.repairs] == ["inflight"]


def test_the_deleted_repair_is_guarded_by_the_version_it_saw(stack) -> None:
    item = _document(stack, "u3", "racing")
    stack.s3().delete_object(Bucket=stack.settings.store.raw_bucket, Key=layout.raw_key("u3", "racing", "a.xml"))
    findings = _run(stack).findings
    # The document is re-uploaded and re-processed after the snapshot.
    _raw(stack, "u3", "racing", b"<Invoice>again</Invoice>")
    stack.dynamodb().put_item(
        TableName=stack.settings.store.table_name,
        Item=to_wire(item.evolve(version=item.version + 2, updatedBy="operator:test").to_item()),
    )
    run = ReconcileRun(stack.settings, LivePlan())
    from jobs.reconcile.repair import Repairer

    actions = Repairer(
        run.table,
        run.buckets,
        stack.settings.store.processed_bucket,
        actor="repair:test",
        policy=stack.settings.store.retention,
    ).run(findings)
    assert [a.outcome for a in actions] == ["skipped: the item changed since the snapshot (version 2 -> 4)"]
    assert _item(stack, "u3", "racing").status == Status.PROCESSED


# --- (7) attributes outside the contract --------------------------------------------------------
def test_items_with_foreign_attributes_are_reconciled_and_repaired_with_them_kept(stack, tmp_path: Path) -> None:
    _document(stack, "u4", "reviewed", reviewedBy="alice", notes={"why": "checked"})
    drifted = _document(stack, "u4", "drifted", reviewedBy="bob")
    stack.dynamodb().put_item(
        TableName=stack.settings.store.table_name,
        Item=to_wire({**drifted.to_item(), "reviewedBy": "bob", layout.GSI1_PK_ATTR: layout.status_pk(Status.FAILED)}),
    )
    expected = [(Code.INDEX_DRIFT, "drifted")]
    assert _codes(_run(stack, deep=True)) == expected
    exported = export_state(stack, tmp_path)
    assert (
        _codes(
            _run(
                stack,
                FilesPlan,
                dynamodb_export=exported.export,
                s3_inventories=tuple(exported.manifests),
                deep=True,
            )
        )
        == expected
    )
    assert [r.outcome for r in _run(stack, repair=True).summary.repairs] == ["applied"]
    assert _item(stack, "u4", "drifted").foreign_attributes == {"reviewedBy": "bob"}
    assert _codes(_run(stack, deep=True)) == []


# --- (8) damaged export and inventory files ------------------------------------------------------
def _manifest(path: str) -> tuple[Path, dict[str, Any]]:
    return Path(path), json.loads(Path(path).read_text())


def _data_file(manifest_path: Path, entry: dict[str, Any]) -> Path:
    return next(p / entry["key"] for p in manifest_path.parents if (p / entry["key"]).is_file())


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("zero_bytes", "0 bytes"),
        ("zero_bytes_in_manifest_too", "0 bytes"),
        ("empty_gzip_in_manifest_too", "holds no rows"),
        ("truncated", "MD5"),
        ("listed_twice", "listed twice"),
        ("export_listed_twice", "listed twice"),
        ("export_md5", "MD5"),
    ],
)
def test_damaged_files_exit_2_with_a_clear_message_and_no_report(
    stack, tmp_path: Path, capsys, damage: str, message: str
) -> None:
    _document(stack, "u5", "a")
    _document(stack, "u5", "b")
    exported = export_state(stack, tmp_path, rows_per_file=1)
    path, manifest = _manifest(exported.manifests[0])
    data = _data_file(path, manifest["files"][0])
    if damage.startswith("zero_bytes"):
        data.write_bytes(b"")
        if damage == "zero_bytes_in_manifest_too":
            manifest["files"][0].update(size=0, MD5checksum=hashlib.md5(b"").hexdigest())
    elif damage == "empty_gzip_in_manifest_too":
        body = gzip.compress(b"", mtime=0)
        data.write_bytes(body)
        manifest["files"][0].update(size=len(body), MD5checksum=hashlib.md5(body).hexdigest())
    elif damage == "truncated":
        data.write_bytes(data.read_bytes()[:-5])
        manifest["files"][0]["size"] = data.stat().st_size  # a manifest that agrees on the size
    elif damage == "listed_twice":
        manifest["files"].append(manifest["files"][0])
    if damage.startswith("export"):
        files = Path(exported.export) / "manifest-files.json"
        lines = files.read_text().splitlines()
        if damage == "export_listed_twice":
            lines.append(lines[0])
        else:
            entry = json.loads(lines[0])
            lines[0] = json.dumps({**entry, "md5Checksum": "AAAAAAAAAAAAAAAAAAAAAA=="})
        files.write_text("\n".join(lines) + "\n")
    path.write_text(json.dumps(manifest))
    capsys.readouterr()
    assert cli.main([*exported.argv(), "--grace", "0s"]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert stack.keys(stack.settings.store.reports_bucket) == []  # no report


def test_deep_reports_a_result_json_deleted_after_the_inventory(stack, tmp_path: Path) -> None:
    _document(stack, "u6", "a")
    _document(stack, "u6", "b")
    exported = export_state(stack, tmp_path)
    stack.s3().delete_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key("u6", "b"))
    outcome = _run(
        stack, FilesPlan, dynamodb_export=exported.export, s3_inventories=tuple(exported.manifests), deep=True
    )
    assert _codes(outcome) == [(Code.RESULT_UNREADABLE, "b")]
    assert "gone" in json.loads(outcome.findings.item(0, "evidence"))["error"]


# --- the reviewer's settlement ------------------------------------------------------------------
def test_a_reviewer_settled_document_is_no_summary_mismatch(stack) -> None:
    review = _document(stack, "u7", "settled", Status.REVIEW_REQUIRED)
    settled = review.evolve(status=Status.PROCESSED, version=review.version + 1, updatedBy="reviewer:test")
    stack.dynamodb().put_item(TableName=stack.settings.store.table_name, Item=to_wire(settled.to_item()))
    assert _codes(_run(stack, deep=True)) == []
    # The other way round is still a mismatch: no one un-settles a document.
    wrong = _document(stack, "u7", "wrong")
    stack.dynamodb().put_item(
        TableName=stack.settings.store.table_name, Item=to_wire(wrong.evolve(status=Status.REVIEW_REQUIRED).to_item())
    )
    assert _codes(_run(stack, deep=True)) == [(Code.SUMMARY_MISMATCH, "wrong")]


# --- options --------------------------------------------------------------------------------------
@pytest.mark.parametrize("segments", ["0", "-3", "100000"])
def test_absurd_segments_are_refused_with_exit_2(stack, capsys, segments: str) -> None:
    assert cli.main(["live", "--no-report", "--segments", segments]) == 2
    assert "--segments" in capsys.readouterr().err


def test_segments_within_the_cap_run(stack) -> None:
    _document(stack, "u8", "a")
    assert cli.main(["live", "--no-report", "--grace", "0s", "--segments", "3"]) == 0
    assert pl.DataFrame(_run(stack, segments=3).findings).height == 0
