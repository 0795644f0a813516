"""The reconciliation rules, pure: what a run finds (`findings`: codes, severities, the findings
frame), the frames every input yields (`frames`), keys as the rules read them (`keys`), what the
rules are told (`params`), each rule twice, in polars (`polars_rules`, over `join`) and in Trino
SQL (`sql_rules`, which DuckDB runs too), and the rules that need versions, holds and tags
(`lifecycle`) or the change log (`audit_rule`).

The front other jobs read findings through: `Severity`, `Code`, an empty frame of a schema.
"""

from __future__ import annotations

from jobs.reconcile.rules.findings import Code, Severity
from jobs.reconcile.rules.frames import empty

__all__ = ["Code", "Severity", "empty"]
