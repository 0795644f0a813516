"""The stand-ins for TTL and S3 lifecycle: the declared rules, applied at a date, exactly as AWS
would have by then (rounding to the next midnight UTC, noncurrent days from the successor, the
earliest matching expiration, legal holds left alone); and the dates they count from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jobs.contract import RetentionClass, layout
from jobs.contract.actors import TTL_PRINCIPAL
from jobs.contract.retention import RetentionPolicy
from jobs.contract.schema import LifecycleSpec
from jobs.errors import BadInputError, SettingsError
from jobs.local.standins.advance import advance, check_local
from jobs.local.standins.rules import expiration_due, next_midnight, noncurrent_due, removes_expired_markers
from jobs.local.standins.ttl import journalled, removal_key, with_ttl_identity
from tests.jobs.lifecycle.lifecycle_helpers import kinds, listed

REPO_ROOT = Path(__file__).resolve().parents[3]
RULES = LifecycleSpec(retention=RetentionPolicy(standard_days=10, compliance_days=20, grace_days=3)).rules(
    layout.RAW_PREFIX
)
T = datetime(2026, 1, 15, 10, 30, tzinfo=UTC)


def test_dates_round_to_the_next_midnight_and_the_earliest_rule_wins() -> None:
    assert next_midnight(T) == datetime(2026, 1, 16, tzinfo=UTC)
    assert expiration_due(RULES, "raw/u/d/a", T, {"retention": "standard"}) == datetime(2026, 1, 26, tzinfo=UTC)
    assert expiration_due(RULES, "raw/u/d/a", T, {"retention": "compliance"}) == datetime(2026, 2, 5, tzinfo=UTC)
    assert expiration_due(RULES, "raw/u/d/a", T, {}) is None  # untagged: tiered, never expired
    assert expiration_due(RULES, "other/u/d/a", T, {"retention": "standard"}) is None  # outside the prefix
    assert noncurrent_due(RULES, "raw/u/d/a", T) == datetime(2026, 1, 19, tzinfo=UTC)
    assert removes_expired_markers(RULES, "raw/x") and not removes_expired_markers(RULES, "processed/x")


def test_the_stand_ins_refuse_anything_but_loopback() -> None:
    check_local("http://127.0.0.1:4566", "http://localhost:1")
    with pytest.raises(SettingsError, match="loopback"):
        check_local("https://s3.eu-west-1.amazonaws.com")


def test_advance_applies_ttl_and_the_buckets_rules_at_a_date(stack, tmp_path) -> None:
    s, s3, ddb = stack.settings, stack.s3(), stack.dynamodb()
    raw = s.store.raw_bucket
    days = RetentionPolicy().standard_days

    def put(key: str, retention: RetentionClass | None = None) -> str:
        tagging = {"Tagging": f"{layout.RETENTION_TAG}={retention.value}"} if retention else {}
        return s3.put_object(Bucket=raw, Key=key, Body=b"x", **tagging)["VersionId"]

    put("raw/u/kept/a.xml", RetentionClass.STANDARD)
    put("raw/u/long/a.xml", RetentionClass.COMPLIANCE)
    put("raw/u/untagged/a.xml")
    put("raw/u/deleted/a.xml", RetentionClass.STANDARD)
    s3.delete_object(Bucket=raw, Key="raw/u/deleted/a.xml")  # a user's delete: a marker now
    held = put("raw/u/held/a.xml", RetentionClass.STANDARD)
    s3.put_object_legal_hold(Bucket=raw, Key="raw/u/held/a.xml", VersionId=held, LegalHold={"Status": "ON"})
    now = layout.utc_now()
    for doc, ttl in (("soon", now + timedelta(days=20)), ("late", now + timedelta(days=days + 10))):
        key = {layout.PK_ATTR: {"S": layout.user_pk("u")}, layout.SK_ATTR: {"S": layout.document_sk(doc)}}
        ddb.put_item(TableName=s.store.table_name, Item={**key, layout.TTL_ATTR: {"N": str(layout.epoch_seconds(ttl))}})
    ledger = tmp_path / "ledger.json"

    first = advance(s, now + timedelta(days=31), ddb, s3, ledger)  # past the grace of the user's delete
    assert (first.items_expired, first.objects.versions_deleted, first.objects.markers_removed) == (1, 1, 1)
    assert not any(e.key.startswith("raw/u/deleted/") for e in listed(stack, raw))

    second = advance(s, now + timedelta(days=days + 2), ddb, s3, ledger)  # standard retention passed
    state = kinds(listed(stack, raw))
    assert state[("raw/u/kept/a.xml", "m*")] == 1 and state[("raw/u/kept/a.xml", "v")] == 1  # hidden, in grace
    assert state[("raw/u/held/a.xml", "m*")] == 1 and state[("raw/u/held/a.xml", "v")] == 1
    assert state[("raw/u/long/a.xml", "v*")] == 1 and state[("raw/u/untagged/a.xml", "v*")] == 1
    assert second.objects.markers_placed == 2

    third = advance(s, now + timedelta(days=days + 40), ddb, s3, ledger)  # and its grace
    state = kinds(listed(stack, raw))
    assert not any(k.startswith("raw/u/kept/") for k, _ in state)  # version and marker gone
    assert state[("raw/u/held/a.xml", "v")] == 1 and third.objects.held_skipped == 1  # a hold keeps it
    assert third.items_expired == 1  # "late" is now past its TTL too
    # Each removal is journalled, for the Pipe's stand-in to name it as DynamoDB would.
    assert sorted(journalled(ddb, s.store.table_name)) == sorted(
        removal_key({layout.PK_ATTR: {"S": layout.user_pk("u")}, layout.SK_ATTR: {"S": layout.document_sk(d)}})
        for d in ("soon", "late")
    )
    with pytest.raises(BadInputError, match="only moves forward"):
        advance(s, now, ddb, s3, ledger)


def test_a_removal_the_ttl_made_carries_its_service_identity_and_no_other_does() -> None:
    old = {
        layout.PK_ATTR: {"S": layout.user_pk("u")},
        layout.SK_ATTR: {"S": layout.document_sk("d")},
        "version": {"N": "3"},
        layout.TTL_ATTR: {"N": "1900000000"},
    }
    key = removal_key(old)
    assert key is not None
    journal = {key: (layout.TTL_ATTR, {"N": "1900000000"})}

    def removal(image: object, event: str = "REMOVE") -> dict:
        return {"eventName": event, "dynamodb": {"OldImage": image}}

    named = with_ttl_identity(removal(old), journal)
    assert named["userIdentity"] == {"type": "Service", "principalId": TTL_PRINCIPAL}
    # A job's delete of another version, or of the same one with another TTL, is left as it came;
    # so are writes and records that are not what the stream writes.
    for record in (
        removal({**old, "version": {"N": "4"}}),
        removal({**old, layout.TTL_ATTR: {"N": "1900000001"}}),
        removal(old, "MODIFY"),
        removal("not an image"),
        {"eventName": "REMOVE"},
    ):
        assert with_ttl_identity(record, journal) is record


def test_the_cli_moves_a_stage_forward_and_refuses_going_back(stack, tmp_path) -> None:
    env = {**os.environ, "DOCUFLOW_LOCAL_DIR": str(tmp_path)}

    def local(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "jobs", "local", *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True
        )

    assert local("advance").returncode == 2
    done = local("advance", "--to", "2031-12-01")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["to"].startswith("2031-12-01")
    back = local("advance", "--to", "2030-01-01")
    assert back.returncode == 2 and "only moves forward" in back.stderr and "Traceback" not in back.stderr
