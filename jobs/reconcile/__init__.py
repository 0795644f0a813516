"""Reconciliation: DynamoDB items against the raw and processed buckets, findings and audit reports.

`inputs/` turns live reads or export/inventory files into the frames of `frames`; `rules` (pure
polars, over the shared machinery of `keys` and `join`, with `params`) and `sql` (the same rules in
Trino SQL) find the discrepancies, run by one of `engines/` (polars, duckdb, athena) behind one
interface; `findings` names and renders them, `repair` applies the safe fixes, `report` writes the
write-once audit report, and `run` orchestrates one run of a mode's plan (`plans`: live, files,
nightly, Athena) for `cli` (`python -m jobs reconcile live|files|nightly|athena`).

Every name is loaded on first use, so importing a module of this package (`jobs.reconcile.rules`,
or the job's declaration `jobs.reconcile.job`, which the Pulumi program reads) loads nothing else:
no boto3, botocore or pulumi, no polars through this package's import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobs.reconcile.findings import Code, Severity
    from jobs.reconcile.plans import AthenaPlan, AuditCheck, FilesPlan, LivePlan, NightlyPlan, Plan
    from jobs.reconcile.run import ReconcileOutcome, ReconcileRun

__all__ = [
    "AthenaPlan",
    "AuditCheck",
    "Code",
    "FilesPlan",
    "LivePlan",
    "NightlyPlan",
    "Plan",
    "ReconcileOutcome",
    "ReconcileRun",
    "Severity",
]
_FROM_FINDINGS = frozenset({"Code", "Severity"})
_FROM_RUN = frozenset({"ReconcileOutcome", "ReconcileRun"})
_FROM_PLANS = frozenset({"AthenaPlan", "AuditCheck", "FilesPlan", "LivePlan", "NightlyPlan", "Plan"})


def __getattr__(name: str) -> Any:
    if name in _FROM_FINDINGS:
        from jobs.reconcile import findings

        return getattr(findings, name)
    if name in _FROM_RUN:
        from jobs.reconcile import run

        return getattr(run, name)
    if name in _FROM_PLANS:
        from jobs.reconcile import plans

        return getattr(plans, name)
    raise AttributeError(f"module 'jobs.reconcile' has no attribute {name!r}")
