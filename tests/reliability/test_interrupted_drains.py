"""The arrival queue across a dry run and interrupted nights (issue 27's "done when").

A hundred uploads, then a dry run, then five runs cut short the ways a night can be (a
--max-docs budget twice, a --max-minutes budget, a stop while documents are in flight, a stop
before the first claim), then a full drain: every document is processed exactly once, nothing
reaches the dead-letter queue, and reconcile is clean. Before, a dry run alone sent every
message to the dead-letter queue, and five budgeted runs did the same to messages nobody had
worked on.
"""

from __future__ import annotations

import threading
from collections import Counter

import boto3
from reliability_helpers import assert_clean

from jobs.contract import Status
from jobs.contract.status import TERMINAL
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.errors import RunStoppedError
from jobs.ingest.plans import DrainPlan
from jobs.ingest.run import IngestRun
from jobs.ingest.summary import RunSummary

DOCS = 100


def _run(stack, stop_after: int | None = None, **options: object) -> RunSummary | None:
    """One drain; `stop_after`: stopped (as by SIGTERM) once that many documents finished."""
    finished: list[object] = []
    run: IngestRun

    def stop_when_due(result: object) -> None:
        finished.append(result)
        if stop_after is not None and len(finished) == stop_after:
            threading.Thread(target=run.stop, args=("stopped by SIGTERM",)).start()

    run = IngestRun(stack.settings, DrainPlan(idle_seconds=1, **options), on_document=stop_when_due)  # type: ignore[arg-type]
    if stop_after == 0:
        threading.Timer(0.05, run.stop, args=("stopped by SIGTERM",)).start()
    try:
        return run.execute()
    except RunStoppedError:
        return None


def _receive_counts(stack) -> list[int]:
    """How often each waiting message was received so far (this look, which hides each message
    once and then shows them all again, not counted).
    """
    sqs, url = boto3.client("sqs", endpoint_url=stack.endpoints.sqs), stack.settings.store.arrivals_queue_url
    seen: dict[str, tuple[int, str]] = {}
    while batch := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["ApproximateReceiveCount"]
    ).get("Messages", []):
        seen |= {m["MessageId"]: (int(m["Attributes"]["ApproximateReceiveCount"]), m["ReceiptHandle"]) for m in batch}
    handles = [handle for _, handle in seen.values()]
    for start in range(0, len(handles), 10):
        entries = [
            {"Id": str(n), "ReceiptHandle": h, "VisibilityTimeout": 0}
            for n, h in enumerate(handles[start : start + 10])
        ]
        sqs.change_message_visibility_batch(QueueUrl=url, Entries=entries)
    return [count - 1 for count, _ in seen.values()]


def test_a_dry_run_and_five_interrupted_runs_then_a_drain_process_each_document_once(stack) -> None:
    upload(stack.s3(), stack.settings.store.raw_bucket, generate(5, DOCS, bad_ratio=0.05, seed=71))

    dry = _run(stack, dry_run=True)
    assert dry is not None and sum(dry.decisions.values()) == DOCS and stack.items() == []
    interrupted = [
        _run(stack, max_docs=5),
        _run(stack, max_docs=5),
        _run(stack, max_seconds=0.05),
        _run(stack, stop_after=3),
        _run(stack, stop_after=0),
    ]
    assert [s.processed if s else None for s in interrupted[:2]] == [5, 5] and interrupted[3:] == [None, None]
    waiting = _receive_counts(stack)  # every unfinished document's message is still queued...
    assert len(waiting) == DOCS - sum(i.status in TERMINAL for i in stack.items())
    assert max(waiting) <= 1 + len(interrupted)  # ...each received once at most by each run
    full = _run(stack)

    assert full is not None and full.outcome == "completed" and full.deadLetterQueue == 0
    processed = sum(s.processed for s in (*interrupted, full) if s is not None)
    assert processed <= DOCS  # the stopped runs' summaries are not returned: counted on the stream
    finishes = Counter(c.sort_key for c in stack.stream_changes() if c.new_status in TERMINAL)
    assert len(finishes) == DOCS and set(finishes.values()) == {1}, finishes.most_common(3)
    assert all(i.status in TERMINAL and i.status != Status.DELETED for i in stack.items())
    sqs = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    depth = sqs.get_queue_attributes(
        QueueUrl=stack.settings.store.arrivals_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert set(depth.values()) == {"0"}
    assert_clean(stack, DOCS)
