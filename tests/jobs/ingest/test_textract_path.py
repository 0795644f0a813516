"""Scans through Amazon Textract inside the ingest: real S3 and DynamoDB servers, Textract stubbed.

There is no Textract emulator, so botocore's Stubber answers with real AnalyzeExpense responses
from the corpus; everything else is the live local stack.
"""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from jobs.contract import ResultDocument, Status, layout
from jobs.demo.corpus import pdf
from jobs.errors import SettingsError
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def _textract_run(stack, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_TEXTRACT", "http://127.0.0.1:9")  # never reached: stubbed
    client = boto3.client("textract", region_name="us-east-1")
    settings = stack.settings.changed(ocr_engine="textract")
    return client, lambda: IngestRun(settings, BackfillPlan(), textract=client).execute()


def test_a_scan_goes_to_textract_and_lands_with_its_response(stack, corpus: Path, monkeypatch) -> None:
    response = json.loads((corpus / "textract" / "invoice-expense-response.json").read_text())
    key = layout.raw_key("u1", "scan1", "scan.png")
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=PNG)
    client, run = _textract_run(stack, monkeypatch)
    with Stubber(client) as stub:
        stub.add_response(
            "analyze_expense",
            response,
            {"Document": {"S3Object": {"Bucket": stack.settings.store.raw_bucket, "Name": key}}},
        )
        summary = run()
        stub.assert_no_pending_responses()
    assert summary.processed == 1
    item = stack.items()[0]
    assert item.status == Status.REVIEW_REQUIRED and "MISSING_FIELD:vendorName" in item.reviewReasons
    assert item.invoiceNumber == "123PQR456" and str(item.totalAmount) == "6231.09"
    body = stack.s3().get_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key("u1", "scan1"))[
        "Body"
    ]
    result = ResultDocument.from_json_bytes(body.read())
    assert result.engine == "textract" and result.extraction["ExpenseDocuments"]


def test_an_image_only_pdf_uses_the_async_api_with_pagination(stack, corpus: Path, monkeypatch) -> None:
    pages = json.loads((corpus / "textract" / "analyzeExpenseResponse-multipage.json").read_text())
    documents = pages["ExpenseDocuments"]
    key = layout.raw_key("u1", "scan2", "scan.pdf")
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=pdf(None))
    client, run = _textract_run(stack, monkeypatch)
    location = {"S3Object": {"Bucket": stack.settings.store.raw_bucket, "Name": key}}
    with Stubber(client) as stub:
        stub.add_response("start_expense_analysis", {"JobId": "job-1"}, {"DocumentLocation": location})
        stub.add_response(
            "get_expense_analysis",
            {"JobStatus": "SUCCEEDED", "ExpenseDocuments": documents[:1], "NextToken": "t2"},
            {"JobId": "job-1"},
        )
        stub.add_response(
            "get_expense_analysis",
            {"JobStatus": "SUCCEEDED", "ExpenseDocuments": documents[1:]},
            {"JobId": "job-1", "NextToken": "t2"},
        )
        summary = run()
        stub.assert_no_pending_responses()
    assert summary.processed == 1
    item = stack.items()[0]
    assert item.invoiceNumber == "00000135" and item.status == Status.REVIEW_REQUIRED
    assert "MULTIPLE_DOCUMENTS" in item.reviewReasons


def test_a_failed_textract_job_fails_the_document_only(stack, monkeypatch) -> None:
    key = layout.raw_key("u1", "scan3", "scan.pdf")
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=pdf(None))
    client, run = _textract_run(stack, monkeypatch)
    with Stubber(client) as stub:
        stub.add_response("start_expense_analysis", {"JobId": "job-2"})
        stub.add_response("get_expense_analysis", {"JobStatus": "FAILED", "StatusMessage": "unsupported document"})
        summary = run()
    assert summary.outcome == "completed"
    item = stack.items()[0]
    assert item.status == Status.FAILED and item.failureCode == "NEEDS_OCR"
    assert "unsupported document" in (item.failureMessage or "")


