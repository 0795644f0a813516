"""Progress of long work: a bar on a terminal, a JSON log line every few seconds in a container."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from jobs.observability import interactive

logger = logging.getLogger(__name__)


class Ticker:
    def __init__(self, label: str, log_every: float = 10.0) -> None:
        self._label = label
        self._log_every = log_every
        self._count = 0
        self._lock = threading.Lock()
        self._last_log = time.monotonic()
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def advance(self, _item: object = None) -> None:
        with self._lock:
            self._count += 1
            if self._bar is not None and self._task is not None:
                self._bar.update(self._task, completed=self._count)
            elif time.monotonic() - self._last_log >= self._log_every:
                self._last_log = time.monotonic()
                logger.info("progress", extra={"task": self._label, "done": self._count})

    @contextmanager
    def shown(self) -> Iterator[Ticker]:
        if not interactive():
            yield self
            return
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
        ) as bar:
            self._bar = bar
            self._task = bar.add_task(self._label, total=None)
            yield self
            self._bar = None
