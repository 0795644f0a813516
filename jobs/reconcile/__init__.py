"""Reconciliation: DynamoDB items against the raw and processed buckets, findings and audit reports.

The job at the top: `cli` (`python -m jobs reconcile live|files|nightly|athena|acknowledge`),
`plans` (one frozen plan per mode), `run` (a plan -> an engine's findings -> repairs -> the report),
`nightly` (the scheduled chain), `repair` (the safe fixes), `acknowledge`, `summary` (a report's
summary models), `job` and `policy` (its declaration and task roles, which the Pulumi program reads).
Its library in subpackages: `rules/` (pure: findings, frames, keys, each rule in polars and in
Trino SQL), `chain/` (pure: what tonight exports, the inventories' freshness, the ledger of
findings across nights, coverage, the drill's age), `report/` (the report's files, view,
provenance, notice and CSV: the front `jobs.reports` reads), `engines/` (polars, duckdb, athena
behind one interface) and `inputs/` (live reads, exports, inventories, the kept table state).

Every name is loaded on first use, so importing a module of this package (`jobs.reconcile.rules.polars_rules`,
or the job's declaration `jobs.reconcile.job`, which the Pulumi program reads) loads nothing else:
no boto3, botocore or pulumi, no polars through this package's import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobs.reconcile.plans import AthenaPlan, AuditCheck, FilesPlan, LivePlan, NightlyPlan, Plan
    from jobs.reconcile.rules.findings import Code, Severity
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
        from jobs.reconcile.rules import findings

        return getattr(findings, name)
    if name in _FROM_RUN:
        from jobs.reconcile import run

        return getattr(run, name)
    if name in _FROM_PLANS:
        from jobs.reconcile import plans

        return getattr(plans, name)
    raise AttributeError(f"module 'jobs.reconcile' has no attribute {name!r}")
