"""Structured logging, per-call metrics and progress display for the jobs.

Logs are JSON lines when stderr is not a terminal (containers, CloudWatch) and readable text
otherwise. `CallMetrics` times every AWS call and keeps conditional-check failures apart from
real errors: a lost claim is an expected outcome, not an outage. It sees the domain errors the
store adapters raise (jobs.errors), never botocore's.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from jobs.errors import StoreConditionFailedError, StoreError

__all__ = ["LOG_FORMAT_ENV", "CallMetrics", "JsonFormatter", "interactive", "setup_logging"]

LOG_FORMAT_ENV = "DOCUFLOW_LOG_FORMAT"  # "json" forces JSON logs on a terminal too
_STANDARD_ATTRS = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        payload.update({k: v for k, v in vars(record).items() if k not in _STANDARD_ATTRS})
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


def interactive() -> bool:
    return sys.stderr.isatty() and os.environ.get(LOG_FORMAT_ENV, "") != "json"


def setup_logging(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if interactive():
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    else:
        handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("botocore", "urllib3", "boto3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


class CallMetrics:
    """Thread-safe counts and latencies per AWS operation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, list[float]] = defaultdict(list)
        self._errors: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self._conditional: dict[str, int] = defaultdict(int)

    @contextmanager
    def call(self, operation: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        except StoreConditionFailedError:
            with self._lock:
                self._conditional[operation] += 1
            raise
        except StoreError as exc:
            with self._lock:
                self._errors[operation][exc.code or type(exc).__name__] += 1
            raise
        except Exception as exc:
            with self._lock:
                self._errors[operation][type(exc).__name__] += 1
            raise
        finally:
            with self._lock:
                self._calls[operation].append(time.perf_counter() - started)

    def summary(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            out: dict[str, dict[str, Any]] = {}
            for op, latencies in sorted(self._calls.items()):
                ordered = sorted(latencies)
                out[op] = {
                    "calls": len(ordered),
                    "p50_ms": round(ordered[len(ordered) // 2] * 1000, 2),
                    "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2),
                    "conditional_check_failures": self._conditional.get(op, 0),
                    "errors": dict(self._errors.get(op, {})),
                }
            return out
