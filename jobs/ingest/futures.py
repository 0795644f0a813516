"""Small combinators over concurrent.futures: a finish is queued, not awaited, so a document's
outcome is a chain of futures (the finish's, then a follow-up's when a duplicate needs one).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")


def resolved(value: T) -> Future[T]:
    future: Future[T] = Future()
    future.set_result(value)
    return future


def then(future: Future[T], function: Callable[[T], U]) -> Future[U]:
    """A future of `function(result)`; an exception passes through."""
    chained: Future[U] = Future()

    def settle(done: Future[T]) -> None:
        error = done.exception()
        if error is not None:
            chained.set_exception(error)
            return
        try:
            chained.set_result(function(done.result()))
        except Exception as exc:
            chained.set_exception(exc)

    future.add_done_callback(settle)
    return chained


def flattened(future: Future[Future[T]]) -> Future[T]:
    """The inner future's outcome once the outer one gave it (or the outer one's exception)."""
    flat: Future[T] = Future()

    def inner_done(inner: Future[T]) -> None:
        error = inner.exception()
        if error is not None:
            flat.set_exception(error)
        else:
            flat.set_result(inner.result())

    def outer_done(outer: Future[Future[T]]) -> None:
        error = outer.exception()
        if error is not None:
            flat.set_exception(error)
        else:
            outer.result().add_done_callback(inner_done)

    future.add_done_callback(outer_done)
    return flat
