"""What a reconcile run judged: the codes its mode looks for and the scope (table, buckets) it
read, derived from its report's summary (the plan's options, the engine, whether anything was
judged at all). Pure.

The ledger (`ledger.carry`) resolves only what a run judged: a finding the run could not have
found (a night that judged nothing because the inventory was missing or stale; a nightly run
after a manual `--deep`, which does not read result.json; a live run, which does not check
inventory freshness) is carried unchanged, not "resolved". The report (`report_view.excluded`)
lists the same codes as not looked for, so a zero is never read as a check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from jobs.reconcile.rules.findings import AUDIT_CODES, INVENTORY_CODES, Code

if TYPE_CHECKING:
    from jobs.reconcile.summary import ReconcileSummary

# Codes only a run that reads result.json contents (--deep) finds; KEY_MISMATCH has a deep shape
# too (a result.json whose ids disagree with its key: the rows that name an object key).
DEEP_CODES = (Code.SUMMARY_MISMATCH, Code.RESULT_SOURCE_MISMATCH, Code.RESULT_UNREADABLE)
_VERSIONS = (Code.LEGAL_HOLD_MISSING, Code.NOT_HARD_DELETED)


@dataclass(frozen=True)
class Recorded:
    """A run's mode and how it judged, as its report's `options` record them: the plan itself
    (`{"mode": …, **its fields}`, `plans.record`), or the flat record of the reports written before
    (`source`, `nightly`, `deep`, `audit_log`, …): old reports are read and verified as written.
    """

    mode: str  # live | files | nightly | athena
    nightly: bool  # the nightly chain: `nightly`, or `athena --nightly`
    deep: bool
    audit_log: bool
    grace: float  # seconds
    stuck_after: float  # seconds

    @classmethod
    def of(cls, options: dict[str, Any], source: str = "") -> Recorded:
        if "mode" in options:
            mode, audit_log = str(options["mode"]), options.get("audit") is not None
        else:
            flat_source = str(options.get("source", source))
            mode = "nightly" if options.get("nightly") and flat_source == "files" else flat_source
            audit_log = bool(options.get("audit_log"))
        return cls(
            mode=mode,
            nightly=mode == "nightly" or bool(options.get("nightly")),
            deep=bool(options.get("deep")),
            audit_log=audit_log,
            grace=float(options.get("grace", 0)),
            stuck_after=float(options.get("stuck_after", 0)),
        )


@dataclass(frozen=True)
class Excluded:
    """Codes a run did not look for, and why."""

    codes: tuple[Code, ...]
    why: str


def excluded(options: dict[str, Any], engine: str, not_judged: str | None = None) -> list[Excluded]:
    """The codes a run with these options (summary.json's `options`) on `engine` does not look
    for; with `not_judged` (a night whose inventories could not be judged), every code but the
    inventories' own.
    """
    if not_judged:
        rest = tuple(code for code in Code if code not in INVENTORY_CODES)
        return [Excluded(rest, f"nothing was judged tonight: {not_judged}")]
    run = Recorded.of(options)
    out: list[Excluded] = []
    if not run.deep:
        out.append(Excluded(DEEP_CODES, "result.json contents were not read (no --deep): the run judged listings only"))
    if not run.audit_log:
        out.append(Excluded(tuple(sorted(AUDIT_CODES)), "the change log was not checked (no --audit-log)"))
    live, nightly = run.mode == "live", run.nightly
    if not (live and run.deep):
        out.append(
            Excluded(
                (Code.RETENTION_TAG_MISMATCH,),
                "object tags are read only by a live --deep run (no inventory holds them)",
            )
        )
    if not live and not (nightly and engine == "polars"):
        out.append(Excluded(_VERSIONS, "object versions are read only by live runs and the nightly polars run"))
    if not nightly:
        out.append(
            Excluded(tuple(sorted(INVENTORY_CODES)), "inventory deliveries are checked only by the nightly runs")
        )
    return out


@dataclass(frozen=True)
class Coverage:
    """The findings a run judged: its codes, whether it read result.json (KEY_MISMATCH's deep
    shape), and its scope. A finding outside it was not looked for, so not finding it says nothing.
    """

    codes: frozenset[Code]
    deep: bool
    buckets: frozenset[str]  # empty: the run named no buckets (a report from before scopes)
    table: str | None

    @classmethod
    def of(cls, summary: ReconcileSummary) -> Coverage:
        left_out = {
            code for part in excluded(summary.options, summary.engine, summary.notJudged) for code in part.codes
        }
        scope = summary.scope
        buckets = frozenset(b for b in (scope.get("rawBucket"), scope.get("processedBucket")) if b)
        return cls(
            codes=frozenset(Code) - left_out,
            deep=Recorded.of(summary.options).deep and not summary.notJudged,
            buckets=buckets,
            table=scope.get("table") or None,
        )

    def judged(self, previous_table: str | None) -> pl.Expr:
        """Over ledger rows: True for a finding this run would have found if it still held.
        `previous_table`: the table the previous report judged (a run over another table, such
        as a restored copy, judges none of this one's item findings).
        """
        expr = pl.col("code").is_in(sorted(self.codes))
        if not self.deep:
            expr &= ~((pl.col("code") == Code.KEY_MISMATCH.value) & pl.col("key").is_not_null())
        if self.buckets:
            expr &= pl.col("bucket").is_null() | pl.col("bucket").is_in(sorted(self.buckets))
        if self.table and previous_table and self.table != previous_table:
            expr &= pl.col("pk").is_null()
        return expr
