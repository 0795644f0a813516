"""Faults between the ingest and the servers, injected with botocore `before-send` hooks.

The injected clients are built with the job's own botocore Config, so the retries are the job's
retries. A seeded fraction of requests is answered by the hook instead of the server: DynamoDB
ThrottlingException / ProvisionedThroughputExceededException (400), S3 SlowDown (503), 500/503
server errors, read and connect timeouts, and TransactWriteItems cancelled with ThrottlingError
reasons (retried by the store's own loop, not by botocore). The run must complete with the same
final state as a clean run of the same corpus on another stage, and the retried requests are
visible: every attempt the hook saw is either a call in the run's metrics or a retried fault.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError
from botocore.httpsession import URLLib3Session
from reliability_helpers import assert_clean, assert_consistent, read_result

from jobs.contract import Status, layout
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.errors import InfrastructureError
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.store.clients import botocore_config

THROTTLE = "throttle"
PROVISIONED = "provisioned-throughput"
SERVER_500 = "http-500"
SERVER_503 = "http-503"
READ_TIMEOUT = "read-timeout"
CONNECT_TIMEOUT = "connect-timeout"
TRANSACTION_THROTTLED = "transaction-cancelled-throttling"
BOTOCORE_RETRIED = (THROTTLE, PROVISIONED, SERVER_500, SERVER_503, READ_TIMEOUT, CONNECT_TIMEOUT)
ALL_KINDS = (*BOTOCORE_RETRIED, TRANSACTION_THROTTLED)


class _Raw:
    """What AWSResponse reads a body from."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_kwargs: Any) -> Any:
        yield self._body


def _dynamodb_error(status: int, error_type: str, message: str, **extra: Any) -> AWSResponse:
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{error_type}", "message": message, **extra})
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "injected"}
    return AWSResponse("http://injected", status, headers, _Raw(body.encode()))


def _s3_error(status: int, code: str) -> AWSResponse:
    body = f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>injected</Message></Error>"
    return AWSResponse("http://injected", status, {"Content-Type": "application/xml"}, _Raw(body.encode()))


def _body(request: Any) -> bytes:
    body = request.body
    return body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else b"")


class FaultInjector:
    """A before-send hook answering a seeded fraction of requests with a fault (thread-safe)."""

    def __init__(
        self,
        seed: int,
        rate: float | dict[str, float],
        kinds: tuple[str, ...],
        operations: tuple[str, ...] | None = None,
        match: Callable[[str, bytes], bool] | None = None,
    ) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.rate = rate
        self.kinds = kinds
        self.operations = operations
        self.match = match
        self.attempts: Counter[str] = Counter()
        self.injected: Counter[tuple[str, str]] = Counter()

    def attach(self, client: Any) -> Any:
        service = client.meta.service_model.service_id.hyphenize()
        client.meta.events.register(f"before-send.{service}", self)
        return client

    def __call__(self, request: Any, event_name: str, **_kwargs: Any) -> AWSResponse | None:
        _, service, operation = event_name.split(".", 2)
        with self._lock:
            self.attempts[operation] += 1
            roll, choice = self._rng.random(), self._rng.choice(self.kinds)
            rate = self.rate if isinstance(self.rate, float) else self.rate[service]
            if roll >= rate or (self.operations and operation not in self.operations):
                return None
            if self.match and not self.match(operation, _body(request)):
                return None
            if choice == TRANSACTION_THROTTLED and operation != "TransactWriteItems":
                choice = THROTTLE
            self.injected[(operation, choice)] += 1
        return self._fault(service, choice, request)

    @staticmethod
    def _fault(service: str, kind: str, request: Any) -> AWSResponse | None:
        if kind == READ_TIMEOUT:
            raise ReadTimeoutError(endpoint_url=request.url)
        if kind == CONNECT_TIMEOUT:
            raise ConnectTimeoutError(endpoint_url=request.url)
        if service == "s3":
            return {
                THROTTLE: lambda: _s3_error(503, "SlowDown"),
                PROVISIONED: lambda: _s3_error(503, "SlowDown"),
                SERVER_500: lambda: _s3_error(500, "InternalError"),
                SERVER_503: lambda: _s3_error(503, "ServiceUnavailable"),
            }[kind]()
        if kind == TRANSACTION_THROTTLED:
            count = len(json.loads(_body(request))["TransactItems"])
            reasons = [{"Code": "ThrottlingError", "Message": "injected"}] * count
            return _dynamodb_error(
                400, "TransactionCanceledException", "Transaction cancelled", CancellationReasons=reasons
            )
        return {
            THROTTLE: lambda: _dynamodb_error(
                400, "ThrottlingException", "Rate of requests exceeds the allowed throughput."
            ),
            PROVISIONED: lambda: _dynamodb_error(400, "ProvisionedThroughputExceededException", "injected"),
            SERVER_500: lambda: _dynamodb_error(500, "InternalServerError", "injected"),
            SERVER_503: lambda: _dynamodb_error(503, "ServiceUnavailable", "injected"),
        }[kind]()

    def retried(self, exclude: str = "") -> int:
        """Faults botocore retries (a cancelled transaction is resent by the store as a new call)."""
        return sum(n for (op, kind), n in self.injected.items() if kind != TRANSACTION_THROTTLED and op != exclude)


