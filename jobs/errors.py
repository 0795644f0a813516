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


class StoreUnavailableError(InfrastructureError):
    """An AWS call failed for a reason of the service, not of the request: unreachable,
    throttled past the retry budget, or an error the adapter does not know (jobs.store)."""


class StoreAccessDeniedError(InfrastructureError):
    """AWS refused a call for lack of permission (IAM, bucket or key policy)."""


class StoreObjectMissingError(DocuFlowError, LookupError):
    """The S3 object or DynamoDB resource a call named does not exist (any more)."""


class ReconcileInputError(DocuFlowError, ValueError):
    """An export or inventory is missing, incomplete, damaged or of an unsupported format."""


class ReconcileQueryError(DocuFlowError):
    """A reconcile engine's query failed, was cancelled or scanned more than its cutoff allows."""


class ExportNotReadyError(DocuFlowError):
    """A DynamoDB export did not complete (still in progress past the wait, or failed)."""
