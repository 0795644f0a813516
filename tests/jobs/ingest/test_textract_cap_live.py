"""The Textract page cap of a night, and the night's estimated cost in the run summary.

Live local stack (S3, DynamoDB, SQS); Textract stubbed with botocore's Stubber (no emulator), as
in test_textract_path.py. A night over the cap leaves the rest in the queue, neither failed nor
counted as an attempt, and the next night's drain processes it.
"""

from __future__ import annotations

import json
import random
import threading
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY, Stubber

from jobs.contract import DocumentFormat, Status, layout
from jobs.demo.corpus import pdf
from jobs.ingest.costs import estimate
from jobs.ingest.pages import PageBudget, page_count
from jobs.ingest.plans import BackfillPlan, DrainPlan
from jobs.ingest.run import IngestRun

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def queued(stack) -> int:
    sqs = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    attrs = sqs.get_queue_attributes(
        QueueUrl=stack.settings.store.arrivals_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])


TONIGHT = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)


def night(stack, client, response: dict, cap: int, scheduled: datetime = TONIGHT):
    settings = stack.settings.changed(ocr_engine="textract", textract_max_pages=cap, scheduled_time=scheduled)
    with Stubber(client) as stub:
        stub.add_response("analyze_expense", response, {"Document": ANY})
        summary = IngestRun(settings, DrainPlan(idle_seconds=1), textract=client).execute()
        stub.assert_no_pending_responses()
    return summary


