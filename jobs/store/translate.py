"""AWS errors → domain errors (jobs.errors) for the adapters' callers that must not see botocore.

`translating(cls)` returns a subclass of an adapter whose public methods (generators included)
raise `StoreObjectMissingError`, `StoreAccessDeniedError` or `StoreUnavailableError`, chained with
`raise … from` the botocore exception. The reconcile uses the translated S3 and DynamoDB adapters
(`Buckets`, `DocumentTable`), the Athena and export adapters translate through `translated()`
directly; what an adapter already maps to an outcome (a lost condition, a taken key) is untouched.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from jobs.errors import StoreAccessDeniedError, StoreObjectMissingError, StoreUnavailableError
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets

MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound", "NoSuchBucket", "ResourceNotFoundException", "ExportNotFoundException"})
DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "403", "UnauthorizedOperation", "Forbidden"})


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Run an AWS call; its botocore errors come out as domain errors naming `what`."""
    try:
        yield
    except ClientError as exc:
        code = error_code(exc)
        if code in MISSING_CODES:
            raise StoreObjectMissingError(f"{what}: {code}") from exc
        if code in DENIED_CODES:
            raise StoreAccessDeniedError(f"{what}: access denied ({code})") from exc
        raise StoreUnavailableError(f"{what}: {code}: {exc}") from exc
    except BotoCoreError as exc:
        raise StoreUnavailableError(f"{what}: {type(exc).__name__}: {exc}") from exc


def _wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def generator(*args: Any, **kwargs: Any) -> Iterator[Any]:
            with translated(name):
                yield from method(*args, **kwargs)

        return generator

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        with translated(name):
            return method(*args, **kwargs)

    return call


T = TypeVar("T", bound=type)


def translating(cls: T) -> T:
    """A subclass of `cls` whose public methods translate AWS errors."""
    methods = {
        name: _wrap(f"{cls.__name__}.{name}", member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }
    return type(f"Translated{cls.__name__}", (cls,), methods)  # type: ignore[return-value]


TranslatedBuckets = translating(Buckets)
TranslatedTable = translating(DocumentTable)