def test_textract_is_refused_against_a_local_s3_without_a_textract_endpoint(stack) -> None:
    with pytest.raises(SettingsError, match="AWS_ENDPOINT_URL_TEXTRACT"):
        IngestRun(stack.settings.changed(ocr_engine="textract"), BackfillPlan())


def _numberless_text_pdf(*, as_recorded: bool = False) -> bytes:
    """A text-layer invoice without a number; `as_recorded`: the recorded Textract response's
    invoice (its date, currency and amounts), so the two readings agree where both read a value.
    """
    from datetime import date
    from decimal import Decimal

    from jobs.demo.corpus import DemoInvoice, Line, text_pdf

    if as_recorded:
        line = Line("Consulting", Decimal(1), Decimal("6169.40"), Decimal(1))
        return text_pdf(DemoInvoice("", date(2021, 1, 1), date(2021, 1, 31), None, "Buyer AG", "USD", (line,)))
    line = Line("Consulting", Decimal(2), Decimal("50.00"), Decimal(19))
    return text_pdf(DemoInvoice("", date(2026, 3, 1), date(2026, 3, 31), None, "Buyer AG", "EUR", (line,)))


@pytest.mark.parametrize("enabled", [True, False])
def test_a_text_layer_missing_header_fields_goes_to_textract_only_when_enabled(
    stack, corpus: Path, monkeypatch, enabled: bool
) -> None:
    key = layout.raw_key("u1", "plain1", "invoice.pdf")
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=_numberless_text_pdf())
    monkeypatch.setenv("AWS_ENDPOINT_URL_TEXTRACT", "http://127.0.0.1:9")  # never reached: stubbed
    client = boto3.client("textract", region_name="us-east-1")
    settings = stack.settings.changed(ocr_engine="textract", textract_fallback=enabled)
    pages = json.loads((corpus / "textract" / "invoice-expense-response.json").read_text())
    with Stubber(client) as stub:
        if enabled:
            stub.add_response("start_expense_analysis", {"JobId": "job-9"})
            stub.add_response(
                "get_expense_analysis", {"JobStatus": "SUCCEEDED", "ExpenseDocuments": pages["ExpenseDocuments"]}
            )
        summary = IngestRun(settings, BackfillPlan(), textract=client).execute()
        stub.assert_no_pending_responses()
    assert summary.calls.get("textract.start_expense_analysis", {}).get("calls", 0) == (1 if enabled else 0)
    item = stack.items()[0]
    # Textract's reading (invoice 123PQR456, no vendor) does not settle the document: the local one stays.
    assert item.status == Status.REVIEW_REQUIRED and item.invoiceNumber is None
    assert "MISSING_FIELD:invoiceNumber" in item.reviewReasons


def _clean_response(corpus: Path) -> dict:
    """The recorded response with the one field it lacks (VENDOR_NAME): a reading that is clean."""
    response = json.loads((corpus / "textract" / "invoice-expense-response.json").read_text())
    response["ExpenseDocuments"][0]["SummaryFields"].append(
        {
            "Type": {"Text": "VENDOR_NAME", "Confidence": 99.0},
            "ValueDetection": {"Text": "Lieferant GmbH", "Confidence": 99.0},
            "PageNumber": 1,
        }
    )
    return response


def _second_opinion_run(stack, monkeypatch, responses: list[dict], cap: int | None = None, *, agree: bool = True):
    key = layout.raw_key("u1", "plain1", "invoice.pdf")
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=_numberless_text_pdf(as_recorded=agree))
    monkeypatch.setenv("AWS_ENDPOINT_URL_TEXTRACT", "http://127.0.0.1:9")  # never reached: stubbed
    client = boto3.client("textract", region_name="us-east-1")
    settings = stack.settings.changed(ocr_engine="textract", textract_fallback=True, textract_max_pages=cap)
    with Stubber(client) as stub:
        for documents in responses:
            stub.add_response("start_expense_analysis", {"JobId": "job-7"})
            stub.add_response("get_expense_analysis", {"JobStatus": "SUCCEEDED", "ExpenseDocuments": documents})
        summary = IngestRun(settings, BackfillPlan(), textract=client).execute()
        stub.assert_no_pending_responses()
    body = stack.s3().get_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key("u1", "plain1"))
    return summary, stack.items()[0], ResultDocument.from_json_bytes(body["Body"].read())


