"""Waiting for a long AWS operation (an Athena query, a table export): check, sleep, give up.

Owns the schedule only; what a check means and what a timeout raises stay with each adapter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Polling:
    every_s: float
    timeout_s: float
    sleep: Callable[[float], None] = time.sleep

    def checks(self) -> Iterator[float]:
        """Seconds waited so far, once before each check, sleeping between checks; the iteration
        ends after the check made at or past the timeout (the caller then raises its timeout).
        """
        waited = 0.0
        while True:
            yield waited
            if waited >= self.timeout_s:
                return
            self.sleep(self.every_s)
            waited += self.every_s