def test_a_night_over_the_page_cap_leaves_the_rest_queued_for_the_next_night(
    stack, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_TEXTRACT", "http://127.0.0.1:9")  # never reached: stubbed
    client = boto3.client("textract", region_name="us-east-1")
    response = json.loads((corpus / "textract" / "invoice-expense-response.json").read_text())
    for doc in ("scan1", "scan2"):
        stack.s3().put_object(
            Bucket=stack.settings.store.raw_bucket, Key=layout.raw_key("u1", doc, "scan.png"), Body=PNG
        )

    first = night(stack, client, response, cap=1)  # one page: one of the two scans
    assert first.outcome == "completed" and first.processed == 1
    assert first.textractPages == 1 and first.textractPageCap == 1
    assert first.deferredForPageCap == 1 and first.failures == []
    (deferred,) = first.deferredForPageCapDocuments
    assert "cap of 1" in deferred.reason
    assert queued(stack) == 1  # its message stays in the queue, not deleted
    waiting = next(i for i in stack.items() if i.rawS3Uri.endswith(deferred.key))
    assert waiting.status == Status.PROCESSING and waiting.attempts == 0  # handed back: no attempt spent
    assert waiting.leaseExpiresAt is not None and waiting.leaseExpiresAt <= layout.utc_now()

    second = night(stack, client, response, cap=1, scheduled=TONIGHT + timedelta(days=1))
    assert second.processed == 1 and second.deferredForPageCap == 0 and second.textractPages == 1
    assert second.textractNight == date(2026, 3, 3) and second.textractNightPages == 1
    assert queued(stack) == 0
    assert {i.status for i in stack.items()} == {Status.REVIEW_REQUIRED}  # both read by Textract

    cost = second.estimatedCost
    assert cost is not None and cost.textractPages == 1
    assert cost.usd["textract"] == Decimal("0.010000")
    assert cost.requests["s3Tier2"] >= 1 and cost.requests["s3Tier1"] >= 1  # the GET, the result.json PUT
    # The claim and the finish (4 units), and the night's page counter (1).
    assert cost.requests["sqs"] >= 2 and cost.requests["dynamodbWriteUnits"] == 5
    assert cost.fargateMinutes >= 0 and cost.usd["total"] == sum(v for k, v in cost.usd.items() if k != "total")


def test_pages_are_counted_before_the_call_and_the_cap_is_never_passed() -> None:
    assert page_count(PNG, DocumentFormat.IMAGE) == 1
    assert page_count(pdf(None), DocumentFormat.PDF) >= 1
    assert page_count(b"%PDF-1.7 broken", DocumentFormat.PDF) == 1  # Textract bills at least one
    budget = PageBudget(5)
    assert budget.reserve(3) and not budget.reserve(3) and budget.reserve(2)  # a smaller one still fits
    assert budget.spent == 5 and not budget.reserve(1)
    unlimited = PageBudget(None)
    assert unlimited.reserve(10_000) and unlimited.spent == 10_000


def test_the_estimate_prices_each_kind_of_request_once() -> None:
    calls = {
        "s3.GetObject": {"calls": 1000},
        "s3.PutObject": {"calls": 1000},
        "s3.ListObjectsV2": {"calls": 0},
        "s3.DeleteObjects": {"calls": 7},  # free
        "sqs.ReceiveMessage": {"calls": 105},
        "sqs.DeleteMessageBatch": {"calls": 102},
        "dynamodb.TransactWrite.claim": {"calls": 40},
        "dynamodb.GetItem": {"calls": 10},
        "textract.AnalyzeExpense": {"calls": 3},  # priced by its pages
    }
    cost = estimate(calls, decided=1000, claimed=1000, textract_pages=100, seconds=3600)
    assert cost.requests == {
        "s3Tier1": 1000,
        "s3Tier2": 1000,
        "sqs": 207,
        "dynamodbWriteUnits": 4000,
        "dynamodbReadUnits": 1010,
    }
    assert cost.usd == {
        "s3": Decimal("0.005400"),
        "sqs": Decimal("0.000083"),
        "dynamodb": Decimal("0.002626"),
        "textract": Decimal("1.000000"),
        "fargate": Decimal("0.049370"),
        "total": Decimal("1.057479"),
    }
    assert cost.fargateMinutes == Decimal("60.00")


class _Textract:
    """A thread-safe stand-in for the Textract client (no emulator; the Stubber answers one caller
    in a fixed order): every AnalyzeExpense gets the recorded response, and is counted.
    """

    def __init__(self, response: dict) -> None:
        self._response, self._lock, self.calls = response, threading.Lock(), 0

    def analyze_expense(self, **_: object) -> dict:
        with self._lock:
            self.calls += 1
        return self._response


def test_the_cap_is_one_budget_for_every_task_of_the_night(stack, corpus: Path, monkeypatch) -> None:
    """Four tasks drain one queue at once (the schedule's ingestTasks), then a manual backfill and
    a scheduler retry of the same night: together they spend the night's cap once, not once each.
    """
    monkeypatch.setenv("AWS_ENDPOINT_URL_TEXTRACT", "http://127.0.0.1:9")  # never reached
    response = json.loads((corpus / "textract" / "invoice-expense-response.json").read_text())
    scans, cap = 12, 5
    for n in range(scans):
        stack.s3().put_object(
            Bucket=stack.settings.store.raw_bucket, Key=layout.raw_key("u1", f"s{n}", "s.png"), Body=PNG
        )
    today = layout.utc_now().date()  # a manual run's night is the day it runs (the stack's zone: UTC here)
    tonight = datetime.combine(today, time(1, 0), UTC)
    settings = stack.settings.changed(ocr_engine="textract", textract_max_pages=cap, scheduled_time=tonight)
    textract = _Textract(response)
    runs = [IngestRun(settings, DrainPlan(idle_seconds=1), textract=textract) for _ in range(4)]
    summaries: list = [None] * len(runs)

    def task(i: int) -> None:
        summaries[i] = runs[i].execute()

    threads = [threading.Thread(target=task, args=(i,)) for i in range(len(runs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert all(s is not None and s.outcome == "completed" for s in summaries), summaries
    assert sum(s.textractPages for s in summaries) == textract.calls == cap  # one cap for the four
    assert sum(s.processed for s in summaries) == cap and not [s for s in summaries if s.failures]
    assert {s.textractNight for s in summaries} == {today}
    assert queued(stack) == scans - cap  # the rest waits for the next night, unfailed

    # A manual backfill the same day (no scheduled time) and a scheduler retry of the night: the
    # night's cap is spent, so they defer what needs Textract and fail nothing.
    manual = stack.settings.changed(ocr_engine="textract", textract_max_pages=cap)
    backfill = IngestRun(manual, BackfillPlan(), textract=textract).execute()
    retry = IngestRun(settings, DrainPlan(idle_seconds=1), textract=textract).execute()
    for late in (backfill, retry):
        assert late.textractPages == 0 and late.deferredForPageCap >= 1 and late.failures == []
        assert late.textractNight == today
    assert textract.calls == cap
    (counter,) = [i for i in stack.raw_items() if i[layout.PK_ATTR] == layout.textract_pages_pk()]
    assert counter[layout.SK_ATTR] == f"NIGHT#{today.isoformat()}"
    assert counter["pages"] == cap and counter["pageCap"] == cap and counter[layout.TTL_ATTR] > 0

    # The next night has a budget of its own.
    tomorrow = settings.changed(scheduled_time=tonight + timedelta(days=1))
    next_night = IngestRun(tomorrow, DrainPlan(idle_seconds=1), textract=textract).execute()
    assert next_night.textractPages == cap and next_night.textractNight == today + timedelta(days=1)
    assert queued(stack) == scans - 2 * cap


def test_concurrent_reservations_on_the_live_table_never_pass_the_cap(stack) -> None:
    """Many threads of many tasks reserve 1-3 pages at once from one night's counter: what was
    granted adds up to the counter, which never passes the cap and ends full to within a reservation.
    """
    from jobs.observability import CallMetrics
    from jobs.runtime.stores import document_table

    cap, tasks, threads_per_task = 60, 4, 6
    budgets = [
        PageBudget(cap, night=date(2026, 3, 2), counter=document_table(stack.settings, CallMetrics()))
        for _ in range(tasks)
    ]
    granted: list[int] = []
    lock = threading.Lock()

    def worker(budget: PageBudget, seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(12):
            pages = rng.randint(1, 3)
            if budget.reserve(pages):
                with lock:
                    granted.append(pages)

    threads = [
        threading.Thread(target=worker, args=(budget, t * 100 + i))
        for t, budget in enumerate(budgets)
        for i in range(threads_per_task)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    counter = next(i for i in stack.raw_items() if i[layout.PK_ATTR] == layout.textract_pages_pk())
    assert sum(granted) == counter["pages"] == sum(b.spent for b in budgets)
    assert cap - 2 <= counter["pages"] <= cap  # 288 asked for: full, and never past the cap
    assert max(b.night_spent or 0 for b in budgets) == counter["pages"]


def test_a_refused_reservation_takes_nothing_and_no_cap_asks_no_counter() -> None:
    asked: list[int] = []

    class Full:
        def reserve_textract_pages(self, night: date, pages: int, cap: int, expires_at: int) -> int | None:
            asked.append(pages)
            return None

    shared = PageBudget(2, night=date(2026, 3, 2), counter=Full())
    assert not shared.reserve(1) and shared.spent == 0 and asked == [1]
    assert PageBudget(None, night=date(2026, 3, 2), counter=Full()).reserve(5)  # no cap: no counter call
    assert asked == [1]


def test_the_night_is_the_schedule_zones_date() -> None:
    from jobs.ingest.pages import counter_expiry, night_of

    # 01:00 in Berlin is the previous evening in UTC in summer, not in winter: the local date counts.
    assert night_of(datetime(2026, 7, 1, 23, 0, tzinfo=UTC), "Europe/Berlin") == date(2026, 7, 2)
    assert night_of(datetime(2026, 1, 2, 0, 0, tzinfo=UTC), "Europe/Berlin") == date(2026, 1, 2)
    assert night_of(datetime(2026, 7, 1, 23, 0, tzinfo=UTC), "UTC") == date(2026, 7, 1)
    assert counter_expiry(date(2026, 3, 2)) == int(datetime(2026, 3, 9, tzinfo=UTC).timestamp())


def test_the_nights_counter_is_no_document_to_the_reconcile(stack, corpus: Path) -> None:
    """The counter lives in the documents table, beside no document: the reconcile reports nothing of it."""
    from datetime import timedelta as _td

    from jobs.observability import CallMetrics
    from jobs.reconcile.plans import LivePlan
    from jobs.reconcile.run import ReconcileRun
    from jobs.runtime.stores import document_table

    path = sorted((corpus / "einvoice" / "ubl").glob("*.xml"))[0]
    stack.s3().put_object(
        Bucket=stack.settings.store.raw_bucket, Key=layout.raw_key("u1", "d1", path.name), Body=path.read_bytes()
    )
    assert IngestRun(stack.settings, BackfillPlan()).execute().processed == 1
    table = document_table(stack.settings, CallMetrics())
    assert table.reserve_textract_pages(date(2026, 3, 2), 3, 10, 0) == 3  # expired long ago: TTL-due too
    assert table.reserve_textract_pages(date(2026, 3, 3), 11, 10, 0) is None  # never fits: nothing written
    outcome = ReconcileRun(stack.settings, LivePlan(grace=_td(0))).execute()
    assert outcome.findings.height == 0, outcome.findings
    assert outcome.exit_code == 0
