"""Retention in the contract: a class per document type, decided once, one clock for the item's
TTL and its objects' lifecycle rules, and the item's delete / restore / hold / release.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs.contract import (
    DocumentType,
    LifecycleSpec,
    ObjectInfo,
    RetentionClass,
    RetentionPolicy,
    Status,
    layout,
    tombstone,
)
from jobs.contract.lifecycle import held, released, restored, user_deleted
from jobs.errors import LifecycleRefusedError
from jobs.ingest.plan import decide
from tests.jobs.contract.test_models import NOW, make_item

POLICY = RetentionPolicy(by_type={DocumentType.CREDIT_NOTE: RetentionClass.COMPLIANCE})
UPLOADED = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def test_classes_by_type_with_standard_for_the_rest_and_for_unknown_types() -> None:
    assert POLICY.class_of(DocumentType.CREDIT_NOTE) is RetentionClass.COMPLIANCE
    assert POLICY.class_of(DocumentType.INVOICE) is RetentionClass.STANDARD
    assert POLICY.class_of(None) is RetentionClass.STANDARD  # a failed extraction has no type
    assert RetentionPolicy().standard_days == 1827 and RetentionPolicy().compliance_days == 3653


def test_the_policy_travels_as_json_unchanged() -> None:
    assert RetentionPolicy.from_env(POLICY.to_env()) == POLICY
    with pytest.raises(ValueError, match="FAX"):
        RetentionPolicy.from_env('{"byType": {"FAX": "standard"}}')


def test_item_ttl_is_retention_then_grace_and_absent_while_held() -> None:
    live = make_item(
        createdAt=UPLOADED, retentionClass="standard", retainUntil=POLICY.retain_until(UPLOADED, "standard")
    )
    assert live.to_item()[layout.TTL_ATTR] == int((UPLOADED + timedelta(days=1827)).timestamp())
    gone = user_deleted(live, NOW, "user:u1", POLICY)
    assert gone.to_item()[layout.TTL_ATTR] == int((NOW + timedelta(days=30)).timestamp())
    assert (gone.status, gone.restoreStatus, gone.deletedBy, gone.deletedAt) == (
        Status.DELETED,
        Status.PROCESSED,
        "user:u1",
        NOW.replace(microsecond=123000),
    )
    back = restored(gone, NOW + timedelta(days=29), "user:u1")
    assert back.status == Status.PROCESSED and back.to_item()[layout.TTL_ATTR] == live.to_item()[layout.TTL_ATTR]
    assert back.version == live.version + 2 and back.updatedBy == "user:u1"
    locked = held(live, NOW, "operator:legal")
    assert layout.TTL_ATTR not in locked.to_item() and locked.legalHoldBy == "operator:legal"
    assert released(locked, NOW, "operator:legal").to_item()[layout.TTL_ATTR] == live.to_item()[layout.TTL_ATTR]
    never_finished = make_item(status=Status.PROCESSING)
    assert layout.TTL_ATTR not in never_finished.to_item()


def test_delete_restore_and_hold_refuse_what_the_state_does_not_allow() -> None:
    live = make_item()
    locked = held(live, NOW, "operator:legal")
    with pytest.raises(LifecycleRefusedError, match="legal hold"):
        user_deleted(locked, NOW, "user:u1", POLICY)
    with pytest.raises(LifecycleRefusedError, match="being processed"):
        user_deleted(make_item(status=Status.PROCESSING), NOW, "user:u1", POLICY)
    with pytest.raises(LifecycleRefusedError, match="not deleted"):
        restored(live, NOW, "user:u1")
    gone = user_deleted(live, NOW, "user:u1", POLICY)
    with pytest.raises(LifecycleRefusedError, match="deleted for good"):
        restored(gone, NOW + timedelta(days=30), "user:u1")
    with pytest.raises(LifecycleRefusedError, match="restore it before a hold"):
        held(gone, NOW, "operator:legal")
    # Running a command again changes nothing.
    assert user_deleted(gone, NOW + timedelta(days=1), "user:u1", POLICY) is gone
    assert held(locked, NOW, "operator:legal") is locked and released(live, NOW, "operator:x") is live


def test_a_deleted_item_records_its_delete_whole() -> None:
    with pytest.raises(ValueError, match="deletedAt, deletedBy, restoreStatus and hardDeleteAt"):
        make_item(status=Status.DELETED, deletedAt=NOW)
    with pytest.raises(ValueError, match="only a DELETED item"):
        make_item(deletedAt=NOW, deletedBy="user:u1", restoreStatus=Status.PROCESSED, hardDeleteAt=NOW)


def test_a_claim_keeps_the_class_and_a_new_upload_restarts_the_clock() -> None:
    done = make_item(
        createdAt=UPLOADED,
        retentionClass=RetentionClass.COMPLIANCE,
        retainUntil=POLICY.retain_until(UPLOADED, RetentionClass.COMPLIANCE),
        legalHoldAt=NOW,
        legalHoldBy="operator:legal",
    )
    later = UPLOADED + timedelta(days=400)
    upload = ObjectInfo("raw", "raw/u1/d1/a.xml", '"e2"', 10, later)
    claim = decide(
        layout.parse_raw_key(upload.key),
        upload,
        done,
        now=later,
        owner="o",
        actor="ingest:r2",
        lease=timedelta(minutes=15),
        max_attempts=3,
    ).claim
    assert claim is not None
    assert claim.retentionClass is RetentionClass.COMPLIANCE and claim.retainUntil is None  # decided at the finish
    assert claim.held and claim.createdAt == later


def test_a_tombstone_keeps_the_retention_or_gets_the_standard_one() -> None:
    done = make_item(retentionClass="compliance", retainUntil=NOW + timedelta(days=10))
    assert tombstone(done, NOW, "gone", "repair:r", POLICY).retainUntil == done.retainUntil
    claim = make_item(status=Status.PROCESSING, createdAt=UPLOADED)
    stone = tombstone(claim, NOW, "gone", "ingest:r", POLICY)
    assert (stone.retentionClass, stone.retainUntil) == (RetentionClass.STANDARD, UPLOADED + timedelta(days=1827))


def test_lifecycle_rules_count_the_same_days_as_the_item() -> None:
    policy = RetentionPolicy(standard_days=100, compliance_days=200, grace_days=7)
    rules = {r["ID"]: r for r in LifecycleSpec(retention=policy).rules(layout.RAW_PREFIX)}
    assert rules["expire-standard"]["Expiration"] == {"Days": 100}
    assert rules["expire-compliance"]["Expiration"] == {"Days": 200}
    assert rules["grace-period"]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 7}
    assert rules["grace-period"]["Expiration"] == {"ExpiredObjectDeleteMarker": True}
    assert "Tag" not in rules["grace-period"]["Filter"] and "And" not in rules["grace-period"]["Filter"]


def test_an_owners_delete_is_no_new_life_for_the_uploads_it_hid() -> None:
    done = make_item(createdAt=UPLOADED, retentionClass="standard", retainUntil=UPLOADED + timedelta(days=1827))
    gone = user_deleted(done, UPLOADED + timedelta(days=10), "user:u1", POLICY)
    raw = layout.parse_raw_key("raw/u1/d1/a.xml")

    def decision(obj: ObjectInfo):
        return decide(
            raw,
            obj,
            gone,
            now=obj.last_modified,
            owner="o",
            actor="ingest:r",
            lease=timedelta(minutes=1),
            max_attempts=3,
        )

    hidden = ObjectInfo("raw", "raw/u1/d1/a.xml", '"e1"', 10, UPLOADED)  # the delete's own upload, visible
    assert decision(hidden).action == "SKIP_DONE"
    again = ObjectInfo("raw", "raw/u1/d1/a.xml", '"e1"', 10, UPLOADED + timedelta(days=11))  # uploaded after
    assert decision(again).action == "CLAIM"
