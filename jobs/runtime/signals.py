"""Stop on SIGTERM and SIGINT: ECS stopping a task (then SIGKILL after its stopTimeout, 30 s by
default), a Spot interruption, Ctrl-C.

A signal never interrupts a job where it stands: the handler records it, sets the flag and runs
the stop callbacks the job registered on a thread of their own (the handler runs between two
bytecodes of the main thread, possibly inside a lock that thread holds). The job looks at the
flag where stopping leaves nothing half-written (`check`, which raises RunStoppedError), hands
back what it holds, and the run ends with 128 + the signal's number (jobs.errors.ExitCode).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from jobs.errors import ExitCode, RunStoppedError

logger = logging.getLogger(__name__)

STOP_SIGNALS = {signal.SIGTERM: ExitCode.SIGTERM, signal.SIGINT: ExitCode.SIGINT}


class StopFlag:
    """Whether the run was told to stop, by which signal, and who to tell."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._signal: signal.Signals | None = None
        self._callbacks: list[Callable[[str], None]] = []

    @property
    def stopping(self) -> bool:
        return self._event.is_set()

    @property
    def exit_code(self) -> ExitCode:
        """128 + the signal that stopped the run (SIGTERM's when the stop had no signal)."""
        return STOP_SIGNALS.get(self._signal or signal.SIGTERM, ExitCode.SIGTERM)

    def on_stop(self, callback: Callable[[str], None]) -> None:
        """Call `callback(reason)` when a stop arrives (at once if one already has)."""
        with self._lock:
            self._callbacks.append(callback)
            reason = self._reason() if self.stopping else None
        if reason is not None:
            callback(reason)

    def request(self, signum: signal.Signals = signal.SIGTERM) -> None:
        """Stop, as `signum` would (the handler's body; tests drive the flag with it)."""
        with self._lock:
            if self._signal is None:
                self._signal = signum
            self._event.set()
            callbacks, reason = list(self._callbacks), self._reason()
        logger.warning("stop requested", extra={"signal": signum.name})
        for callback in callbacks:
            callback(reason)

    def check(self, where: str = "") -> None:
        """Raise RunStoppedError if the run was told to stop: call it where stopping is clean."""
        if self.stopping:
            raise RunStoppedError(self._reason() + (f" {where}" if where else ""))

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, woken by a stop; True when stopping."""
        return self._event.wait(seconds)

    def _reason(self) -> str:
        return f"stopped by {(self._signal or signal.SIGTERM).name}"

    @contextmanager
    def installed(self) -> Iterator[StopFlag]:
        """The SIGTERM and SIGINT handlers set while the run lasts, the previous ones restored."""

        def handle(signum: int, _frame: FrameType | None) -> None:
            threading.Thread(target=self.request, args=(signal.Signals(signum),), name="stop", daemon=True).start()

        if threading.current_thread() is not threading.main_thread():
            yield self  # Python sets handlers from the main thread only (a run on a test's thread)
            return
        previous = {signum: signal.signal(signum, handle) for signum in STOP_SIGNALS}
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
