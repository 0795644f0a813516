"""`python -m jobs undelete` on the live local stack: a bad role empties both data buckets."""

from __future__ import annotations

import json
import time
from datetime import timedelta

from jobs.contract import Status, layout
from jobs.reconcile import LivePlan, ReconcileRun
from jobs.recovery import undelete
from tests.jobs.recovery.recovery_helpers import processed_stage


def _reconcile(stack, **options):
    return ReconcileRun(stack.settings, LivePlan(grace=timedelta(0), write_report=False, **options)).execute()


def test_removing_the_bad_roles_delete_markers_brings_every_object_back_and_keeps_earlier_deletions(
    stack, capsys
) -> None:
    docs = processed_stage(stack, docs=8, seed=43)
    s3, raw, processed = stack.s3(), stack.settings.store.raw_bucket, stack.settings.store.processed_bucket
    # A user deleted one upload earlier; the nightly repair wrote its tombstone.
    gone = docs[0]
    s3.delete_object(Bucket=raw, Key=layout.raw_key(gone.user_id, gone.document_id, gone.filename))
    _reconcile(stack, repair=True)
    assert _reconcile(stack).summary.totalFindings == 0
    objects = {b: stack.keys(b) for b in (raw, processed)}
    time.sleep(1.1)  # S3 stamps versions to the second
    since = layout.utc_now()

    # The bad role deletes everything it can list (plain deletes: delete markers on top).
    for bucket, keys in objects.items():
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys]})
    assert not stack.keys(raw) and not stack.keys(processed)
    assert _reconcile(stack).summary.totalFindings > 0

    assert undelete.main(["--bucket", "raw", "--since", layout.format_ts(since), "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["markersFound"] == len(objects[raw])
    assert not stack.keys(raw)  # a dry run removes nothing
    for purpose in ("raw", "processed"):
        assert undelete.main(["--bucket", purpose, "--since", layout.format_ts(since)]) == 0
        bucket = stack.settings.store.bucket_names()[purpose]
        assert json.loads(capsys.readouterr().out)["removed"] == len(objects[bucket])
    assert {b: stack.keys(b) for b in (raw, processed)} == objects  # the earlier deletion stays
    assert _reconcile(stack, deep=True).summary.totalFindings == 0
    statuses = {i.documentId: i.status for i in stack.items()}
    assert statuses[gone.document_id] == Status.DELETED
    # Rerunning finds nothing more to remove.
    assert undelete.main(["--bucket", "raw", "--since", layout.format_ts(since)]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] == 0


def test_an_until_before_since_is_refused(stack, capsys) -> None:
    assert undelete.main(["--bucket", "raw", "--since", "2026-10-02T00:00:00Z", "--until", "2026-10-01T00:00:00Z"]) == 2
    assert "is before --since" in capsys.readouterr().err
