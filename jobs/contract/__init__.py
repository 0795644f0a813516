"""The storage contract: names, keys, ID rules, statuses and the models of what is stored.

The only place the layout is spelled (see `layout`); importable without boto3 or Pulumi.
"""

from jobs.contract import layout
from jobs.contract.duplicates import DuplicateKind, DuplicateMarker
from jobs.contract.invoice import (
    DocumentFormat,
    DocumentType,
    ExtractionOutcome,
    FailureCode,
    Invoice,
    LineItem,
    ValidationResult,
)
from jobs.contract.item import (
    ITEM_ATTRIBUTES,
    Correction,
    DocumentItem,
    ResultDocument,
    ReviewRecord,
    Settlement,
    SourceObject,
    finished_item,
    held_fields,
    held_marker,
    summary_fields,
    tombstone,
)
from jobs.contract.objects import ObjectInfo, bare_etag
from jobs.contract.retention import RetentionClass, RetentionPolicy
from jobs.contract.schema import (
    BucketSpec,
    CorsSpec,
    ExpirySpec,
    LifecycleSpec,
    ObjectLockSpec,
    QueueSpec,
    TableSpec,
    audit_data_spec,
    bucket_specs,
    queue_spec,
    table_spec,
)
from jobs.contract.status import TERMINAL, Status, can_transition, check_transition

__all__ = [
    "ITEM_ATTRIBUTES",
    "TERMINAL",
    "BucketSpec",
    "Correction",
    "CorsSpec",
    "DocumentFormat",
    "DocumentItem",
    "DocumentType",
    "DuplicateKind",
    "DuplicateMarker",
    "ExpirySpec",
    "ExtractionOutcome",
    "FailureCode",
    "Invoice",
    "LifecycleSpec",
    "LineItem",
    "ObjectInfo",
    "ObjectLockSpec",
    "QueueSpec",
    "ResultDocument",
    "RetentionClass",
    "RetentionPolicy",
    "ReviewRecord",
    "Settlement",
    "SourceObject",
    "Status",
    "TableSpec",
    "ValidationResult",
    "audit_data_spec",
    "bare_etag",
    "bucket_specs",
    "can_transition",
    "check_transition",
    "finished_item",
    "held_fields",
    "held_marker",
    "layout",
    "queue_spec",
    "summary_fields",
    "table_spec",
    "tombstone",
]
