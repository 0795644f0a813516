"""--repair against the local stack: every fix, and every path on which it must leave things alone."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import polars as pl
import pytest

from jobs.contract import DocumentFormat, DocumentItem, ResultDocument, SourceObject, Status, ValidationResult, layout
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.repair import Repairer
from jobs.reconcile.rules.findings import FINDINGS_SCHEMA, SEVERITY, Code
from jobs.reconcile.run import ReconcileRun

T0 = layout.utc_now() - timedelta(days=1)


def _repairer(stack) -> tuple[Repairer, Any, Any]:
    run = ReconcileRun(stack.settings, LivePlan())
    return (
        Repairer(
            run.table,
            run.buckets,
            stack.settings.store.processed_bucket,
            actor="repair:test",
            policy=stack.settings.store.retention,
        ),
        run.table,
        run.buckets,
    )


def _finding(
    code: Code, user: str, doc: str, evidence: dict[str, Any], bucket: str | None = None, key: str | None = None
) -> dict[str, Any]:
    return {
        "code": code.value,
        "severity": SEVERITY[code].value,
        "userId": user,
        "documentId": doc,
        "bucket": bucket,
        "key": key,
        "pk": layout.user_pk(user),
        "sk": layout.document_sk(doc),
        "evidence": json.dumps(evidence),
    }


def _outcomes(repairer: Repairer, *findings: dict[str, Any]) -> list[str]:
    return [a.outcome for a in repairer.run(pl.DataFrame(list(findings), schema=FINDINGS_SCHEMA))]


def _put_raw(stack, user: str, doc: str, body: bytes = b"<Invoice/>") -> tuple[str, str]:
    key = layout.raw_key(user, doc, "a.xml")
    etag = stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=body)["ETag"]
    return key, etag


def _item(stack, user: str, doc: str, status: Status = Status.PROCESSED, **changes: Any) -> DocumentItem:
    key, etag = _put_raw(stack, user, doc)
    item = DocumentItem(
        userId=user,
        documentId=doc,
        status=status,
        createdAt=T0,
        updatedAt=T0,
        rawS3Uri=layout.s3_uri(stack.settings.store.raw_bucket, key),
        rawEtag=etag,
        version=3,
        attempts=1,
        **changes,
    )
    ReconcileRun(stack.settings, LivePlan()).table.put_if_version(item, None)
    return item


def _result_doc(
    stack, user: str, doc: str, etag: str = '"e"', key_user: str | None = None
) -> tuple[str, ResultDocument]:
    raw_key = layout.raw_key(user, doc, "a.xml")
    result = ResultDocument(
        userId=user,
        documentId=doc,
        source=SourceObject(
            bucket=stack.settings.store.raw_bucket,
            key=raw_key,
            etag=etag,
            size=10,
            lastModified=T0,
            format=DocumentFormat.UBL,
        ),
        engine="ubl",
        validation=ValidationResult(status=Status.PROCESSED),
        createdAt=T0,
        processedAt=T0,
        pipelineVersion="test",
    )
    key = layout.result_key(key_user or user, doc)
    stack.s3().put_object(Bucket=stack.settings.store.processed_bucket, Key=key, Body=result.to_json_bytes())
    return key, result


def test_each_repair_applies_to_the_state_it_saw(stack) -> None:
    repairer, table, _ = _repairer(stack)
    proc = stack.settings.store.processed_bucket
    # ORPHAN_RESULT: rebuilt through jobs.contract.finished_item from a synthetic claim.
    _, etag = _put_raw(stack, "u1", "orphan")
    key, _doc = _result_doc(stack, "u1", "orphan", etag=etag)
    missing = _item(stack, "u1", "noresult")
    stuck = _item(stack, "u1", "stuck", Status.PROCESSING, leaseOwner="dead", leaseExpiresAt=T0)
    drift = _item(stack, "u1", "drift")
    outcomes = _outcomes(
        repairer,
        _finding(Code.ORPHAN_RESULT, "u1", "orphan", {"etag": "r1"}, proc, key),
        _finding(Code.MISSING_RESULT, "u1", "noresult", {"version": missing.version}),
        _finding(Code.STUCK_PROCESSING, "u1", "stuck", {"version": stuck.version}),
        _finding(Code.INDEX_DRIFT, "u1", "drift", {"version": drift.version}),
    )
    assert outcomes == ["applied"] * 4
    rebuilt = table.get("u1", "orphan")
    assert (rebuilt.status, rebuilt.rawEtag, rebuilt.version, rebuilt.resultEtag) == (Status.PROCESSED, etag, 2, "r1")
    assert rebuilt.resultS3Uri == layout.s3_uri(proc, key) and rebuilt.leaseOwner is None
    for doc_id in ("noresult", "stuck"):
        item = table.get("u1", doc_id)
        assert (item.status, item.failureCode, item.attempts, item.version) == (Status.FAILED, "INTERNAL", 0, 4)
    assert table.get("u1", "drift").version == 4
    assert {table.get("u1", d).updatedBy for d in ("orphan", "noresult", "stuck", "drift")} == {"repair:test"}


def test_every_skip_path_leaves_the_item_as_it_is(stack) -> None:
    repairer, _table, _ = _repairer(stack)
    proc = stack.settings.store.processed_bucket
    changed = _item(stack, "u2", "changed")
    not_promised = _item(stack, "u2", "failed", Status.FAILED)
    has_result = _item(stack, "u2", "hasresult")
    _result_doc(stack, "u2", "hasresult")
    leased = _item(
        stack,
        "u2",
        "leased",
        Status.PROCESSING,
        leaseOwner="alive",
        leaseExpiresAt=layout.utc_now() + timedelta(hours=1),
    )
    existing = _item(stack, "u2", "exists")
    key_exists, _ = _result_doc(stack, "u2", "exists", etag=existing.rawEtag)
    wrong_key, _ = _result_doc(stack, "u2", "other", key_user="u3")
    cases = {
        "skipped: the item no longer exists": _finding(Code.MISSING_RESULT, "u2", "gone", {"version": 1}),
        "skipped: the item changed since the snapshot (version 2 -> 3)": _finding(
            Code.INDEX_DRIFT, "u2", "changed", {"version": 2}
        ),
        "skipped: status is now FAILED": _finding(
            Code.MISSING_RESULT, "u2", "failed", {"version": not_promised.version}
        ),
        "skipped: result.json exists now": _finding(
            Code.MISSING_RESULT, "u2", "hasresult", {"version": has_result.version}
        ),
        "skipped: the lease is held again": _finding(
            Code.STUCK_PROCESSING, "u2", "leased", {"version": leased.version}
        ),
        "skipped: the item changed while repairing (condition failed)": _finding(
            Code.ORPHAN_RESULT, "u2", "exists", {"etag": "r"}, proc, key_exists
        ),
        "skipped: result.json names other ids than its key": _finding(
            Code.ORPHAN_RESULT, "u3", "other", {"etag": "r"}, proc, wrong_key
        ),
    }
    before = {(i.userId, i.documentId): i for i in stack.items()}
    outcomes = _outcomes(repairer, *cases.values())
    assert outcomes == list(cases)
    assert {(i.userId, i.documentId): i for i in stack.items()} == before
    assert changed.version == 3 and existing.version == 3


def test_a_race_after_the_check_is_skipped_by_the_version_guard(stack, monkeypatch: pytest.MonkeyPatch) -> None:
    repairer, table, _ = _repairer(stack)
    drift = _item(stack, "u4", "race")
    original = table.put_if_version

    def racing(item: DocumentItem, expected: int | None) -> bool:
        # Another writer lands between the repair's read and its conditional put.
        original(
            drift.evolve(version=drift.version + 1, updatedBy="reviewer:someone", vendorName="someone else"),
            drift.version,
        )
        return original(item, expected)

    monkeypatch.setattr(table, "put_if_version", racing)
    assert _outcomes(repairer, _finding(Code.INDEX_DRIFT, "u4", "race", {"version": drift.version})) == [
        "skipped: the item changed while repairing (condition failed)"
    ]
    assert table.get("u4", "race").vendorName == "someone else"


def test_an_unreadable_result_json_fails_that_repair_only(stack) -> None:
    repairer, table, _ = _repairer(stack)
    proc = stack.settings.store.processed_bucket
    key = layout.result_key("u5", "broken")
    stack.s3().put_object(Bucket=proc, Key=key, Body=b"{not json")
    drift = _item(stack, "u5", "drift")
    outcomes = _outcomes(
        repairer,
        _finding(Code.ORPHAN_RESULT, "u5", "broken", {"etag": "r"}, proc, key),
        _finding(Code.INDEX_DRIFT, "u5", "drift", {"version": drift.version}),
    )
    assert outcomes[0].startswith("failed: ValidationError") and outcomes[1] == "applied"
    assert table.get("u5", "broken") is None
