"""`python -m jobs restore-archived`: one JSON object on success, one clear line and exit 2 for
a document that does not exist (the live local stack, the command run as an operator would).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jobs.contract import layout
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from tests.jobs.lifecycle.lifecycle_helpers import invoice, put_raw

REPO_ROOT = Path(__file__).resolve().parents[3]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobs", "restore-archived", *args],
        env=dict(os.environ),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_unknown_document_exits_2_with_one_line(stack) -> None:
    done = run("--user", "u1", "--document", "nope")
    assert done.returncode == 2 and "no document 'nope' of user 'u1'" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_archived_raw_upload_is_restored_and_reported(stack) -> None:
    s, s3 = stack.settings, stack.s3()
    key = put_raw(stack, "u1", "d1", invoice())
    IngestRun(s, BackfillPlan()).execute()
    s3.copy_object(
        Bucket=s.store.raw_bucket,
        Key=key,
        CopySource={"Bucket": s.store.raw_bucket, "Key": key},
        StorageClass="GLACIER",
    )

    done = run("--user", "u1", "--doc", "d1", "--days", "3", "--tier", "Bulk")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    raw, result = report["objects"]
    assert raw["uri"] == layout.s3_uri(s.store.raw_bucket, key) and raw["storageClass"] == "GLACIER"
    assert raw["restoreRequested"] and raw["state"] == "restored" and raw["restoredUntil"]
    assert result["state"] == "readable" and not result["restoreRequested"]
    assert not report["requeued"] and report["status"] == "PROCESSED"  # nothing waits for it