def faulty_run(stack, injector: FaultInjector, settings=None) -> tuple[Any, CallMetrics]:
    settings = settings or stack.settings
    s3 = injector.attach(boto3.client("s3", config=botocore_config(settings)))
    dynamodb = injector.attach(boto3.client("dynamodb", config=botocore_config(settings)))
    metrics = CallMetrics()
    summary = IngestRun(settings, BackfillPlan(), metrics=metrics, s3=s3, dynamodb=dynamodb).execute()
    return summary, metrics


def final_state(stack) -> dict[tuple[str, str], tuple]:
    """What a run leaves behind, without run-specific values (times, lease owners)."""
    state = {}
    for ident, item in assert_consistent(stack).items():
        result = read_result(stack, *ident)
        state[ident] = (
            item.status,
            item.failureCode,
            item.sourceFormat,
            item.invoiceNumber,
            item.totalAmount,
            item.currency,
            item.attempts,
            item.version,
            result.validation.model_dump_json(),
            result.invoice.model_dump_json() if result.invoice else None,
        )
    return state


def corpus(seed: int, docs: int):
    return generate(4, docs, bad_ratio=0.1, seed=seed)


def assert_survives(
    stack, baseline, seed: int, docs: int, rate: float | dict[str, float], kinds: tuple[str, ...], settings=None
) -> FaultInjector:
    upload(stack.s3(), stack.settings.store.raw_bucket, corpus(seed, docs))
    upload(baseline.s3(), baseline.settings.store.raw_bucket, corpus(seed, docs))
    clean = IngestRun(baseline.settings, BackfillPlan()).execute()
    injector = FaultInjector(seed, rate, kinds)
    summary, metrics = faulty_run(stack, injector, settings)

    assert summary.outcome == "completed" and summary.processed == clean.processed == docs
    assert summary.lostClaims == 0
    assert final_state(stack) == final_state(baseline)
    # Every attempt the hook saw is a call of the run or a retry botocore made after a fault (the
    # listing is left out: its metrics also count the end of the paginator, which sends nothing).
    calls = sum(op["calls"] for name, op in metrics.summary().items() if name != "s3.ListObjectsV2")
    attempts = sum(n for op, n in injector.attempts.items() if op != "ListObjectsV2")
    assert attempts == calls + injector.retried(exclude="ListObjectsV2")
    # Every fault recovered: no error reached the store, but the cancelled transactions it resends.
    errors = {
        name: op["errors"] for name, op in summary.calls.items() if set(op["errors"]) - {"TransactionCanceledException"}
    }
    assert not errors, errors
    assert injector.retried() > 0
    print(f"faults seed {seed}: {attempts} attempts, {calls} calls, injected {dict(injector.injected)}")
    return injector


def test_a_run_through_mixed_faults_matches_a_clean_run(stack, extra_stack) -> None:
    injector = assert_survives(stack, extra_stack, seed=1, docs=16, rate={"s3": 0.2, "dynamodb": 0.5}, kinds=ALL_KINDS)
    assert len({kind for _op, kind in injector.injected}) >= 4
    assert {"GetObject", "PutObject"} & {op for op, _kind in injector.injected}
    assert {"TransactWriteItems", "PutItem", "BatchGetItem"} & {op for op, _kind in injector.injected}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ALL_KINDS)
def test_each_fault_kind_alone(stack, extra_stack, kind: str) -> None:
    injector = assert_survives(stack, extra_stack, seed=ALL_KINDS.index(kind), docs=20, rate=0.25, kinds=(kind,))
    assert {k for _op, k in injector.injected} == {kind if kind != TRANSACTION_THROTTLED else THROTTLE} | (
        {TRANSACTION_THROTTLED} if kind == TRANSACTION_THROTTLED else set()
    )


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["standard", "adaptive"])
def test_mixed_faults_in_both_retry_modes(stack, extra_stack, mode: str) -> None:
    settings = stack.settings.changed(retry_mode=mode)
    # adaptive mode also slows its own sending rate after throttling: a smaller run keeps it short
    docs, rate = (40, 0.3) if mode == "standard" else (16, 0.2)
    assert_survives(stack, extra_stack, seed=len(mode), docs=docs, rate=rate, kinds=ALL_KINDS, settings=settings)


