"""The Textract pages a night may spend (`textract_max_pages`), reserved before each call.

Textract bills per page, and a document's pages are known only once its bytes are read (a PDF's
page count; an image is one page). So the pages are reserved after detection and before the
call: a reservation that would pass the cap is refused, and the document is deferred (handed
back, its message made visible again when the run closes, for the next night), never failed.
A refused reservation spends nothing, so a smaller document after it may still fit: the cap is
never passed, and what is deferred is what did not fit. A reservation is not given back when a
call fails: Textract bills the pages it read.

The cap is the night's, not a process's: every ingest task of the night, a scheduler retry and a
manual backfill reserve from one counter in the table (`DocumentTable.reserve_textract_pages`, a
conditional UpdateItem), so N tasks cannot spend N caps. The night is the date, in the stack's
schedule zone, of the time the schedule meant the run to start (a retry keeps its night), or of
the run's start for a manual run. Without a counter (a run driven by hand in a test) the budget
is this process's alone.
"""

from __future__ import annotations

import io
import logging
import threading
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from jobs.contract import DocumentFormat

logger = logging.getLogger(__name__)

# A night's counter outlives its night by this long (a few days' look back for an operator).
COUNTER_KEEP_DAYS = 7


def page_count(data: bytes, fmt: DocumentFormat) -> int:
    """The pages Textract will bill for these bytes: a PDF's pages, else one (an image)."""
    if fmt != DocumentFormat.PDF:
        return 1
    try:
        return max(1, len(PdfReader(io.BytesIO(data), strict=False).pages))
    except (PyPdfError, ValueError, OSError) as exc:
        # Unreadable here is not unreadable for Textract: reserve a page, as it bills at least one.
        logger.info("page count unknown, one page reserved", extra={"error": str(exc)})
        return 1


def night_of(moment: datetime, zone: str) -> date:
    """The night a run started (or meant to start) at `moment` spends from: its date in `zone`."""
    return moment.astimezone(ZoneInfo(zone)).date()


def counter_expiry(night: date) -> int:
    """The counter's TTL (epoch seconds): COUNTER_KEEP_DAYS after its night."""
    return int(datetime.combine(night + timedelta(days=COUNTER_KEEP_DAYS), time(), UTC).timestamp())


class NightCounter(Protocol):
    """Where a night's pages are counted across processes (jobs.store.dynamo.DocumentTable)."""

    def reserve_textract_pages(self, night: date, pages: int, cap: int, expires_at: int) -> int | None: ...


class PageBudget:
    """Thread-safe: the I/O threads reserve, the summary reads what was spent.

    `spent` is what this run reserved; `night_spent` the night's counter after this run's last
    reservation (every task's pages), None without a counter.
    """

    def __init__(self, cap: int | None, *, night: date | None = None, counter: NightCounter | None = None) -> None:
        self.cap = cap
        self.night = night if counter is not None and cap is not None else None
        self._counter = counter
        self._lock = threading.Lock()
        self.spent = 0
        self.night_spent: int | None = None

    def reserve(self, pages: int) -> bool:
        """Take `pages` from the budget; False (nothing taken) when they would pass the cap."""
        if self.cap is not None and self._counter is not None and self.night is not None:  # the night's cap
            total = self._counter.reserve_textract_pages(self.night, pages, self.cap, counter_expiry(self.night))
            if total is None:
                return False
            with self._lock:
                self.spent += pages
                self.night_spent = max(self.night_spent or 0, total)
            return True
        with self._lock:
            if self.cap is not None and self.spent + pages > self.cap:
                return False
            self.spent += pages
            return True
