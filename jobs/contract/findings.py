"""The reconcile's finding codes: the names its reports, its metrics (the `Code` dimension) and
its alarms carry, and the change-log rule of the audit (`jobs.audit.sql`) writes two of.

Only the names live here; what each means, its severity and its remedy are the reconcile's
(`jobs.reconcile.rules.findings.DEFINITIONS`). Pure.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Code"]


class Code(StrEnum):
    ORPHAN_RESULT = "ORPHAN_RESULT"
    MISSING_RESULT = "MISSING_RESULT"
    UNPROCESSED_RAW = "UNPROCESSED_RAW"
    MISSING_RAW = "MISSING_RAW"
    STALE_RESULT = "STALE_RESULT"
    STUCK_PROCESSING = "STUCK_PROCESSING"
    INDEX_DRIFT = "INDEX_DRIFT"
    KEY_MISMATCH = "KEY_MISMATCH"
    SUMMARY_MISMATCH = "SUMMARY_MISMATCH"
    BAD_KEY = "BAD_KEY"
    RESULT_SOURCE_MISMATCH = "RESULT_SOURCE_MISMATCH"
    RESULT_UNREADABLE = "RESULT_UNREADABLE"
    ORPHAN_MARKER = "ORPHAN_MARKER"
    MISSING_MARKER = "MISSING_MARKER"
    DELETED_RAW_EXISTS = "DELETED_RAW_EXISTS"
    # --audit-log: the change log (docs/audit.md) against the table and itself.
    AUDIT_GAP = "AUDIT_GAP"
    AUDIT_ANOMALY = "AUDIT_ANOMALY"
    AUDIT_UNDELIVERED = "AUDIT_UNDELIVERED"
    # A document's life, judged on object versions (jobs.reconcile.rules.lifecycle; polars runs that read S3).
    RETENTION_TAG_MISMATCH = "RETENTION_TAG_MISMATCH"
    LEGAL_HOLD_MISSING = "LEGAL_HOLD_MISSING"
    NOT_HARD_DELETED = "NOT_HARD_DELETED"
    # The nightly run's inputs (jobs.reconcile.chain.freshness): S3 Inventory not delivered, or no longer.
    INVENTORY_MISSING = "INVENTORY_MISSING"
    INVENTORY_STALE = "INVENTORY_STALE"
