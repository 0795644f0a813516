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
