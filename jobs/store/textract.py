"""Amazon Textract AnalyzeExpense for scans stored in S3: the store adapter of the OCR path.

Owns the calls, their pacing, their retries and the translation of their failures: synchronous
AnalyzeExpense for single images, StartExpenseAnalysis + GetExpenseAnalysis (polled, then
paginated by NextToken) for PDFs, a client-side token bucket that keeps this worker below the
account's TPS quota, and the one retry layer: every attempt, first or retried, takes a token from
the bucket, and throttling, 5xx and connection errors back off exponentially with full jitter up
to `max_attempts`. botocore's own retries must be off for this client (`jobs.store.clients.
textract_client` builds it so), otherwise each of our attempts would hide up to eight requests
that bypass the bucket. AWS errors leave this module only as the `Textract*Error`s of
jobs.errors, chained to the botocore exception.

The result is one AnalyzeExpense-shaped dict that the ingest stores as the raw extraction output
and feeds back into extract_document (read by jobs/extract/textract.py). The boto3 client is
injected; nothing here reads settings.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from jobs.errors import (
    TextractDocumentRejectedError,
    TextractJobFailedError,
    TextractJobTimeoutError,
    TextractThrottledError,
    TextractUnavailableError,
)
from jobs.observability import CallMetrics

if TYPE_CHECKING:
    from mypy_boto3_textract import TextractClient
else:
    TextractClient = Any

logger = logging.getLogger(__name__)

THROTTLING_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "LimitExceededException"}
)
# Server-side failures worth another attempt (botocore's standard mode retries the same ones).
_TRANSIENT_CODES = frozenset({"InternalServerError", "ServiceUnavailable", "ServiceUnavailableException"})
# Answers about the document itself: the same bytes would get the same answer.
REJECTED_CODES = frozenset(
    {"InvalidS3ObjectException", "UnsupportedDocumentException", "BadDocumentException", "DocumentTooLargeException"}
)
_CONNECTION_ERRORS = (BotocoreConnectionError, HTTPClientError)
_RESPONSE_ONLY_KEYS = ("ResponseMetadata", "NextToken")
_DONE = frozenset({"SUCCEEDED", "PARTIAL_SUCCESS"})


class RateLimiter:
    """Token bucket: at most `rate` calls per second on average, bursts of at most `burst`."""

    def __init__(
        self,
        rate: float,
        burst: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate, self.burst = rate, max(burst, 1.0)
        self._clock, self._sleep = clock, sleep
        self._tokens = self.burst
        self._stamp = clock()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        with self._lock:  # threads of one worker share the quota
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            wait = (1.0 - self._tokens) / self.rate if self._tokens < 1.0 else 0.0
            self._tokens -= 1.0
        if wait > 0:
            self._sleep(wait)


class TextractOcr:
    """AnalyzeExpense on S3 objects, paced and retried; one instance per worker process.

    `max_tps` should stay below the account's quota divided by the number of workers: Textract's
    default AnalyzeExpense quota is low (single-digit TPS in most regions). `max_attempts` counts
    every request of one call, the first included.
    """

    def __init__(
        self,
        client: TextractClient,
        *,
        max_tps: float = 1.0,
        poll_interval_s: float = 5.0,
        poll_timeout_s: float = 900.0,
        max_attempts: int = 8,
        backoff_base_s: float = 0.5,
        backoff_cap_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        metrics: CallMetrics | None = None,
    ) -> None:
        """`metrics`: every request is counted there as textract.<operation> (the run summary)."""
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._client = client
        self._limiter = RateLimiter(max_tps, clock=clock, sleep=sleep)
        self._poll_interval_s = poll_interval_s
        self._poll_timeout_s = poll_timeout_s
        self._max_attempts = max_attempts
        self._backoff_base_s = backoff_base_s
        self._backoff_cap_s = backoff_cap_s
        self._sleep = sleep
        self._clock = clock
        self._metrics = metrics or CallMetrics()

    def analyze_s3_object(self, bucket: str, key: str, *, is_pdf: bool) -> dict[str, Any]:
        """One AnalyzeExpense-shaped response for the object (all pages of a PDF merged)."""
        location = {"S3Object": {"Bucket": bucket, "Name": key}}
        if not is_pdf:
            return _strip(self._call("analyze_expense", Document=location))
        job_id = self._call("start_expense_analysis", DocumentLocation=location)["JobId"]
        first = self._wait(job_id)
        return _merge(job_id, first, self._remaining_pages(job_id, first))

    def _wait(self, job_id: str) -> dict[str, Any]:
        deadline = self._clock() + self._poll_timeout_s
        while True:
            page = self._call("get_expense_analysis", JobId=job_id)
            status = page.get("JobStatus")
            if status in _DONE:
                return page
            if status != "IN_PROGRESS":
                raise TextractJobFailedError(job_id, str(page.get("StatusMessage") or status))
            if self._clock() >= deadline:
                raise TextractJobTimeoutError(f"Textract job {job_id} still running after {self._poll_timeout_s}s")
            self._sleep(self._poll_interval_s)

    def _remaining_pages(self, job_id: str, first: dict[str, Any]) -> list[dict[str, Any]]:
        pages: list[dict[str, Any]] = []
        token = first.get("NextToken")
        while token:
            page = self._call("get_expense_analysis", JobId=job_id, NextToken=token)
            pages.append(page)
            token = page.get("NextToken")
        return pages

    def _call(self, operation: str, **params: Any) -> dict[str, Any]:
        """The one retry layer: each attempt waits for its token, retryable failures back off."""
        for attempt in range(1, self._max_attempts + 1):
            self._limiter.acquire()
            try:
                with self._metrics.call(f"textract.{operation}"):
                    response: dict[str, Any] = getattr(self._client, operation)(**params)
                return response
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                if code not in THROTTLING_CODES and code not in _TRANSIENT_CODES:
                    raise _translate(operation, code, exc) from exc
                if attempt == self._max_attempts:
                    error = TextractThrottledError if code in THROTTLING_CODES else TextractUnavailableError
                    raise error(f"Textract {operation}: {code} after {attempt} attempts") from exc
                reason = code
            except _CONNECTION_ERRORS as exc:
                if attempt == self._max_attempts:
                    raise TextractUnavailableError(
                        f"Textract {operation} unreachable after {attempt} attempts: {exc}"
                    ) from exc
                reason = type(exc).__name__
            delay = random.uniform(0, min(self._backoff_cap_s, self._backoff_base_s * 2 ** (attempt - 1)))
            logger.info("Textract %s failed (%s), retry %d in %.2fs", operation, reason, attempt, delay)
            self._sleep(delay)
        raise AssertionError("unreachable")  # the loop returns or raises


def _translate(operation: str, code: str, exc: ClientError) -> Exception:
    message = str(exc.response.get("Error", {}).get("Message", ""))
    if code in REJECTED_CODES:
        return TextractDocumentRejectedError(code, message)
    return TextractUnavailableError(f"Textract {operation}: {code}: {message}")


def _strip(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k not in _RESPONSE_ONLY_KEYS}


def _merge(job_id: str, first: dict[str, Any], rest: list[dict[str, Any]]) -> dict[str, Any]:
    """The paginated GetExpenseAnalysis pages as one response: ExpenseDocuments concatenated."""
    merged = _strip(first)
    merged["ExpenseDocuments"] = [doc for page in (first, *rest) for doc in page.get("ExpenseDocuments", [])]
    warnings = [w for page in (first, *rest) for w in page.get("Warnings", [])]
    if warnings:
        merged["Warnings"] = warnings
    merged["JobId"] = job_id  # not a Textract key: lets result.json be traced to the job
    return merged
