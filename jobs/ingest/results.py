"""What became of one document in a run: the record the run summary counts."""

from __future__ import annotations

from dataclasses import dataclass

from jobs.contract import DocumentFormat, Status


@dataclass(frozen=True)
class DocumentResult:
    user_id: str
    document_id: str
    key: str
    status: Status | None  # None: nothing of this run's was written (claim lost, or a stale event)
    format: DocumentFormat | None = None
    failure_code: str | None = None
    failure_message: str | None = None
    stale: bool = False  # the raw object had changed since the event or listing
    duplicate_of: tuple[str, ...] = ()  # the reasons naming the documents it duplicates