def test_a_clean_textract_reading_settles_a_text_layer_pdf_and_result_json_says_so(
    stack, corpus: Path, monkeypatch
) -> None:
    summary, item, result = _second_opinion_run(
        stack, monkeypatch, [_clean_response(corpus)["ExpenseDocuments"]], cap=10
    )
    assert item.status == Status.PROCESSED and item.invoiceNumber == "123PQR456"
    assert item.vendorName == "Lieferant GmbH" and str(item.totalAmount) == "6231.09"
    assert result.engine == "textract" and result.extraction["ExpenseDocuments"]
    opinion = result.extraction["SecondOpinion"]
    assert opinion["used"] is True and opinion["winner"] == "textract"
    assert "MISSING_FIELD:invoiceNumber" in opinion["readings"]["pdf-text-layer"]["reasons"]
    # Its pages come from the night's cap like a scan's.
    assert summary.textractPages == 1 and summary.textractNightPages == 1


def test_a_clean_second_opinion_of_other_values_leaves_the_document_in_review(stack, corpus: Path, monkeypatch) -> None:
    # The text layer read 1 March 2026, EUR 119.00; Textract, cleanly, another invoice's values.
    _, item, result = _second_opinion_run(
        stack, monkeypatch, [_clean_response(corpus)["ExpenseDocuments"]], cap=10, agree=False
    )
    assert item.status == Status.REVIEW_REQUIRED and item.invoiceNumber is None and item.totalAmount == 119
    assert {"CONFLICTING_VALUES:invoiceDate", "CONFLICTING_VALUES:totalAmount"} <= set(item.reviewReasons)
    assert result.engine == "pdf-text-layer"
    opinion = result.extraction["SecondOpinion"]
    assert opinion["used"] is False and "other values" in opinion["reason"]


def test_a_second_opinion_that_is_not_clean_is_recorded_beside_the_local_reading(
    stack, corpus: Path, monkeypatch
) -> None:
    pages = json.loads((corpus / "textract" / "invoice-expense-response.json").read_text())["ExpenseDocuments"]
    _, item, result = _second_opinion_run(stack, monkeypatch, [pages])
    assert item.status == Status.REVIEW_REQUIRED and item.invoiceNumber is None
    assert result.engine == "pdf-text-layer"
    opinion = result.extraction["SecondOpinion"]
    assert opinion["used"] is False and opinion["winner"] == "pdf-text-layer"
    assert opinion["readings"]["textract"]["reasons"] == ["MISSING_FIELD:vendorName"]


def test_past_the_nights_cap_the_text_layer_reading_stands_and_says_why(stack, corpus: Path, monkeypatch) -> None:
    from jobs.ingest.pages import night_of
    from jobs.observability import CallMetrics
    from jobs.runtime.stores import document_table

    # The night's one page already went to another task's scan.
    tonight = night_of(layout.utc_now(), "UTC")
    assert document_table(stack.settings, CallMetrics()).reserve_textract_pages(tonight, 1, 1, 0) == 1
    summary, item, result = _second_opinion_run(stack, monkeypatch, [], cap=1)  # Textract never called
    assert summary.textractPages == 0 and summary.failures == [] and summary.deferredForPageCap == 0
    assert item.status == Status.REVIEW_REQUIRED and result.engine == "pdf-text-layer"
    opinion = result.extraction["SecondOpinion"]
    assert opinion["used"] is False and "cap of 1" in opinion["reason"]
