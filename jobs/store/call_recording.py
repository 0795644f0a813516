"""Records the AWS operations the jobs' own clients make, so a test can hold IAM to them.

`jobs.store.clients` passes every client it builds through `attach`, which registers botocore
hooks only while a test has a `recording()` open: production clients carry no hook at all.
`provide-client-params` sees each API call once, with the caller's parameters (before retries,
signing or the wire format), which is what IAM authorizes; `after-call` adds the final HTTP status
and error code (IAM decides some answers too: S3 says 404 for a missing key only to a caller that
may list the bucket). Bodies are dropped; nothing is changed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from botocore.client import BaseClient

Client = TypeVar("Client", bound="BaseClient")

# Large or binary parameters IAM never looks at.
_DROPPED = frozenset({"Body"})


@dataclass(frozen=True)
class Call:
    service: str  # botocore's service name: s3, dynamodb, textract, sqs, athena
    operation: str  # the API operation: GetObject, TransactWriteItems
    params: dict[str, Any]
    # Filled in when the answer arrives: {"status": 404, "error": "NoSuchKey"}.
    outcome: dict[str, Any] = field(default_factory=dict, compare=False)


_open: list[list[Call]] = []
_lock = threading.Lock()


def attach(client: Client) -> Client:
    """Register the recording hook on `client` when a recording is open; return the client."""
    with _lock:
        active = bool(_open)
    if active:
        client.meta.events.register("provide-client-params", _record)
        client.meta.events.register("after-call", _answered)
    return client


_CONTEXT_KEY = "docuflow.recorded_call"


def _record(params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
    call = Call(model.service_model.service_name, model.name, {k: v for k, v in params.items() if k not in _DROPPED})
    context[_CONTEXT_KEY] = call  # the same request context reaches after-call
    with _lock:
        for calls in _open:
            calls.append(call)


def _answered(http_response: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    call = context.get(_CONTEXT_KEY)
    if call is not None:
        call.outcome.update(
            status=getattr(http_response, "status_code", None), error=parsed.get("Error", {}).get("Code")
        )


@contextmanager
def recording() -> Iterator[list[Call]]:
    """Collect the calls of every client built while this is open (tests only)."""
    calls: list[Call] = []
    with _lock:
        _open.append(calls)
    try:
        yield calls
    finally:
        with _lock:
            _open[:] = [c for c in _open if c is not calls]
