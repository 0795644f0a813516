"""The job exceptions: one hierarchy so callers can tell bad input from broken infrastructure."""

from __future__ import annotations


class DocuFlowError(Exception):
    """Base class of every DocuFlow error."""


class InvalidIdError(DocuFlowError, ValueError):
    """A userId, documentId or filename breaks the contract's ID rules."""


class InvalidKeyError(DocuFlowError, ValueError):
    """A DynamoDB key or S3 key does not follow the storage layout."""


class InvalidTransitionError(DocuFlowError, ValueError):
    """A status change the contract does not allow."""


class SettingsError(DocuFlowError, ValueError):
    """A job setting from the environment is missing or malformed."""


class InfrastructureError(DocuFlowError):
    """AWS (or the local stack) is unreachable or denies access after bounded retries."""


class LocalStackError(DocuFlowError):
    """The embedded local stack could not be started or reached."""


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
    readable by Textract): a property of these bytes, so a retry would give the same answer."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"Textract refused the document: {code}: {message}")
        self.code = code


class TextractThrottledError(TextractError, InfrastructureError):
    """Textract still throttled after every attempt of the retry budget."""


class TextractUnavailableError(TextractError, InfrastructureError):
    """Textract failed, was unreachable, or denied access after the retry budget."""
