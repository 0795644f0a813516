"""Reconciliation: DynamoDB items against the raw and processed buckets, findings and audit reports.

`sources` turns live reads or export/inventory files into frames, `rules` (pure polars) finds the
discrepancies, `repair` applies the safe fixes, `report` writes the write-once audit report, and
`run` orchestrates one run for `cli` (`python -m jobs reconcile`).
"""

from jobs.reconcile.rules import Code, Severity
from jobs.reconcile.run import ReconcileOptions, ReconcileOutcome, ReconcileRun

__all__ = ["Code", "ReconcileOptions", "ReconcileOutcome", "ReconcileRun", "Severity"]
