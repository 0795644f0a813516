"""The job exceptions: one hierarchy so callers can tell bad input from broken infrastructure."""

from __future__ import annotations

import json
from enum import IntEnum

from pydantic import ValidationError


class DocuFlowError(Exception):
    """Base class of every DocuFlow error."""


class InvalidIdError(DocuFlowError, ValueError):
    """A userId, documentId or filename breaks the contract's ID rules."""


class InvalidKeyError(DocuFlowError, ValueError):
    """A DynamoDB key or S3 key does not follow the storage layout."""


class InvalidTransitionError(DocuFlowError, ValueError):
    """A status change the contract does not allow."""


class ReviewRefusedError(DocuFlowError, ValueError):
    """A review action refused as asked: a bad correction, a document not in review, not the
    caller's (or another user's), or claimed by someone else. Nothing was changed.
    """


class ReviewConflictError(DocuFlowError):
    """A review action lost a race (a re-upload or another reviewer changed the document since it
    was read): nothing of it was kept; read the document again.
    """


class LifecycleRefusedError(DocuFlowError, ValueError):
    """A delete, restore, hold or erasure the document's state does not allow (bad input: exit 2)."""


class DocumentNotFoundError(LifecycleRefusedError):
    """No such document of the user (another user's is not found either): never existed, or
    deleted for good.
    """


class ErasureUnknownUserError(LifecycleRefusedError):
    """An erasure of a user of whom nothing is stored (and no recent erasure): bad input."""


class ErasureNotSettledError(DocuFlowError):
    """An erasure whose passes kept finding new data, or whose marker another run is writing:
    what it deleted stays deleted, and running it again resumes it.
    """


class DocumentChangedError(LifecycleRefusedError):
    """Another writer changed the document while an action ran: nothing of the action's item
    write landed; running it again decides on the new state.
    """


class SettingsError(DocuFlowError, ValueError):
    """A job setting from the environment is missing or malformed."""


class InfrastructureError(DocuFlowError):
    """AWS (or the local stack) is unreachable or denies access after bounded retries."""


class LocalStackError(DocuFlowError):
    """The embedded local stack could not be started or reached."""


# --- the AWS boundary ----------------------------------------------------------------------
# Raised by the adapters under jobs/store (the only modules that speak AWS), chained from the
# botocore exception with `raise … from`, so nothing above the store imports botocore. `code` is
# the service's own error code (or the botocore class name), for metrics and messages.


class StoreError(DocuFlowError):
    """A call to AWS (or the local stack) failed; `code` says how."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class StoreUnavailableError(StoreError, InfrastructureError):
    """Unreachable, throttled or failing after botocore's bounded retries: the run stops (exit 3)."""


class StoreAccessDeniedError(StoreUnavailableError):
    """The credentials may not make this call (IAM, KMS, bucket policy)."""


class StoreResourceMissingError(StoreError, SettingsError):
    """The table, bucket or queue the settings name does not exist (a configuration error)."""


class StoreRequestError(StoreError, InfrastructureError):
    """AWS refused the request for a reason none of the adapters expects."""


class StoreConditionFailedError(StoreError):
    """A conditional request lost its condition: an expected outcome, never an outage."""


class S3ObjectMissingError(StoreError):
    """The object (or bucket key) does not exist (NoSuchKey, 404)."""


class S3ObjectArchivedError(StoreError):
    """The object is in an archive storage class (GLACIER, DEEP_ARCHIVE) and not restored: S3
    answers a GET with 403 InvalidObjectState. Not an outage and not access denied: the one
    document waits for a restore (`python -m jobs restore-archived`), then a later run reads it.
    `reason` is the code reports and failures carry (ARCHIVED).
    """

    reason = "ARCHIVED"


class S3ObjectLockMissingError(StoreError):
    """The bucket or version has no Object Lock configuration (so no legal hold either)."""


class S3ObjectChangedError(StoreConditionFailedError):
    """An If-Match read or write met a different ETag: the object changed since we saw it."""


class S3ObjectExistsError(StoreConditionFailedError):
    """A write-once put (If-None-Match: *) found the key taken."""


class DynamoItemRejectedError(StoreError):
    """DynamoDB refused to store an item as given (ValidationException): a bad value in that one
    item, not an outage. A batch that contains it is resent one item at a time.
    """


class DynamoTransactionNotSettledError(StoreUnavailableError):
    """Conditional puts that neither landed nor lost their condition after bounded retries."""


class StreamPositionLostError(StoreError):
    """A stream position is gone: its iterator expired (15 minutes) or the records were trimmed
    (24 hours). An expired iterator is fetched again; trimmed records are a gap in what was read.
    """


class DynamoTokenInvalidError(StoreError, InvalidKeyError):
    """A pagination token this API did not issue (forged, truncated, or for another query)."""


