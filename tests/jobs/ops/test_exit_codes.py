"""One exit-code map from the domain errors, and the ingest's failed-ratio verdict (pure)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ValidationError

from jobs.contract.metrics import MIN_DOCUMENTS_FOR_RATIO, SEVERITIES, Metric
from jobs.errors import (
    BadInputError,
    ErasureNotSettledError,
    ExitCode,
    ExportNotReadyError,
    ReconcileInputError,
    ReconcileQueryError,
    RestoreFailedError,
    ReviewConflictError,
    SettingsError,
    StoreAccessDeniedError,
    StoreResourceMissingError,
    StoreUnavailableError,
    TextractJobTimeoutError,
    TextractThrottledError,
    exit_code_for,
)
from jobs.ingest.summary import RunSummary
from jobs.reconcile.rules.findings import Severity


def _validation_error() -> ValidationError:
    class Model(BaseModel):
        n: int

    try:
        Model.model_validate({"n": "x"})
    except ValidationError as exc:
        return exc
    raise AssertionError("validated")


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (StoreUnavailableError("down"), ExitCode.UNAVAILABLE),
        (StoreAccessDeniedError("denied"), ExitCode.UNAVAILABLE),
        (TextractThrottledError("throttled"), ExitCode.UNAVAILABLE),
        (RestoreFailedError("restore job FAILED"), ExitCode.UNAVAILABLE),
        (StoreResourceMissingError("no table"), ExitCode.BAD_INPUT),
        (SettingsError("bad"), ExitCode.BAD_INPUT),
        (ReconcileInputError("damaged export"), ExitCode.BAD_INPUT),
        (ErasureNotSettledError("still finding data"), ExitCode.NOT_SETTLED),
        (ReviewConflictError("another reviewer changed it"), ExitCode.NOT_SETTLED),
        (BadInputError("--max-docs 0: must be at least 1"), ExitCode.BAD_INPUT),  # an option refused
        (ReconcileQueryError("the query failed"), ExitCode.UNAVAILABLE),  # the next night runs it again
        (ExportNotReadyError("still IN_PROGRESS"), ExitCode.UNAVAILABLE),
        (TextractJobTimeoutError("still IN_PROGRESS"), ExitCode.UNAVAILABLE),
        (ValueError("no family: a bug"), ExitCode.INTERNAL),
        (json.JSONDecodeError("Expecting value", "{", 1), ExitCode.INTERNAL),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), ExitCode.INTERNAL),
        (_validation_error(), ExitCode.INTERNAL),
        (KeyError("a bug"), ExitCode.INTERNAL),
    ],
)
def test_each_domain_error_has_one_exit_code(error: Exception, code: ExitCode) -> None:
    assert exit_code_for(error) == code


def _summary(processed: int, failed: int, outcome: str = "completed") -> RunSummary:
    return RunSummary(
        runId="r",
        mode="drain",
        shard="0/1",
        dryRun=False,
        startedAt=datetime(2026, 1, 1, tzinfo=UTC),
        outcome=outcome,
        processed=processed,
        statuses={"FAILED": failed, "PROCESSED": processed - failed},
    )


def test_the_failed_ratio_is_judged_from_the_minimum_on() -> None:
    few = _summary(MIN_DOCUMENTS_FOR_RATIO - 1, MIN_DOCUMENTS_FOR_RATIO - 1)
    assert few.failed_ratio() is None and not few.failed_ratio_breached(0.5)
    assert Metric.FAILED_RATIO not in {d.metric for d in few.run_metrics().data}
    half = _summary(10, 5)
    assert half.failed_ratio() == 0.5 and not half.failed_ratio_breached(0.5)
    assert _summary(10, 6).failed_ratio_breached(0.5)


def test_only_a_completed_run_is_a_heartbeat() -> None:
    assert Metric.HEARTBEAT in {d.metric for d in _summary(10, 0).run_metrics().data}
    assert Metric.HEARTBEAT not in {d.metric for d in _summary(10, 0, "aborted").run_metrics().data}


def test_the_contracts_severities_are_the_reconciles() -> None:
    assert set(SEVERITIES) == {s.value for s in Severity}
