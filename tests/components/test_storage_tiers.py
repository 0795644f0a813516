"""An archive that stays readable: no bucket a GET reads moves objects to a class a GET refuses.

A GLACIER or DEEP_ARCHIVE object answers 403 InvalidObjectState until restored; the processed
bucket (presigned result.json, the jobs), the reports and the raw originals (a reprocess) are
read by GET at any age, so every transition of every stack stays in READABLE_STORAGE_CLASSES.
"""

from __future__ import annotations

import pytest

from jobs.contract import layout
from jobs.contract.schema import READABLE_STORAGE_CLASSES, TRANSITION_MINIMUM_OBJECT_SIZE
from tests.components.program import ProgramRun

ARCHIVES = {"GLACIER", "DEEP_ARCHIVE"}


def _lifecycle_of(run: ProgramRun, purpose: str) -> dict[str, object]:
    name = layout.bucket_name(run.stack, purpose)
    (bucket,) = [r for r in run.of_type("aws:s3/bucket:Bucket") if r.inputs.get("bucket") == name]
    (config,) = [
        r.inputs
        for r in run.of_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
        if r.inputs["bucket"] == bucket.outputs["bucket"]
    ]
    return config


def _transitions(config: dict[str, object]) -> list[str]:
    rules = config["rules"]
    assert isinstance(rules, list)
    return [t["storageClass"] for rule in rules for t in rule.get("transitions") or []]


def test_the_processed_bucket_never_transitions_to_an_archive_class(every_stack: ProgramRun) -> None:
    classes = _transitions(_lifecycle_of(every_stack, "processed"))
    assert classes == ["STANDARD_IA", "GLACIER_IR"]
    assert not ARCHIVES & set(classes)


@pytest.mark.parametrize("purpose", ["raw", "reports"])
def test_raw_and_reports_stay_readable_too(every_stack: ProgramRun, purpose: str) -> None:
    assert _transitions(_lifecycle_of(every_stack, purpose)) == ["STANDARD_IA", "GLACIER_IR"]


def test_no_bucket_of_any_stack_moves_an_object_out_of_get_reach(every_stack: ProgramRun) -> None:
    configs = every_stack.of_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
    assert configs
    for rec in configs:
        assert set(_transitions(rec.inputs)) <= set(READABLE_STORAGE_CLASSES), rec.name
        # Objects under 128 KB stay in STANDARD: IA and Glacier IR would bill them as 128 KB.
        assert rec.inputs["transitionDefaultMinimumObjectSize"] == TRANSITION_MINIMUM_OBJECT_SIZE