class QueueMessageInvalidError(DocuFlowError, ValueError):
    """An arrival-queue message that is not an S3 event notification we can read."""


class RunStoppedError(DocuFlowError):
    """The run was told to stop (SIGTERM, SIGINT): work it cut off is handed back, not failed."""


class TextractPagesCapError(DocuFlowError):
    """The run's Textract page cap would be passed by this document: it is handed back (its
    message left in the queue for the next night), neither failed nor counted as an attempt.
    """


class TextractError(DocuFlowError):
    """Amazon Textract could not read a document (translated from AWS errors by jobs.store.textract)."""


class TextractJobFailedError(TextractError):
    """An asynchronous expense analysis job ended FAILED (bad PDF, unsupported content, …)."""

    def __init__(self, job_id: str, message: str) -> None:
        super().__init__(f"Textract job {job_id} failed: {message}")
        self.job_id = job_id


class TextractJobTimeoutError(TextractError):
    """An asynchronous job was still IN_PROGRESS when the poll budget ran out."""


class TextractDocumentRejectedError(TextractError):
    """Textract refused the document itself (unsupported, bad or too large, or the object is not
    readable by Textract): a property of these bytes, so a retry would give the same answer.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"Textract refused the document: {code}: {message}")
        self.code = code


class TextractThrottledError(TextractError, StoreUnavailableError):
    """Textract still throttled after every attempt of the retry budget."""


class TextractUnavailableError(TextractError, StoreUnavailableError):
    """Textract failed, was unreachable, or denied access after the retry budget."""


class ReconcileInputError(DocuFlowError, ValueError):
    """An export or inventory is missing, incomplete, damaged or of an unsupported format."""


class ReconcileQueryError(DocuFlowError):
    """A reconcile engine's query failed, was cancelled or scanned more than its cutoff allows."""


class AuditQueryError(DocuFlowError):
    """An audit query failed on its engine, or the change log could not be read."""


class ExportNotReadyError(DocuFlowError):
    """A DynamoDB export did not complete (still in progress past the wait, or failed)."""


class RestoreRequestError(DocuFlowError, ValueError):
    """A restore the drill cannot make as asked (a time outside the window, a target table that
    exists or is not a drill table, no backup or export to restore from): nothing was created.
    """


class RestoreFailedError(DocuFlowError):
    """A restore AWS accepted did not complete (a restore job that failed, a table never ACTIVE)."""


# --- exit codes ------------------------------------------------------------------------------
# One map for every CLI (docs/operations.md, Exit codes): a scheduler, an alarm or a person reads
# the same number the same way whichever job ended with it.


class ExitCode(IntEnum):
    SUCCESS = 0
    # The run completed and judged the night bad: reconcile findings at --fail-on, an ingest whose
    # failed-document ratio passed the stack's threshold, a drill that missed its targets.
    FINDINGS = 1
    BAD_INPUT = 2  # options, settings, a missing resource, inputs the run refuses
    UNAVAILABLE = 3  # AWS (or the local stack) unreachable or denying access after bounded retries
    NOT_SETTLED = 4  # a review conflict or an erasure still finding data: run it again
    # An exception no domain error covers: a bug, with its traceback in the log (sysexits'
    # EX_SOFTWARE), never read as findings (1) or bad input (2).
    INTERNAL = 70
    SIGINT = 130  # stopped by a signal, work handed back first (128 + the signal's number)
    SIGTERM = 143


# ValueErrors Python and pydantic raise that are never the caller's input once the CLI has parsed
# its arguments: a model our code built from what it read or computed, JSON or text it decoded.
# Input the run refuses is a domain error (or a plain ValueError from an option check, as
# IngestOptions raises); these are a bug or damaged data the caller cannot fix: exit 70.
NOT_INPUT: tuple[type[ValueError], ...] = (ValidationError, json.JSONDecodeError, UnicodeError)


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit code of a run that ended with `exc`: a domain error, or a ValueError from an
    option check, by its kind; anything else (a pydantic, JSON or Unicode error outside a domain
    error among them) is INTERNAL.

    A stop is SIGTERM's code here; the run context knows the signal (jobs.runtime.signals).
    """
    if isinstance(exc, RunStoppedError):
        return ExitCode.SIGTERM
    if isinstance(exc, InfrastructureError | RestoreFailedError):
        return ExitCode.UNAVAILABLE
    if isinstance(exc, ReviewConflictError | ErasureNotSettledError):
        return ExitCode.NOT_SETTLED
    if isinstance(exc, DocuFlowError) or (isinstance(exc, ValueError) and not isinstance(exc, NOT_INPUT)):
        return ExitCode.BAD_INPUT
    return ExitCode.INTERNAL
