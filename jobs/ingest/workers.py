"""The extraction process pool, rebuilt when a worker dies.

A worker killed mid-document (out of memory, a crash in a native library) breaks a
ProcessPoolExecutor for good: every later submit fails at once, so one poison document would fail
the rest of the run. Here the broken pool is replaced, and each document that was in flight gets
one more try on the new pool. A document that breaks the pool on its retry as well fails with the
pool's error (an INTERNAL failure: later runs retry it up to max_attempts, then dead-letter it).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import BaseContext
from typing import Any, Generic, TypeVar

logger = logging.getLogger(__name__)

R = TypeVar("R")
RETRIES_AFTER_A_BROKEN_POOL = 1


def _fail(outer: Future[R], error: BaseException) -> None:
    """Fail `outer` unless its caller cancelled it meanwhile."""
    with contextlib.suppress(InvalidStateError):
        outer.set_exception(error)


def _succeed(outer: Future[R], result: R) -> None:
    """Complete `outer` unless its caller cancelled it meanwhile."""
    with contextlib.suppress(InvalidStateError):
        outer.set_result(result)


def _started() -> None:
    """A no-op task: running it means the worker process is up."""


class RestartingPool(Generic[R]):
    def __init__(self, function: Callable[..., R], workers: int, context: BaseContext) -> None:
        self._function = function
        self._workers = workers
        self._context = context
        self._lock = threading.Lock()
        self._pool = ProcessPoolExecutor(workers, mp_context=context)
        self._closed = False
        self._abandoned = False
        self.restarts = 0
        # Workers start on demand; start them now, while the caller lists and claims its first
        # documents, instead of when the first document is ready for extraction.
        for _ in range(workers):
            self._pool.submit(_started)

    def submit(self, *args: Any) -> Future[R]:
        """The task's future; cancel it to abandon the task (it is then never retried)."""
        outer: Future[R] = Future()
        outer.add_done_callback(self._note_abandoned)
        self._attempt(outer, args, RETRIES_AFTER_A_BROKEN_POOL)
        return outer

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            pool = self._pool
        processes = list((pool._processes or {}).values())
        pool.shutdown(wait=not self._abandoned, cancel_futures=True)
        if self._abandoned:
            # An abandoned task may still hold a worker (a parser stuck in native code): stop the
            # workers instead of waiting for it at the end of the run.
            for process in processes:
                process.terminate()

    def terminate(self) -> None:
        """Stop now (the run was told to stop and its grace is over): workers are killed, and
        every task still waiting or running fails with BrokenProcessPool, never retried.
        """
        with self._lock:
            self._closed = True
            pool = self._pool
        for process in list((pool._processes or {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)

    def _note_abandoned(self, outer: Future[R]) -> None:
        if outer.cancelled():
            self._abandoned = True

    def __enter__(self) -> RestartingPool[R]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.shutdown()

    def _attempt(self, outer: Future[R], args: tuple[Any, ...], retries: int) -> None:
        with self._lock:
            pool = self._pool
        try:
            inner = pool.submit(self._function, *args)
        except BrokenProcessPool as exc:
            self._retry_or_fail(outer, args, retries, pool, exc)
            return
        except RuntimeError as exc:  # submitted after shutdown
            _fail(outer, exc)
            return

        def on_done(done: Future[R]) -> None:
            error = done.exception()
            if isinstance(error, BrokenProcessPool):
                self._retry_or_fail(outer, args, retries, pool, error)
            elif error is not None:
                _fail(outer, error)
            else:
                _succeed(outer, done.result())

        inner.add_done_callback(on_done)

    def _retry_or_fail(
        self, outer: Future[R], args: tuple[Any, ...], retries: int, broken: ProcessPoolExecutor, error: BaseException
    ) -> None:
        replaced = self._replace(broken)  # also when this task has no retry left: the next ones need a pool
        if outer.done():  # abandoned by its caller (timed out): nobody needs it run again
            return
        if retries <= 0 or not replaced:
            _fail(outer, error)
            return
        self._attempt(outer, args, retries - 1)

    def _replace(self, broken: ProcessPoolExecutor) -> bool:
        """Swap in a new pool unless another document already did; False once shut down."""
        with self._lock:
            if self._closed:
                return False
            if self._pool is broken:
                logger.warning("an extraction worker died; starting a new pool", extra={"restarts": self.restarts + 1})
                self._pool = ProcessPoolExecutor(self._workers, mp_context=self._context)
                self.restarts += 1
        broken.shutdown(wait=False)
        return True
