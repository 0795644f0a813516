"""Records the AWS operations the jobs' own clients make, so a test can hold IAM to them.

`jobs.store.clients` passes every client it builds through `attach`, which registers a botocore
`provide-client-params` hook only while a test has a `recording()` open: production clients carry
no hook at all. The hook sees each API call once, with the caller's parameters (before retries,
signing or the wire format), which is what IAM authorizes. Bodies are dropped; nothing is changed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

Client = TypeVar("Client")

# Large or binary parameters IAM never looks at.
_DROPPED = frozenset({"Body"})


@dataclass(frozen=True)
class Call:
    service: str  # botocore's service name: s3, dynamodb, textract, sqs, athena
    operation: str  # the API operation: GetObject, TransactWriteItems
    params: dict[str, Any]


_open: list[list[Call]] = []
_lock = threading.Lock()


def attach(client: Client) -> Client:
    """Register the recording hook on `client` when a recording is open; return the client."""
    with _lock:
        active = bool(_open)
    if active:
        client.meta.events.register("provide-client-params", _record)  # type: ignore[attr-defined]
    return client


def _record(params: dict[str, Any], model: Any, **_: Any) -> None:
    call = Call(model.service_model.service_name, model.name, {k: v for k, v in params.items() if k not in _DROPPED})
    with _lock:
        for calls in _open:
            calls.append(call)


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
