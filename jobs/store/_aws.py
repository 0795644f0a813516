"""botocore exceptions → the domain errors of jobs.errors: the one translation for every adapter.

Each adapter catches the few error codes that mean something to its caller (a lost condition,
a missing object) and lets `translated` map the rest, so what leaves jobs/store is a StoreError
and the retry policy stays botocore's (one layer, configured once in jobs.store.clients.botocore_config).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    ReadTimeoutError,
)

from jobs.errors import (
    S3ObjectArchivedError,
    SettingsError,
    StoreAccessDeniedError,
    StoreError,
    StoreRequestError,
    StoreResourceMissingError,
    StoreUnavailableError,
)

ACCESS_DENIED = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "UnrecognizedClientException",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "KMS.AccessDeniedException",
        "KMSAccessDeniedException",
        "AllAccessDisabled",
    }
)
# A GET of an object in GLACIER or DEEP_ARCHIVE that is not restored: 403 like a denial, but a
# state of that one object (a restore makes it readable), never the credentials' fault.
ARCHIVED = "InvalidObjectState"
MISSING_RESOURCE = frozenset(
    {
        "ResourceNotFoundException",
        "NoSuchBucket",
        "QueueDoesNotExist",
        "AWS.SimpleQueueService.NonExistentQueue",
        "NonExistentQueue",
    }
)
UNAVAILABLE = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "SlowDown",
        "ServiceUnavailable",
        "InternalError",
        "InternalServerError",
        "InternalFailure",
        "ServiceUnavailableException",
        "RequestTimeout",
        "RequestTimeoutException",
        "TransactionInProgressException",
        "LimitExceededException",
    }
)


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "Unknown"))


def _archived_message(exc: ClientError, operation: str, resource: str) -> str:
    storage_class = exc.response.get("Error", {}).get("StorageClass") or "an archive storage class"
    what = resource or "the object"
    return (
        f"{S3ObjectArchivedError.reason}: {operation}: {what} is in {storage_class} and not restored"
        " (python -m jobs restore-archived requests its restore; read it again once restored)"
    )


def translate(exc: BotoCoreError | ClientError, operation: str, resource: str = "") -> Exception:
    """The domain error for a botocore exception raised by `operation` (raise it `from exc`).

    `resource` names what the call works on ("table docuflow-dev-documents-table"): a missing
    table, bucket or queue is a configuration error, and AWS's own message does not name it.
    """
    if isinstance(exc, ClientError):
        code = error_code(exc)
        message = f"{operation}: {code}: {exc.response.get('Error', {}).get('Message', '')}".rstrip(": ")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if code == ARCHIVED:
            return S3ObjectArchivedError(_archived_message(exc, operation, resource), code)
        if code in ACCESS_DENIED or status == 403:
            return StoreAccessDeniedError(message, code)
        if code in MISSING_RESOURCE:
            return StoreResourceMissingError(f"{resource} does not exist ({message})" if resource else message, code)
        if code in UNAVAILABLE or status >= 500:
            return StoreUnavailableError(message, code)
        return StoreRequestError(message, code)
    if isinstance(exc, NoRegionError):
        return SettingsError(f"{operation}: no AWS region configured (set AWS_REGION or AWS_DEFAULT_REGION)")
    if isinstance(exc, NoCredentialsError):
        return StoreAccessDeniedError(f"{operation}: no AWS credentials found", type(exc).__name__)
    if isinstance(exc, EndpointConnectionError | ConnectionError | ReadTimeoutError):
        return StoreUnavailableError(f"{operation}: {exc}", type(exc).__name__)
    return StoreUnavailableError(f"{operation}: {type(exc).__name__}: {exc}", type(exc).__name__)


@contextmanager
def translated(
    operation: str, expected: Mapping[str, type[StoreError]] | None = None, resource: str = ""
) -> Iterator[None]:
    """Raise the domain error for whatever botocore raises inside; `expected` maps the error
    codes that mean something to the caller (NoSuchKey, PreconditionFailed, …) to their errors;
    `resource` names what the call works on (see `translate`).
    """
    try:
        yield
    except ClientError as exc:
        code = error_code(exc)
        if expected and code in expected:
            raise expected[code](f"{operation}: {code}", code) from exc
        raise translate(exc, operation, resource) from exc
    except BotoCoreError as exc:
        raise translate(exc, operation, resource) from exc
