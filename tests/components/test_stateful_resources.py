"""Upgrades that never replace state: the stateful resources of every stack keep their URN, their
physical name and every property whose change forces a replacement from one version of the
program to the next (data/stateful_resources.json).

Pulumi tracks a resource by its URN (stack, project, parent chain, type, name): a renamed
component, a changed resource name or a moved parent is a new URN, and `pulumi up` would delete
the old resource and create an empty one (protect=True makes it fail instead, half-way). A
changed physical name (bucket, table, vault, repository, queue, log group) is a replacement
whatever the URN, and so is a change to a property the provider can only set at creation
(`REPLACED_BY`: Object Lock on a bucket, the table's key schema, a KMS key's spec or usage, a
vault's key, a queue's FIFO flag), which a same-URN, same-name diff would otherwise let through.

How to change one legitimately:
- A new URN for the same resource: give it `opts=ResourceOptions(aliases=[pulumi.Alias(name=
  "<old name>", parent=<old parent>)])` (or the old URN); this test accepts a moved URN whose
  resource names the recorded one in an alias. Keep the alias until every stack has run `up`.
- A new stateful resource, or one deliberately retired or renamed after a migration
  (docs/deploy.md, "Upgrades"): rewrite the record and review its diff in the commit:
  `DOCUFLOW_RECORD_STATEFUL=1 .venv/bin/python -m pytest -q tests/components/test_stateful_resources.py`
A physical name cannot change without a migration (copy the data, then retire the old one).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import pytest

from tests.components.program import REPO_ROOT, ProgramRun, Recorded, program_run, stack_files

RECORD = REPO_ROOT / "tests" / "components" / "data" / "stateful_resources.json"
# What holds data (or decrypts it, or holds its backups, messages or logs): replacing one loses
# it. Each with the inputs the provider cannot change in place (ForceNew in the AWS provider's
# schema): a change to any of them replaces the resource, whatever its URN and name.
REPLACED_BY: dict[str, tuple[str, ...]] = {
    # The key schema: the keys, their attribute types (`keyTypes`, derived) and the local indexes.
    "aws:dynamodb/table:Table": ("name", "hashKey", "rangeKey", "keyTypes", "localSecondaryIndexes"),
    "aws:s3/bucket:Bucket": ("bucket", "bucketPrefix", "objectLockEnabled"),
    "aws:kms/key:Key": ("customerMasterKeySpec", "keyUsage", "multiRegion", "customKeyStoreId", "xksKeyId"),
    "aws:backup/vault:Vault": ("name", "kmsKeyArn"),
    "aws:ecr/repository:Repository": ("name", "encryptionConfigurations"),
    # The arrival queue (the night's uploads), the status queue and every dead-letter queue.
    "aws:sqs/queue:Queue": ("name", "namePrefix", "fifoQueue"),
    "aws:cloudwatch/logGroup:LogGroup": ("name", "namePrefix"),
}
STATEFUL = tuple(REPLACED_BY)
# Protected in the stacks (queues and log groups are not yet: components own that).
PROTECTED = (
    "aws:dynamodb/table:Table",
    "aws:s3/bucket:Bucket",
    "aws:kms/key:Key",
    "aws:backup/vault:Vault",
    "aws:ecr/repository:Repository",
)
UPDATE = "DOCUFLOW_RECORD_STATEFUL=1 .venv/bin/python -m pytest -q tests/components/test_stateful_resources.py"


def physical_name(rec: Recorded) -> str | None:
    """The name AWS knows it by (a KMS key has none: its id is AWS's, the URN is what counts)."""
    value = rec.inputs.get("bucket") or rec.inputs.get("name")
    return str(value) if value is not None else None


def _key_types(inputs: dict[str, Any]) -> dict[str, str]:
    keys = {inputs.get("hashKey"), inputs.get("rangeKey")} - {None}
    return {a["name"]: a["type"] for a in inputs.get("attributes") or [] if a.get("name") in keys}


def replacing(rec: Recorded) -> dict[str, Any]:
    """The resource's replace-forcing inputs as recorded (JSON values; absent ones as None)."""
    inputs = {**rec.inputs, "keyTypes": _key_types(rec.inputs)} if rec.typ == "aws:dynamodb/table:Table" else rec.inputs
    return {prop: json.loads(json.dumps(inputs.get(prop), default=str)) for prop in REPLACED_BY[rec.typ]}


def stateful(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {
        rec.urn: {"type": rec.typ, "physical": physical_name(rec), "replacedBy": replacing(rec)}
        for rec in run.resources
        if rec.typ in STATEFUL
    }


def _recorded() -> dict[str, dict[str, dict[str, Any]]]:
    recorded: dict[str, dict[str, dict[str, Any]]] = json.loads(RECORD.read_text())
    return recorded


def test_record_is_current_or_rewritten() -> None:
    if os.environ.get("DOCUFLOW_RECORD_STATEFUL") == "1":
        now = {stack: stateful(program_run(stack)) for stack in stack_files()}
        RECORD.write_text(json.dumps(now, indent=2, sort_keys=True) + "\n")
    assert set(_recorded()) == set(stack_files()), f"a stack file was added or removed: {UPDATE}"


def _aliased_to(run: ProgramRun, urn: str, typ: str) -> Recorded | None:
    """The resource that declares `urn` (or its name) as an alias: the same resource, moved."""
    name = urn.rsplit("::", 1)[-1]
    for rec in run.resources:
        if rec.typ != typ:
            continue
        for alias in rec.aliases:
            if alias.get("urn") == urn or (alias.get("name") == name and alias.get("type") in ("", typ)):
                return rec
    return None


def replacements(recorded: dict[str, dict[str, Any]], run: ProgramRun) -> list[str]:
    """What of the recorded stateful resources `run` would replace: gone, renamed, or changed in
    a property that forces a replacement.
    """
    now = stateful(run)
    problems = []
    for urn, was in recorded.items():
        if urn in now:
            current = now[urn]
        elif (moved := _aliased_to(run, urn, was["type"])) is not None:
            current = now[moved.urn]
        else:
            problems.append(f"{urn} is gone: an `up` would delete it and create an empty one (add a pulumi.Alias)")
            continue
        if current["physical"] != was["physical"]:
            problems.append(f"{urn}: physical name {was['physical']} -> {current['physical']} replaces it")
        for prop, value in was["replacedBy"].items():
            if current["replacedBy"].get(prop) != value:
                problems.append(f"{urn}: {prop} {value!r} -> {current['replacedBy'].get(prop)!r} replaces it")
    return problems


@pytest.mark.parametrize("stack", stack_files())
def test_no_stateful_resource_changes_its_urn_name_or_a_replacing_property(stack: str) -> None:
    problems = replacements(_recorded()[stack], program_run(stack))
    assert not problems, "\n".join([*problems, f"(legitimate changes: see this module's docstring; {UPDATE})"])


def _changed(run: ProgramRun, name: str, inputs: dict[str, Any]) -> ProgramRun:
    """`run` with the inputs of its resource `name` changed, as a new program version would."""
    resources = [
        dataclasses.replace(rec, inputs={**rec.inputs, **inputs}) if rec.name == name else rec for rec in run.resources
    ]
    assert resources != run.resources, name
    return dataclasses.replace(run, resources=resources)


@pytest.mark.parametrize(
    ("name", "change", "caught"),
    [
        ("docuflow-prod-raw", {"objectLockEnabled": True}, "objectLockEnabled None -> True"),
        ("docuflow-prod-reports", {"objectLockEnabled": None}, "objectLockEnabled True -> None"),
        ("docuflow-prod-table", {"rangeKey": "createdAt"}, "rangeKey 'SK' -> 'createdAt'"),
        (
            "docuflow-prod-table",
            {"attributes": [{"name": "PK", "type": "N"}, {"name": "SK", "type": "S"}]},
            "keyTypes",
        ),
        ("docuflow-prod-key", {"customerMasterKeySpec": "RSA_2048"}, "customerMasterKeySpec None -> 'RSA_2048'"),
        ("docuflow-prod-key", {"keyUsage": "SIGN_VERIFY"}, "keyUsage"),
        ("docuflow-prod-backups-eu-west-1-vault", {"kmsKeyArn": "arn:aws:kms:eu-west-1:1:key/other"}, "kmsKeyArn"),
        ("docuflow-prod-arrivals-queue", {"fifoQueue": True}, "fifoQueue None -> True"),
        ("docuflow-prod-arrivals-queue", {"name": "docuflow-prod-arrivals-2"}, "physical name"),
        ("docuflow-prod-ingest-logs", {"name": "/docuflow/prod/ingest-2"}, "physical name"),
    ],
)
def test_a_change_that_forces_a_replacement_is_caught(name: str, change: dict[str, Any], caught: str) -> None:
    run = program_run("prod")
    recorded = _recorded()["prod"]
    assert replacements(recorded, run) == []
    problems = replacements(recorded, _changed(run, name, change))
    assert problems and all(name in p for p in problems) and caught in "\n".join(problems), problems


def test_a_change_made_in_place_is_not_a_replacement() -> None:
    """A KMS key's rotation, a log group's retention, a queue's retention: updated where they are."""
    run = program_run("prod")
    changed = _changed(run, "docuflow-prod-key", {"enableKeyRotation": False})
    changed = _changed(changed, "docuflow-prod-ingest-logs", {"retentionInDays": 30})
    changed = _changed(changed, "docuflow-prod-arrivals-queue", {"messageRetentionSeconds": 60})
    assert replacements(_recorded()["prod"], changed) == []


def test_every_stateful_resource_is_recorded(every_stack: ProgramRun) -> None:
    """A new stateful resource is added to the record, so a later rename of it is caught."""
    unrecorded = sorted(set(stateful(every_stack)) - set(_recorded()[every_stack.stack]))
    assert not unrecorded, f"record the new stateful resources {unrecorded}: {UPDATE}"


def test_stateful_resources_are_protected_except_in_dev(every_stack: ProgramRun) -> None:
    """`pulumi destroy`, or an `up` that would replace one, fails on a protected resource."""
    for rec in every_stack.resources:
        if rec.typ in PROTECTED:
            assert rec.protect is (every_stack.stack != "dev"), rec.name
