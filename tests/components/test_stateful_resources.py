"""Upgrades that never replace state: the stateful resources of every stack keep their URN and
physical name from one version of the program to the next (data/stateful_resources.json).

Pulumi tracks a resource by its URN (stack, project, parent chain, type, name): a renamed
component, a changed resource name or a moved parent is a new URN, and `pulumi up` would delete
the old resource and create an empty one (protect=True makes it fail instead, half-way). A
changed physical name (bucket, table, vault, repository) is a replacement whatever the URN.

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

import json
import os
from typing import Any

import pytest

from tests.components.program import REPO_ROOT, ProgramRun, Recorded, program_run, stack_files

RECORD = REPO_ROOT / "tests" / "components" / "data" / "stateful_resources.json"
# What holds data (or decrypts it, or holds its backups): replacing one loses it.
STATEFUL = (
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


def stateful(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {rec.urn: {"type": rec.typ, "physical": physical_name(rec)} for rec in run.resources if rec.typ in STATEFUL}


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


@pytest.mark.parametrize("stack", stack_files())
def test_no_stateful_resource_changes_its_urn_or_physical_name(stack: str) -> None:
    run = program_run(stack)
    now = stateful(run)
    problems = []
    for urn, was in _recorded()[stack].items():
        if urn in now:
            current = now[urn]
        elif (moved := _aliased_to(run, urn, was["type"])) is not None:
            current = now[moved.urn]
        else:
            problems.append(f"{urn} is gone: an `up` would delete it and create an empty one (add a pulumi.Alias)")
            continue
        if current["physical"] != was["physical"]:
            problems.append(f"{urn}: physical name {was['physical']} -> {current['physical']} replaces it")
    assert not problems, "\n".join([*problems, f"(legitimate changes: see this module's docstring; {UPDATE})"])


def test_every_stateful_resource_is_recorded(every_stack: ProgramRun) -> None:
    """A new stateful resource is added to the record, so a later rename of it is caught."""
    unrecorded = sorted(set(stateful(every_stack)) - set(_recorded()[every_stack.stack]))
    assert not unrecorded, f"record the new stateful resources {unrecorded}: {UPDATE}"


def test_stateful_resources_are_protected_except_in_dev(every_stack: ProgramRun) -> None:
    """`pulumi destroy`, or an `up` that would replace one, fails on a protected resource."""
    for rec in every_stack.resources:
        if rec.typ in STATEFUL:
            assert rec.protect is (every_stack.stack != "dev"), rec.name