def test_faults_past_the_retry_budget_abort_the_run_cleanly(stack) -> None:
    """Every DynamoDB write throttled: the run gives up after bounded retries and says so."""
    upload(stack.s3(), stack.settings.store.raw_bucket, corpus(5, 6))
    settings = stack.settings.changed(retry_attempts=2)
    injector = FaultInjector(5, 1.0, (THROTTLE,), operations=("TransactWriteItems", "PutItem"))
    with pytest.raises(InfrastructureError, match="ThrottlingException"):
        faulty_run(stack, injector, settings)
    assert stack.items() == []  # no claim landed, nothing half-written
    assert stack.keys(stack.settings.store.processed_bucket) == []


def _is_finish(operation: str, body: bytes) -> bool:
    """A finish transaction: its puts are conditional on the lease owner (claims are not)."""
    return operation == "TransactWriteItems" and b"#owner" in body


@pytest.mark.slow
def test_persistent_transaction_throttling_is_not_reported_as_lost_claims(stack) -> None:
    """Regression (found here, fixed in 1fcd743): write_all read a transaction still cancelled for
    ThrottlingError after its resends as a lost condition, so the run completed with the
    documents left PROCESSING and counted as lost claims.
    """
    upload(stack.s3(), stack.settings.store.raw_bucket, corpus(6, 12))
    injector = FaultInjector(6, 1.0, (TRANSACTION_THROTTLED,), match=_is_finish)
    try:
        summary, _ = faulty_run(stack, injector)
    except InfrastructureError as exc:  # the right outcome: the run says the infrastructure failed
        assert "throttled" in str(exc)
        assert all(i.status == Status.PROCESSING and i.leaseOwner for i in stack.items())  # retried after the lease
        return
    stuck = [i.documentId for i in stack.items() if i.status == Status.PROCESSING]
    assert summary.lostClaims == 0 and not stuck, (
        f"completed with {summary.lostClaims} 'lost' claims, {len(stuck)} PROCESSING"
    )


def _claims_after_the_first(limit: int) -> Callable[[str, bytes], bool]:
    """Matches claim transactions (no lease condition) once `limit` of them went through."""
    seen = Counter[str]()

    def match(operation: str, body: bytes) -> bool:
        if operation != "TransactWriteItems" or b"#owner" in body:
            return False
        seen["claims"] += 1
        return seen["claims"] > limit

    return match


def test_an_aborted_run_hands_back_the_claims_it_could_not_finish(stack) -> None:
    """Regression: a claim transaction still throttled after its resends aborted the run, and the
    documents claimed earlier but not yet processed stayed leased until their lease expired.

    One I/O thread and slow reads keep the first chunk's documents waiting when the second chunk's
    claim gives up, so some claims are always unfinished at the abort.
    """
    docs = 40
    upload(stack.s3(), stack.settings.store.raw_bucket, corpus(7, docs))
    injector = FaultInjector(7, 1.0, (TRANSACTION_THROTTLED,), match=_claims_after_the_first(1))
    settings = stack.settings.changed(io_threads=1)
    s3 = injector.attach(boto3.client("s3", config=botocore_config(settings)))
    s3.meta.events.register("before-send.s3.GetObject", lambda **_: time.sleep(1.0))
    dynamodb = injector.attach(boto3.client("dynamodb", config=botocore_config(settings)))
    with pytest.raises(InfrastructureError, match="throttled"):
        IngestRun(settings, BackfillPlan(), s3=s3, dynamodb=dynamodb).execute()

    items = stack.items()
    now = layout.utc_now()
    assert 0 < len(items) <= 25  # only the first claim chunk landed
    handed_back = [i for i in items if i.status == Status.PROCESSING]
    assert handed_back, "no claim was left unfinished: the test did not exercise the release"
    assert all(i.leaseExpiresAt is not None and i.leaseExpiresAt <= now for i in handed_back)
    assert all(i.attempts == 0 for i in handed_back)  # the abort was not the document's fault

    summary = IngestRun(stack.settings, BackfillPlan()).execute()  # at once: no lease to wait out
    assert summary.outcome == "completed" and summary.decisions.get("SKIP_LEASED", 0) == 0
    assert summary.processed == docs - (len(items) - len(handed_back))
    assert all(i.attempts == 1 for i in stack.items())
    assert_clean(stack, expected=docs)


