"""`make demo`: the nightly flow end to end on a fresh embedded stack, through the real CLI.

local stack up → seed a mixed corpus into raw/, a few invoices twice (its notifications fill the
arrival queue) → ingest (drains the queue; the second uploads are flagged as duplicates) → the
change log delivered (the stack's stand-in of Pipe + Firehose) → reconcile, the change log's
completeness included → run summary, a dashboard query, one document's audit timeline → the
review queue worked through (claim, correct, settle; jobs.demo.review) → the table's export (the
local stand-in for AWS's) and a restore drill
from it. Each step is the same `python -m jobs …` command an operator would type.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jobs.demo.review import work_the_queue
from jobs.local import stack
from jobs.settings import JobSettings

USERS, DOCS = 5, 200
DUPLICATES = 3  # good invoices uploaded a second time under new documentIds
IDLE_SECONDS = "2"


def _step(title: str, *args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    print(f"\n=== {title}\n$ python -m jobs {' '.join(args)}", flush=True)
    done = subprocess.run([sys.executable, "-m", "jobs", *args], env=env, stdout=subprocess.PIPE, text=True)
    if check and done.returncode != 0:
        raise SystemExit(f"step failed with exit code {done.returncode}: {title}")
    return done


def _reconcile(env: dict[str, str]) -> None:
    """The audit report, the change log's completeness included (delivered first, as Firehose
    would have by the morning).
    """
    flushed = stack.flush_audit()
    print(f"\n=== change log delivered by the local stand-in of Pipe + Firehose: {json.dumps(flushed['stages'])}")
    reconcile = _step(
        "reconciliation (audit report, change log included)",
        "reconcile",
        "live",
        "--grace",
        "0s",
        "--audit-log",
        env=env,
        check=False,
    )
    print(reconcile.stdout[-3000:])
    if reconcile.returncode not in (0, 1):
        raise SystemExit(f"reconcile failed with exit code {reconcile.returncode}")


def _timeline(document: dict[str, str], env: dict[str, str]) -> None:
    """One document's audit timeline from the change log (who changed it, when, what)."""
    timeline = _step(
        "audit: one document's timeline (who changed it, when, what)",
        "audit",
        "history",
        "--user",
        document["userId"],
        "--doc",
        document["documentId"],
        env=env,
    )
    print(timeline.stdout)


def _restore_drill(env: dict[str, str]) -> None:
    """Back the table up as AWS would (an export), then prove the backup restores and reconciles."""
    exported = _step("table export (local stand-in for ExportTableToPointInTime)", "local", "export-table", env=env)
    print(exported.stdout)
    drill = _step("restore drill: the export into a new table, reconciled", "drill", env=env, check=False)
    if drill.returncode not in (0, 1):
        raise SystemExit(f"drill failed with exit code {drill.returncode}")
    report = json.loads(drill.stdout)
    print(json.dumps({k: report[k] for k in ("restoredTable", "itemCount", "rpoSeconds", "rtoSeconds", "outcome")}))


def _seed(env: dict[str, str]) -> None:
    """A mixed corpus into raw/, a few invoices twice; the uploads' notifications fill the queue."""
    seeded = _step(
        "seed demo invoices into raw/",
        "demo",
        "seed",
        "--users",
        str(USERS),
        "--docs",
        str(DOCS),
        "--ocr-ratio",
        "0.05",
        "--duplicates",
        str(DUPLICATES),
        env=env,
    )
    print(seeded.stdout)


SHOWN = (
    "runId",
    "mode",
    "outcome",
    "seconds",
    "processed",
    "documentsPerSecond",
    "statuses",
    "formats",
    "messages",
    "queueWaiting",
    "deadLetterQueue",
    "deadLetterCount",
    "invalidKeyCount",
    "duplicateCount",
)


def _ingest(env: dict[str, str]) -> None:
    """The nightly drain, and what its run summary says."""
    # The drain ends once the queue stays empty for IDLE_SECONDS (20 s by default on AWS).
    run = _step("nightly ingest: drain the arrival queue", "ingest", "drain", "--idle-seconds", IDLE_SECONDS, env=env)
    summary = json.loads(run.stdout)
    print(json.dumps({k: summary[k] for k in SHOWN}, indent=2))
    if summary["failures"]:
        print("failed documents (first 5):")
        for failure in summary["failures"][:5]:
            print(f"  {failure['key']}: {failure['reason'][:100]}")


def main() -> int:
    # A fresh stack every time: both servers keep their data in memory, so a restart is empty.
    stack.down()
    endpoints, settings, info = stack.up(JobSettings.from_env())
    env = {**os.environ, **stack.job_env(endpoints, settings)}
    print(
        f"=== local stack up in {info['seconds']}s: DynamoDB Local {endpoints.dynamodb}, S3 and SQS {endpoints.s3} "
        f"(data in memory; arrival queue {settings.store.arrivals_queue_url})"
    )
    _seed(env)
    _ingest(env)
    _reconcile(env)
    user = _step("dashboard: one user's documents", "documents", "list", "--user", "user-0000", "--limit", "3", env=env)
    print(user.stdout)
    _timeline(json.loads(user.stdout)["items"][0], env)
    work_the_queue(_step, env)
    _restore_drill(env)
    print(
        'The stack keeps running: `eval "$(.venv/bin/python -m jobs local up)"` configures a shell; '
        "`make local-down` stops it."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
