"""The Textract page cap of a night, and the night's estimated cost in the run summary.

Live local stack (S3, DynamoDB, SQS); Textract stubbed with botocore's Stubber (no emulator), as
in test_textract_path.py. A night over the cap leaves the rest in the queue, neither failed nor
counted as an attempt, and the next night's drain processes it.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY, Stubber

from jobs.contract import DocumentFormat, Status, layout
from jobs.demo.corpus import pdf
from jobs.ingest.costs import estimate
from jobs.ingest.pages import PageBudget, page_count
from jobs.ingest.run import IngestOptions, IngestRun

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def queued(stack) -> int:
    sqs = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    attrs = sqs.get_queue_attributes(
        QueueUrl=stack.settings.arrivals_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])


def night(stack, client, response: dict, cap: int):
    settings = stack.settings.model_copy(update={"ocr_engine": "textract", "textract_max_pages": cap})
    with Stubber(client) as stub:
        stub.add_response("analyze_expense", response, {"Document": ANY})
        summary = IngestRun(settings, IngestOptions(idle_seconds=1), textract=client).execute()
        stub.assert_no_pending_responses()
    return summary


def test_a_night_over_the_page_cap_leaves_the_rest_queued_for_the_next_night(
    stack, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_TEXTRACT", "http://127.0.0.1:9")  # never reached: stubbed
    client = boto3.client("textract", region_name="us-east-1")
    response = json.loads((corpus / "textract" / "invoice-expense-response.json").read_text())
    for doc in ("scan1", "scan2"):
        stack.s3().put_object(Bucket=stack.settings.raw_bucket, Key=layout.raw_key("u1", doc, "scan.png"), Body=PNG)

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

    second = night(stack, client, response, cap=1)
    assert second.processed == 1 and second.deferredForPageCap == 0 and second.textractPages == 1
    assert queued(stack) == 0
    assert {i.status for i in stack.items()} == {Status.REVIEW_REQUIRED}  # both read by Textract

    cost = second.estimatedCost
    assert cost is not None and cost.textractPages == 1
    assert cost.usd["textract"] == Decimal("0.010000")
    assert cost.requests["s3Tier2"] >= 1 and cost.requests["s3Tier1"] >= 1  # the GET, the result.json PUT
    assert cost.requests["sqs"] >= 2 and cost.requests["dynamodbWriteUnits"] == 4
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
