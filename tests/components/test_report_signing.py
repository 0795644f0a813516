"""The report signing key in the whole mocked program: an asymmetric signing key, its alias the
jobs use, and a key policy that lets only the reconcile and repair roles sign and nobody
schedule deletion with less than the full window.
"""

from __future__ import annotations

import json

import pytest

from components.report_signing import ReportSigningKey, ReportSigningKeyArgs, signing_key_alias
from jobs.settings import ENV_IMAGE_DIGEST, ENV_REPORT_SIGNING_KEY
from tests.components.program import ProgramRun


def _signing_key(run: ProgramRun):  # type: ignore[no-untyped-def]
    keys = [r for r in run.of_type("aws:kms/key:Key") if r.inputs.get("keyUsage") == "SIGN_VERIFY"]
    assert len(keys) == 1
    return keys[0]


def test_the_signing_key_is_asymmetric_kept_30_days_and_only_reconcile_signs(dev: ProgramRun) -> None:
    key = _signing_key(dev).inputs
    assert key["customerMasterKeySpec"] == "ECC_NIST_P256" and key["deletionWindowInDays"] == 30
    policy = {s["Sid"]: s for s in json.loads(key["policy"])["Statement"]}
    signers = policy["ReconcileSigns"]["Principal"]["AWS"]
    roles = {r.name: r for r in dev.of_type("aws:iam/role:Role")}
    assert len(signers) == 2 and all(any(n in arn for n in roles) for arn in signers)
    assert all("reconcile-task" in arn or "repair-task" in arn for arn in signers)
    assert "kms:Sign" in policy["ReconcileSigns"]["Action"]
    assert "kms:Sign" not in json.dumps(policy["AccountVerifies"])
    early = policy["NoEarlyDeletion"]
    assert (early["Effect"], early["Action"]) == ("Deny", "kms:ScheduleKeyDeletion")
    assert early["Condition"]["NumericLessThan"]["kms:ScheduleKeyDeletionPendingWindowInDays"] == "30"
    alias = [a.inputs for a in dev.of_type("aws:kms/alias:Alias") if a.inputs["name"] == signing_key_alias("dev")]
    assert len(alias) == 1


def test_the_reconcile_tasks_name_the_key_by_its_arn_and_their_image(dev: ProgramRun) -> None:
    """The tasks sign with, and `reports verify` run in them checks against, the key's ARN (the
    component's key_arn, the stack output reportSigningKeyArn), never the alias: an alias can be
    pointed at another key.
    """
    key_arn = _signing_key(dev).outputs["arn"]
    assert key_arn.startswith("arn:aws:kms:") and ":alias/" not in key_arn
    for td in dev.of_type("aws:ecs/taskDefinition:TaskDefinition"):
        (container,) = json.loads(td.inputs["containerDefinitions"])
        env = {e["name"]: e["value"] for e in container["environment"]}
        signs = container["command"][:1] == ["reconcile"] and "--nightly" in container["command"]
        assert (env.get(ENV_REPORT_SIGNING_KEY) == key_arn) == signs, td.name
        assert "alias/" not in env.get(ENV_REPORT_SIGNING_KEY, ""), td.name
        if signs:
            assert env[ENV_IMAGE_DIGEST] == container["image"].rpartition("@")[2]


def test_a_shorter_deletion_window_is_refused() -> None:
    with pytest.raises(ValueError, match="30-day"):
        ReportSigningKey(
            "k", ReportSigningKeyArgs(account_id="1", stage="dev", signer_role_arns=[], deletion_window_in_days=7)
        )
