"""The Textract pages a run may spend (`textract_max_pages`), reserved before each call.

Textract bills per page, and a document's pages are known only once its bytes are read (a PDF's
page count; an image is one page). So the pages are reserved after detection and before the
call: a reservation that would pass the cap is refused, and the document is deferred (handed
back, its message made visible again when the run closes, for the next night), never failed.
A refused reservation spends nothing, so a smaller document after it may still fit: the cap is
never passed, and what is deferred is what did not fit. A reservation is not given back when a
call fails: Textract bills the pages it read.
"""

from __future__ import annotations

import io
import logging
import threading

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from jobs.contract import DocumentFormat

logger = logging.getLogger(__name__)


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


class PageBudget:
    """Thread-safe: the I/O threads reserve, the summary reads what was spent."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self._lock = threading.Lock()
        self.spent = 0

    def reserve(self, pages: int) -> bool:
        """Take `pages` from the budget; False (nothing taken) when they would pass the cap."""
        with self._lock:
            if self.cap is not None and self.spent + pages > self.cap:
                return False
            self.spent += pages
            return True