def test_a_document_that_aborts_every_run_is_dead_lettered_after_max_attempts(stack) -> None:
    """Reads of one raw object are denied: each run aborts on it (exit 3) and hands it back with
    the attempt counted (the others refunded), so after max_attempts runs it is a dead letter and
    the next run completes; a refund for it too would abort every run forever.
    """
    docs = 12
    upload(stack.s3(), stack.settings.store.raw_bucket, corpus(9, docs))
    poison = sorted(stack.keys(stack.settings.store.raw_bucket, "raw/"))[0]
    s3 = boto3.client("s3", config=botocore_config(stack.settings))
    s3.meta.events.register(
        "before-send.s3.GetObject",
        lambda request, **_: _s3_error(403, "AccessDenied") if request.url.endswith(poison) else None,
    )
    user_id, document_id = layout.parse_raw_key(poison).user_id, layout.parse_raw_key(poison).document_id
    attempts = []
    for _ in range(stack.settings.ingest.max_attempts):
        with pytest.raises(InfrastructureError, match="AccessDenied"):
            IngestRun(stack.settings, BackfillPlan(), s3=s3).execute()
        item = next(i for i in stack.items() if (i.userId, i.documentId) == (user_id, document_id))
        assert (
            item.status == Status.PROCESSING
            and item.leaseExpiresAt is not None
            and item.leaseExpiresAt <= layout.utc_now()
        )
        attempts.append(item.attempts)
    assert attempts == list(range(1, stack.settings.ingest.max_attempts + 1))

    summary = IngestRun(stack.settings, BackfillPlan(), s3=s3).execute()
    assert summary.outcome == "completed" and summary.deadLetterCount == 1
    assert summary.deadLetters[0].key == poison
    others = [i for i in stack.items() if (i.userId, i.documentId) != (user_id, document_id)]
    assert len(others) == docs - 1 and all(i.status != Status.PROCESSING and i.attempts == 1 for i in others)


class LostResponses(FaultInjector):
    """The write reaches the server and is applied, then the response is lost (a read timeout)."""

    def __init__(self, seed: int, rate: float, operations: tuple[str, ...]) -> None:
        super().__init__(seed, rate, (READ_TIMEOUT,), operations)
        self._session = URLLib3Session()
        self._lost: set[bytes] = set()  # a resend of the same request gets its response

    def __call__(self, request: Any, event_name: str, **_kwargs: Any) -> AWSResponse | None:
        operation = event_name.split(".", 2)[2]
        with self._lock:
            self.attempts[operation] += 1
            if self._rng.random() >= self.rate or operation not in (self.operations or ()):
                return None
            key = request.url.encode() + b" " + _body(request)
            if key in self._lost:
                return None
            self._lost.add(key)
            self.injected[(operation, "response-lost")] += 1
        self._session.send(request)  # applied by the server...
        raise ReadTimeoutError(endpoint_url=request.url)  # ...but the job never hears of it


def _lost_response_run(stack, baseline, operation: str, docs: int, rate: float) -> tuple[Any, LostResponses]:
    seed = 40
    upload(stack.s3(), stack.settings.store.raw_bucket, corpus(seed, docs))
    upload(baseline.s3(), baseline.settings.store.raw_bucket, corpus(seed, docs))
    IngestRun(baseline.settings, BackfillPlan()).execute()
    injector = LostResponses(seed, rate, (operation,))
    summary, _ = faulty_run(stack, injector)
    print(
        f"lost responses on {operation}: {dict(injector.injected)}; "
        f"lostClaims={summary.lostClaims} processed={summary.processed}"
    )
    assert injector.injected
    return summary, injector


@pytest.mark.slow
@pytest.mark.parametrize("operation", ["TransactWriteItems", "PutObject"])
def test_a_write_applied_but_its_response_lost(stack, extra_stack, operation: str) -> None:
    """Botocore resends the write: TransactWriteItems carries an idempotency token
    (ClientRequestToken, filled in by botocore), a result.json PutObject is idempotent.
    """
    summary, _ = _lost_response_run(stack, extra_stack, operation, docs=20, rate=0.5)
    assert summary.outcome == "completed" and summary.lostClaims == 0 and summary.processed == 20
    assert final_state(stack) == final_state(extra_stack)


@pytest.mark.slow
def test_a_single_conditional_put_applied_but_its_response_lost(stack, extra_stack) -> None:
    # One document: its claim and its finish are lone writes, sent as one-item transactions
    # (a plain conditional PutItem would meet its own write on the resend); every response lost.
    summary, _ = _lost_response_run(stack, extra_stack, "TransactWriteItems", docs=1, rate=1.0)
    assert summary.lostClaims == 0 and summary.processed == 1
    assert final_state(stack) == final_state(extra_stack)
