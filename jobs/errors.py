"""The job exceptions in families, and the one exit-code map they are read by.

Every DocuFlow error belongs to exactly one family, and a family says what to do about it:

- `TransientError` (exit 3): AWS or one of its services unreachable, throttled, timed out, not
  ready yet or failing a query; retry, or the next night runs it. `NotSettledError` (exit 4) is
  its sub-family of a run that lost a race or has more to do: run it again now.
- `TerminalError` (exit 2): bad input, a refusal, something not found, a conflict, a setting;
  running it again as it is fails the same way. Its sub-families (`BadInputError`,
  `RefusedError`, `NotFoundError`, `ConflictError`, `SettingsError`) all exit 2 and exist so a
  reader (and a caller's `except`) can name the kind.
- `RunStoppedError` (exit 143/130): told to stop, the work it held handed back.

Each class has one DocuFlow parent. Two mix-ins add what a family cannot say: `StoreError` marks
an error of the AWS boundary (jobs/store, translated from botocore and carrying its `code`), and
`ValueError` stays on the few errors callers catch as one: the ID, key and transition rules
pydantic validators run, and the settings `jobs local` and the audit stand-in refuse as a value.
An exception of no family (a plain ValueError or KeyError among them) is a bug: exit 70.
"""

from __future__ import annotations

from enum import IntEnum


class DocuFlowError(Exception):
    """Base class of every DocuFlow error; an error directly under it belongs to no family (exit 70)."""


class StoreError(Exception):
    """The mark of an error raised by the adapters under jobs/store (the only modules that speak
    AWS), chained from the botocore exception with `raise … from`, so nothing above the store
    imports botocore. `code` is the service's own error code (or the botocore class name), for
    metrics and messages. Not a family: each store error's family says what it means.
    """

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


# --- transient: retry, or the next night ------------------------------------------------------


class TransientError(DocuFlowError):
    """Worth running again: AWS or a service did not answer, or not yet (exit 3)."""


class InfrastructureError(TransientError):
    """AWS (or the local stack) is unreachable or denies access after bounded retries."""


class StoreUnavailableError(StoreError, InfrastructureError):
    """Unreachable, throttled or failing after botocore's bounded retries: the run stops (exit 3)."""


class StoreAccessDeniedError(StoreUnavailableError):
    """The credentials may not make this call (IAM, KMS, bucket policy)."""


class StoreRequestError(StoreError, InfrastructureError):
    """AWS refused the request for a reason none of the adapters expects."""


class DynamoTransactionNotSettledError(StoreUnavailableError):
    """Conditional puts that neither landed nor lost their condition after bounded retries."""


class TextractThrottledError(StoreUnavailableError):
    """Textract still throttled after every attempt of the retry budget."""


class TextractUnavailableError(StoreUnavailableError):
    """Textract failed, was unreachable, or denied access after the retry budget."""


class TextractJobTimeoutError(TransientError):
    """An asynchronous job was still IN_PROGRESS when the poll budget ran out."""


class TextractPagesCapError(TransientError):
    """The run's Textract page cap would be passed by this document: it is handed back (its
    message left in the queue for the next night), neither failed nor counted as an attempt.
    """


class S3ObjectArchivedError(StoreError, TransientError):
    """The object is in an archive storage class (GLACIER, DEEP_ARCHIVE) and not restored: S3
    answers a GET with 403 InvalidObjectState. Not an outage and not access denied: the one
    document waits for a restore (`python -m jobs restore-archived`), then a later run reads it.
    `reason` is the code reports and failures carry (ARCHIVED).
    """

    reason = "ARCHIVED"


class StreamPositionLostError(StoreError, TransientError):
    """A stream position is gone: its iterator expired (15 minutes) or the records were trimmed
    (24 hours). An expired iterator is fetched again; trimmed records are a gap in what was read.
    """


class ExportNotReadyError(TransientError):
    """A DynamoDB export did not complete (still in progress past the wait, or failed)."""


class ReconcileQueryError(TransientError):
    """A reconcile engine's query failed, was cancelled or scanned more than its cutoff allows."""


class AuditQueryError(TransientError):
    """An audit query failed on its engine, or the change log could not be read."""


class RestoreFailedError(TransientError):
    """A restore AWS accepted did not complete (a restore job that failed, a table never ACTIVE)."""


class NotSettledError(TransientError):
    """Another writer won a race, or the work kept growing: run it again now (exit 4)."""


class ReviewConflictError(NotSettledError):
    """A review action lost a race (a re-upload or another reviewer changed the document since it
    was read): nothing of it was kept; read the document again.
    """


class ErasureNotSettledError(NotSettledError):
    """An erasure whose passes kept finding new data, or whose marker another run is writing:
    what it deleted stays deleted, and running it again resumes it.
    """


# --- terminal: the same call fails the same way -----------------------------------------------


class TerminalError(DocuFlowError):
    """Running it again as it is fails the same way: fix the call, the input or the settings (exit 2)."""


class BadInputError(TerminalError):
    """An option, an argument, an id or a file the run cannot use as given."""


class InvalidIdError(BadInputError, ValueError):
    """A userId, documentId, actor or filename breaks the contract's ID rules."""


class InvalidKeyError(BadInputError, ValueError):
    """A DynamoDB key or S3 key does not follow the storage layout."""


