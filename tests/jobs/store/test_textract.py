"""The Textract store adapter against botocore's Stubber fed the real responses in tests/data/corpus/textract.

There is no Textract emulator; the Stubber answers like the service, errors included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from botocore.stub import Stubber

from jobs.contract.status import Status
from jobs.errors import (
    InfrastructureError,
    TextractDocumentRejectedError,
    TextractJobFailedError,
    TextractJobTimeoutError,
    TextractThrottledError,
    TextractUnavailableError,
)
from jobs.extract import ExtractionSettings, extract_document
from jobs.settings import JobSettings
from jobs.store.clients import textract_client
from jobs.store.textract import RateLimiter, TextractOcr

TEXTRACT = Path(__file__).resolve().parents[2] / "data" / "corpus" / "textract"

BUCKET, KEY = "docuflow-raw", "u/doc/invoice.pdf"
LOCATION = {"S3Object": {"Bucket": BUCKET, "Name": KEY}}


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def real(name: str) -> dict[str, Any]:
    return json.loads((TEXTRACT / name).read_text())


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client(
        "textract", region_name="eu-central-1", aws_access_key_id="test", aws_secret_access_key="test"
    )
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


def ocr(client: Any, fake_time: FakeTime, **options: Any) -> TextractOcr:
    return TextractOcr(
        client, max_tps=5, poll_interval_s=2, poll_timeout_s=60, sleep=fake_time.sleep, clock=fake_time.clock, **options
    )


def throttled(code: str) -> dict[str, Any]:
    return {"service_error_code": code, "service_message": "slow down", "http_status_code": 400}


def test_single_image_uses_synchronous_analyze_expense(
    corpus: Path, stubbed: tuple[Any, Stubber], fake_time: FakeTime
) -> None:
    client, stubber = stubbed
    stubber.add_response("analyze_expense", real("invoice-expense-response.json"), {"Document": LOCATION})
    response = ocr(client, fake_time).analyze_s3_object(BUCKET, KEY, is_pdf=False)
    outcome = extract_document(json.dumps(response).encode(), "invoice.png", ExtractionSettings())
    assert outcome.invoice is not None
    assert (outcome.invoice.invoiceNumber, str(outcome.invoice.totalAmount)) == ("123PQR456", "6231.09")
    assert outcome.validation.status is Status.REVIEW_REQUIRED  # no vendor in this real response


def test_pdf_runs_async_polls_and_merges_next_token_pages(
    corpus: Path, stubbed: tuple[Any, Stubber], fake_time: FakeTime
) -> None:
    client, stubber = stubbed
    full = real("analyzeExpenseResponse-multipage.json")
    first_doc, second_doc = full["ExpenseDocuments"]
    stubber.add_response("start_expense_analysis", {"JobId": "job-1"}, {"DocumentLocation": LOCATION})
    stubber.add_response("get_expense_analysis", {"JobStatus": "IN_PROGRESS"}, {"JobId": "job-1"})
    stubber.add_response(
        "get_expense_analysis", {**full, "ExpenseDocuments": [first_doc], "NextToken": "t2"}, {"JobId": "job-1"}
    )
    stubber.add_response(
        "get_expense_analysis", {**full, "ExpenseDocuments": [second_doc]}, {"JobId": "job-1", "NextToken": "t2"}
    )
    response = ocr(client, fake_time).analyze_s3_object(BUCKET, KEY, is_pdf=True)
    assert response["ExpenseDocuments"] == full["ExpenseDocuments"]
    assert "NextToken" not in response and response["JobId"] == "job-1"
    assert 2 in fake_time.sleeps  # one poll interval while IN_PROGRESS
    merged = extract_document(json.dumps(response).encode(), "invoice.pdf", ExtractionSettings())
    direct = extract_document(json.dumps(full).encode(), "invoice.pdf", ExtractionSettings())
    assert merged.invoice == direct.invoice
    assert merged.invoice is not None and str(merged.invoice.totalAmount) == "5715.00"


def test_failed_job_raises_a_clear_error(stubbed: tuple[Any, Stubber], fake_time: FakeTime) -> None:
    client, stubber = stubbed
    stubber.add_response("start_expense_analysis", {"JobId": "job-2"})
    stubber.add_response("get_expense_analysis", {"JobStatus": "FAILED", "StatusMessage": "UNSUPPORTED_DOCUMENT"})
    with pytest.raises(TextractJobFailedError, match="job-2 failed: UNSUPPORTED_DOCUMENT"):
        ocr(client, fake_time).analyze_s3_object(BUCKET, KEY, is_pdf=True)


def test_job_still_running_after_the_poll_budget_times_out(stubbed: tuple[Any, Stubber], fake_time: FakeTime) -> None:
    client, stubber = stubbed
    stubber.add_response("start_expense_analysis", {"JobId": "job-3"})
    for _ in range(31):  # 60 s budget, 2 s interval
        stubber.add_response("get_expense_analysis", {"JobStatus": "IN_PROGRESS"})
    with pytest.raises(TextractJobTimeoutError):
        ocr(client, fake_time).analyze_s3_object(BUCKET, KEY, is_pdf=True)


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "ThrottlingException"])
def test_throttling_is_retried_with_backoff(
    corpus: Path, stubbed: tuple[Any, Stubber], fake_time: FakeTime, code: str
) -> None:
    client, stubber = stubbed
    stubber.add_client_error("analyze_expense", **throttled(code))
    stubber.add_client_error("analyze_expense", **throttled(code))
    stubber.add_response("analyze_expense", real("test_trp2_expense_sample2.json"))
    response = ocr(client, fake_time).analyze_s3_object(BUCKET, KEY, is_pdf=False)
    assert response["ExpenseDocuments"]
    assert len(fake_time.sleeps) >= 2


def test_throttling_gives_up_after_max_attempts_as_a_domain_error(
    stubbed: tuple[Any, Stubber], fake_time: FakeTime
) -> None:
    client, stubber = stubbed
    for _ in range(3):
        stubber.add_client_error("analyze_expense", **throttled("ThrottlingException"))
    with pytest.raises(TextractThrottledError, match="after 3 attempts") as raised:
        ocr(client, fake_time, max_attempts=3).analyze_s3_object(BUCKET, KEY, is_pdf=False)
    assert isinstance(raised.value.__cause__, ClientError)  # chained, never swallowed
    assert isinstance(raised.value, InfrastructureError)


def test_every_retry_waits_for_its_own_token(stubbed: tuple[Any, Stubber], fake_time: FakeTime) -> None:
    client, stubber = stubbed
    for _ in range(3):
        stubber.add_client_error("analyze_expense", **throttled("ThrottlingException"))
    stubber.add_response("analyze_expense", real("test_trp2_expense_sample2.json"))
    # No backoff at all: whatever time passes is the rate limiter pacing the four attempts.
    limited = TextractOcr(client, max_tps=1, backoff_base_s=0, sleep=fake_time.sleep, clock=fake_time.clock)
    limited.analyze_s3_object(BUCKET, KEY, is_pdf=False)
    assert fake_time.now == pytest.approx(3.0)  # the first token is free, then one per second


def test_server_and_connection_errors_are_retried_in_the_same_layer(
    stubbed: tuple[Any, Stubber], fake_time: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, stubber = stubbed
    stubber.add_client_error(
        "analyze_expense", service_error_code="InternalServerError", service_message="oops", http_status_code=500
    )
    stubber.add_response("analyze_expense", real("test_trp2_expense_sample2.json"))
    assert ocr(client, fake_time).analyze_s3_object(BUCKET, KEY, is_pdf=False)["ExpenseDocuments"]
    calls = 0

    def unreachable(**_: Any) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        raise EndpointConnectionError(endpoint_url="https://textract.invalid")

    monkeypatch.setattr(client, "analyze_expense", unreachable)
    with pytest.raises(TextractUnavailableError, match="unreachable after 4 attempts"):
        ocr(client, fake_time, max_attempts=4).analyze_s3_object(BUCKET, KEY, is_pdf=False)
    assert calls == 4


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("InvalidS3ObjectException", TextractDocumentRejectedError),
        ("UnsupportedDocumentException", TextractDocumentRejectedError),
        ("AccessDeniedException", TextractUnavailableError),
    ],
)
def test_other_errors_are_translated_once_without_a_retry(
    stubbed: tuple[Any, Stubber], fake_time: FakeTime, code: str, error: type[Exception]
) -> None:
    client, stubber = stubbed
    stubber.add_client_error("analyze_expense", service_error_code=code, service_message="no", http_status_code=400)
    with pytest.raises(error, match=code) as raised:
        ocr(client, fake_time).analyze_s3_object(BUCKET, KEY, is_pdf=False)
    assert isinstance(raised.value.__cause__, ClientError)
    assert fake_time.sleeps == []


def test_the_client_leaves_retries_to_the_adapter() -> None:
    client = textract_client(JobSettings(), region_name="eu-central-1")
    assert client.meta.config.retries["total_max_attempts"] == 1


def test_rate_limiter_keeps_calls_below_the_configured_tps(fake_time: FakeTime) -> None:
    limiter = RateLimiter(2.0, clock=fake_time.clock, sleep=fake_time.sleep)
    for _ in range(11):
        limiter.acquire()
    # One call from the initial token, then ten more at two per second.
    assert fake_time.now == pytest.approx(5.0)
