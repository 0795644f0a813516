"""The embedded local stack declares what the Pulumi stack declares, from the same contract specs.

`python -m jobs local up` (and the test fixtures) bootstrap buckets from jobs.contract; the
program translates the same specs into pulumi-aws arguments. Here both sides are read back: the
local reports bucket's default retention and every bucket's lifecycle rules against the dev
stack's recorded resources, so a local run meets the refusals and expiries it would on AWS.
"""

from __future__ import annotations

from jobs.contract import ObjectLockSpec, audit_data_spec, bucket_specs, layout
from jobs.contract.schema import AUDIT_RETENTION, audit_bucket_spec
from tests.components.program import ProgramRun


def test_local_reports_bucket_has_the_stacks_default_retention(stack, dev: ProgramRun) -> None:
    local = stack.s3().get_object_lock_configuration(Bucket=stack.settings.store.reports_bucket)[
        "ObjectLockConfiguration"
    ]
    retention = local["Rule"]["DefaultRetention"]
    contract = ObjectLockSpec()
    assert (local["ObjectLockEnabled"], retention["Mode"], retention["Days"]) == (
        "Enabled",
        contract.mode,
        contract.days,
    )
    # Pulumi.dev.yaml keeps the contract's default, so dev on AWS and local runs agree.
    declared = dev.named("docuflow-dev-reports-object-lock").inputs
    assert declared["rule"]["defaultRetention"] == {"mode": retention["Mode"], "days": retention["Days"]}


def test_local_audit_log_has_the_dev_stacks_audit_retention(stack, dev: ProgramRun) -> None:
    s3 = stack.s3()
    local = s3.get_object_lock_configuration(Bucket=stack.settings.audit.audit_bucket)["ObjectLockConfiguration"]
    retention = local["Rule"]["DefaultRetention"]
    assert (retention["Mode"], retention["Days"]) == (AUDIT_RETENTION.mode, AUDIT_RETENTION.days) == ("GOVERNANCE", 730)
    declared = dev.named(f"docuflow-dev-{layout.AUDIT_LOG}-object-lock").inputs
    assert declared["rule"]["defaultRetention"] == {"mode": retention["Mode"], "days": retention["Days"]}


def test_local_data_buckets_have_object_lock_without_default_retention(stack) -> None:
    s3 = stack.s3()
    for bucket in (stack.settings.store.raw_bucket, stack.settings.store.processed_bucket):
        local = s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
        assert local["ObjectLockEnabled"] == "Enabled" and "Rule" not in local, bucket


def test_local_lifecycle_rules_are_the_stacks(stack, dev: ProgramRun) -> None:
    s3 = stack.s3()
    local_specs = [
        *bucket_specs(stack.settings.stage, stack.settings.store.bucket_names()),
        audit_bucket_spec(stack.settings.stage, layout.AUDIT_LOG),
        audit_data_spec(stack.settings.stage),
    ]
    for spec in local_specs:
        local = s3.get_bucket_lifecycle_configuration(Bucket=spec.name)["Rules"]
        declared = dev.named(f"docuflow-dev-{spec.purpose}-lifecycle").inputs["rules"]
        assert [r["ID"] for r in local] == [r["id"] for r in declared], spec.purpose
        # The bucket-wide abort of incomplete multipart uploads is on both sides.
        aborts = [r for r in local if "AbortIncompleteMultipartUpload" in r]
        assert [r["Filter"] for r in aborts] in ([{}], [{"Prefix": ""}]), spec.purpose