class DynamoTokenInvalidError(StoreError, InvalidKeyError):
    """A pagination token this API did not issue (forged, truncated, or for another query)."""


class QueueMessageInvalidError(BadInputError):
    """An arrival-queue message that is not an S3 event notification we can read."""


class ReconcileInputError(BadInputError):
    """An export or inventory is missing, incomplete, damaged or of an unsupported format."""


class RefusedError(TerminalError):
    """Asked for what the state does not allow: nothing was changed."""


class InvalidTransitionError(RefusedError, ValueError):
    """A status change the contract does not allow."""


class ReviewRefusedError(RefusedError):
    """A review action refused as asked: a bad correction, a document not in review, not the
    caller's (or another user's), or claimed by someone else. Nothing was changed.
    """


class LifecycleRefusedError(RefusedError):
    """A delete, restore, hold or erasure the document's state does not allow."""


class DocumentNotFoundError(LifecycleRefusedError):
    """No such document of the user (another user's is not found either): never existed, or
    deleted for good.
    """


class ErasureUnknownUserError(LifecycleRefusedError):
    """An erasure of a user of whom nothing is stored (and no recent erasure): bad input."""


class DocumentChangedError(LifecycleRefusedError):
    """Another writer changed the document while an action ran: nothing of the action's item
    write landed; running it again decides on the new state.
    """


class RestoreRequestError(RefusedError):
    """A restore the drill cannot make as asked (a time outside the window, a target table that
    exists or is not a drill table, no backup or export to restore from): nothing was created.
    """


class DynamoItemRejectedError(StoreError, RefusedError):
    """DynamoDB refused to store an item as given (ValidationException): a bad value in that one
    item, not an outage. A batch that contains it is resent one item at a time.
    """


class TextractDocumentRejectedError(RefusedError):
    """Textract refused the document itself (unsupported, bad or too large, or the object is not
    readable by Textract): a property of these bytes, so a retry would give the same answer.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"Textract refused the document: {code}: {message}")
        self.code = code


class TextractJobFailedError(RefusedError):
    """An asynchronous expense analysis job ended FAILED (bad PDF, unsupported content, …)."""

    def __init__(self, job_id: str, message: str) -> None:
        super().__init__(f"Textract job {job_id} failed: {message}")
        self.job_id = job_id


class NotFoundError(TerminalError):
    """What the call names does not exist."""


class S3ObjectMissingError(StoreError, NotFoundError):
    """The object (or bucket key) does not exist (NoSuchKey, 404)."""


class S3ObjectLockMissingError(StoreError, NotFoundError):
    """The bucket or version has no Object Lock configuration (so no legal hold either)."""


class ConflictError(TerminalError):
    """A write that met another writer's state: an expected outcome the caller decides on."""


class StoreConditionFailedError(StoreError, ConflictError):
    """A conditional request lost its condition: an expected outcome, never an outage."""


class S3ObjectChangedError(StoreConditionFailedError):
    """An If-Match read or write met a different ETag: the object changed since we saw it."""


class S3ObjectExistsError(StoreConditionFailedError):
    """A write-once put (If-None-Match: *) found the key taken."""


class SettingsError(TerminalError, ValueError):
    """A job setting from the environment is missing or malformed."""


class StoreResourceMissingError(StoreError, SettingsError):
    """The table, bucket or queue the settings name does not exist (a configuration error)."""


class LocalStackError(TerminalError):
    """The embedded local stack could not be started or reached (the machine's setup to fix)."""


# --- a stop ------------------------------------------------------------------------------------


class RunStoppedError(DocuFlowError):
    """The run was told to stop (SIGTERM, SIGINT): work it cut off is handed back, not failed."""


# --- exit codes ------------------------------------------------------------------------------
# One map for every CLI (docs/operations.md, Exit codes): a scheduler, an alarm or a person reads
# the same number the same way whichever job ended with it.


class ExitCode(IntEnum):
    SUCCESS = 0
    # The run completed and judged the night bad: reconcile findings at --fail-on, an ingest whose
    # failed-document ratio passed the stack's threshold, a drill that missed its targets.
    FINDINGS = 1
    BAD_INPUT = 2  # terminal: bad input, refused, not found, a conflict, settings
    UNAVAILABLE = 3  # transient: unreachable, throttled, timed out, not ready: retry or the next night
    NOT_SETTLED = 4  # a review conflict or an erasure still finding data: run it again
    # An exception no family covers: a bug, with its traceback in the log (sysexits'
    # EX_SOFTWARE), never read as findings (1) or bad input (2).
    INTERNAL = 70
    SIGINT = 130  # stopped by a signal, work handed back first (128 + the signal's number)
    SIGTERM = 143


# Each family's exit code, a sub-family before its family: the first that holds is the code.
FAMILY_EXITS: tuple[tuple[type[DocuFlowError], ExitCode], ...] = (
    (RunStoppedError, ExitCode.SIGTERM),
    (NotSettledError, ExitCode.NOT_SETTLED),
    (TransientError, ExitCode.UNAVAILABLE),
    (TerminalError, ExitCode.BAD_INPUT),
)


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit code of a run that ended with `exc`: its family's (FAMILY_EXITS), else INTERNAL.

    A stop is SIGTERM's code here; the run context knows the signal (jobs.runtime.signals).
    """
    for family, code in FAMILY_EXITS:
        if isinstance(exc, family):
            return code
    return ExitCode.INTERNAL
