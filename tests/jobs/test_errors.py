"""The error families: every class in exactly one, no diamonds, each family's exit code through
FAMILY_EXITS, and anything else 70, as `run_job` prints and returns it.
"""

from __future__ import annotations

import inspect
from typing import Annotated

import pytest
from pydantic import AfterValidator, BaseModel, ValidationError

from jobs import errors
from jobs.contract.actors import check_actor
from jobs.contract.ids import UserId
from jobs.contract.status import Status, check_transition
from jobs.errors import (
    AuditQueryError,
    BadInputError,
    ConflictError,
    DocuFlowError,
    ExitCode,
    ExportNotReadyError,
    InvalidIdError,
    InvalidKeyError,
    InvalidTransitionError,
    NotFoundError,
    NotSettledError,
    ReconcileQueryError,
    RefusedError,
    RunStoppedError,
    S3ObjectArchivedError,
    SettingsError,
    StoreError,
    StoreResourceMissingError,
    StoreUnavailableError,
    StreamPositionLostError,
    TerminalError,
    TextractJobTimeoutError,
    TransientError,
    exit_code_for,
)
from jobs.runtime.context import RunContext, run_in_context
from jobs.settings import JobSettings

FAMILIES = (TransientError, TerminalError, RunStoppedError)
# The only errors that are ValueErrors too, each because a caller catches it as one (below).
VALUE_ERRORS = {InvalidIdError, InvalidKeyError, InvalidTransitionError, SettingsError}


def _classes() -> list[type[DocuFlowError]]:
    found = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, DocuFlowError)]
    return [c for c in found if c.__module__ == errors.__name__ and c is not DocuFlowError]


def _instance(cls: type[DocuFlowError]) -> DocuFlowError:
    """`cls` built with "x" for each argument its own __init__ (if any) requires."""
    if cls.__init__ in (Exception.__init__, ValueError.__init__):
        return cls("x")
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return cls(*["x" for p in params if p.default is inspect.Parameter.empty])


def test_every_error_belongs_to_exactly_one_family() -> None:
    classes = _classes()
    assert len(classes) > 40
    for cls in classes:
        assert sum(issubclass(cls, family) for family in FAMILIES) == 1, cls


def test_each_error_has_one_docuflow_parent_and_only_the_two_marks_beside_it() -> None:
    for cls in _classes():
        docuflow = [b for b in cls.__bases__ if issubclass(b, DocuFlowError)]
        assert len(docuflow) == 1, cls
        assert set(cls.__bases__) - {*docuflow, StoreError, ValueError} == set(), cls
    assert {c for c in _classes() if ValueError in c.__bases__} == VALUE_ERRORS
    assert {c for c in _classes() if issubclass(c, ValueError)} == {
        c for c in _classes() if any(issubclass(c, v) for v in VALUE_ERRORS)
    }


def test_every_store_error_is_a_docuflow_error_with_its_code() -> None:
    store: list[type[Exception]] = [c for c in _classes() if issubclass(c, StoreError)]
    assert StoreUnavailableError in store and StoreResourceMissingError in store and len(store) == 16
    for cls in store:
        error = cls("what failed", "SomeCode")
        assert isinstance(error, DocuFlowError) and isinstance(error, StoreError)
        assert error.code == "SomeCode" and str(error) == "what failed"


@pytest.mark.parametrize(
    ("family", "code"),
    [
        (TransientError, ExitCode.UNAVAILABLE),
        (NotSettledError, ExitCode.NOT_SETTLED),
        (TerminalError, ExitCode.BAD_INPUT),
        (BadInputError, ExitCode.BAD_INPUT),
        (RefusedError, ExitCode.BAD_INPUT),
        (NotFoundError, ExitCode.BAD_INPUT),
        (ConflictError, ExitCode.BAD_INPUT),
        (SettingsError, ExitCode.BAD_INPUT),
        (RunStoppedError, ExitCode.SIGTERM),
    ],
)
def test_each_family_has_its_exit_code(family: type[DocuFlowError], code: ExitCode) -> None:
    assert exit_code_for(family("x")) == code


def test_every_error_exits_with_its_familys_code() -> None:
    for cls in _classes():
        if issubclass(cls, NotSettledError):
            code = ExitCode.NOT_SETTLED
        elif issubclass(cls, TransientError):
            code = ExitCode.UNAVAILABLE
        elif issubclass(cls, TerminalError):
            code = ExitCode.BAD_INPUT
        else:
            code = ExitCode.SIGTERM
        assert exit_code_for(_instance(cls)) == code, cls


@pytest.mark.parametrize(
    "error",
    [
        ReconcileQueryError("the query failed"),
        AuditQueryError("the change log could not be read"),
        ExportNotReadyError("still IN_PROGRESS"),
        TextractJobTimeoutError("still IN_PROGRESS"),
        StreamPositionLostError("iterator expired", "ExpiredIteratorException"),
        S3ObjectArchivedError("in GLACIER", "InvalidObjectState"),
    ],
)
def test_what_a_retry_or_the_next_night_fixes_is_never_bad_input(error: DocuFlowError) -> None:
    assert exit_code_for(error) == ExitCode.UNAVAILABLE


class _Unfiled(DocuFlowError):
    """A DocuFlow error someone added without a family."""


@pytest.mark.parametrize(
    "error", [_Unfiled("no family"), DocuFlowError("the base"), ValueError("plain"), KeyError("a bug"), TypeError()]
)
def test_an_error_of_no_family_is_internal(error: Exception) -> None:
    assert exit_code_for(error) is ExitCode.INTERNAL and int(ExitCode.INTERNAL) == 70


class _Change(BaseModel):
    userId: UserId
    updatedBy: Annotated[str, AfterValidator(check_actor)]


def test_the_value_errors_are_the_ones_pydantic_validators_and_callers_catch() -> None:
    # The models' validators raise InvalidIdError: pydantic reports it only as a ValueError.
    with pytest.raises(ValidationError, match="userId"):
        _Change(userId="a#b", updatedBy="user:a")
    with pytest.raises(ValidationError, match="actor"):
        _Change(userId="a", updatedBy="nobody")
    # check_transition runs inside the ingest's `except ValueError` (a result the item cannot hold).
    with pytest.raises(ValueError, match="not allowed"):
        check_transition(None, Status.PROCESSED)


def _raising(error: BaseException):  # type: ignore[no-untyped-def]
    def body(_context: RunContext) -> int:
        raise error

    return body


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (StoreUnavailableError("dynamodb.Query: ThrottlingException", "ThrottlingException"), ExitCode.UNAVAILABLE),
        (ReconcileQueryError("the query was cancelled"), ExitCode.UNAVAILABLE),
        (errors.ReviewConflictError("another reviewer changed it"), ExitCode.NOT_SETTLED),
        (errors.LifecycleRefusedError("under a legal hold"), ExitCode.BAD_INPUT),
        (BadInputError("--max-docs 0: must be at least 1"), ExitCode.BAD_INPUT),
    ],
)
def test_run_job_prints_one_line_and_the_familys_code(
    error: DocuFlowError, code: ExitCode, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_in_context("ingest", _raising(error), settings=JobSettings(stage="t")) == code
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and str(error) in err


@pytest.mark.parametrize("error", [_Unfiled("no family"), ValueError("plain")], ids=["unfiled", "value-error"])
def test_run_job_reads_an_error_of_no_family_as_a_bug(error: Exception, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_in_context("ingest", _raising(error), settings=JobSettings(stage="t")) == ExitCode.INTERNAL
    err = capsys.readouterr().err
    assert "unexpected error (a bug)" in err and "Traceback" in err
