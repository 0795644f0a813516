"""DocuFlow batch jobs: ingest, reconcile, extraction and the local stack.

The packages below are the public front (`python -m jobs` runs the registry's commands); the dev
stack (`local`, `demo`) is left out: the job image does not carry it.
"""

__all__ = [
    "audit",
    "contract",
    "documents",
    "erasure",
    "errors",
    "extract",
    "ingest",
    "observability",
    "progress",
    "reconcile",
    "recovery",
    "reports",
    "review",
    "runtime",
    "settings",
    "sql",
    "store",
]
