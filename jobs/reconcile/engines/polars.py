"""The polars engine: the rules of `rules` over a snapshot in memory, or over files in bounded memory.

Given a way to take a snapshot (the live reads), it holds every input at once and runs the rules
one at a time. Given files (a table source and the two buckets' inventories), it streams them
through `partitions`, one side at a time, and hands every frame of the table to the state writer
when one is given (`--write-table-state`, `--nightly`: the run commits that state after its
report). Either way it returns the same wide rows as every engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from jobs.reconcile.engines import ParamsFor, ReadResults, StopCheck, no_stop
from jobs.reconcile.engines.partitions import judge_files
from jobs.reconcile.rules import polars_rules as rules
from jobs.reconcile.rules.findings import WIDE_SCHEMA, EngineFindings
from jobs.reconcile.rules.frames import Inputs, Snapshot, empty
from jobs.reconcile.rules.join import prepare
from jobs.reconcile.rules.keys import classify_keys
from jobs.reconcile.rules.params import RuleParams

if TYPE_CHECKING:
    from jobs.reconcile.inputs.inventory import InventoryManifest
    from jobs.reconcile.inputs.table_state import StateWriter, TableSource


@dataclass(frozen=True)
class FileInputs:
    """A files run's inputs: the table (an export, or a kept state brought forward) and the raw
    and processed buckets' inventories; `keep` writes the table read as a new table state (the
    run commits it).
    """

    table: TableSource
    raw_inventory: InventoryManifest
    processed_inventory: InventoryManifest
    keep: StateWriter | None = None


# The lifecycle rules' findings for a live snapshot (jobs.reconcile.rules.lifecycle).
LifecycleRules = Callable[[Snapshot, RuleParams], pl.DataFrame]


class PolarsEngine:
    def __init__(
        self,
        inputs: FileInputs | Callable[[], Snapshot],
        read_results: ReadResults | None = None,
        lifecycle: LifecycleRules | None = None,
    ) -> None:
        """`lifecycle`: a live run's version-level rules, which read S3 for their candidates."""
        self.inputs = inputs
        self.read_results = read_results
        self.lifecycle = lifecycle

    def find(self, params_for: ParamsFor, stop: StopCheck = no_stop) -> EngineFindings:
        if isinstance(self.inputs, FileInputs):
            return self._over_files(self.inputs, params_for, stop)
        snapshot = self.inputs()
        stop("after the live reads")
        return self._in_memory(snapshot, params_for, stop)

    def _over_files(self, files: FileInputs, params_for: ParamsFor, stop: StopCheck) -> EngineFindings:
        writer = files.keep
        table = writer.tee(files.table) if writer else files.table
        found = judge_files(
            table, files.raw_inventory, files.processed_inventory, params_for, self.read_results, stop=stop
        )
        if writer is not None:
            found.stats["tableState"] = writer.base.text
        return found

    def _in_memory(self, snapshot: Snapshot, params_for: ParamsFor, stop: StopCheck) -> EngineFindings:
        results = None
        if self.read_results is not None:
            listed = classify_keys(snapshot.processed_objects.lazy(), "result").filter(~pl.col("badKey"))
            keys = listed.select("key").collect().get_column("key").sort().to_list()
            results = self.read_results(keys).lazy()
        inputs = Inputs(snapshot.items.lazy(), snapshot.raw_objects.lazy(), snapshot.processed_objects.lazy(), results)
        sizes = {
            "table": snapshot.items.height,
            "raw": snapshot.raw_objects.height,
            "processed": snapshot.processed_objects.height,
        }
        params = params_for(snapshot.as_of)
        wide = _every_rule(inputs, params, stop)
        if self.lifecycle is not None:
            wide = pl.concat([wide, self.lifecycle(snapshot, params)], how="diagonal_relaxed")
        return EngineFindings(wide, snapshot.taken_at, snapshot.inputs, sizes)


def _every_rule(inputs: Inputs, params: RuleParams, stop: StopCheck = no_stop) -> pl.DataFrame:
    """Every rule's findings over inputs in memory, as wide rows (unsorted)."""
    p = prepare(inputs, params)
    parts = [rule(p) for rule in rules.RULES]
    if params.deep and inputs.results is not None:
        parts += [rule(p, inputs.results) for rule in rules.DEEP_RULES]
    # One rule at a time: each join still uses every core, and only one rule's hash tables are
    # alive at once (all at once costs much more memory for no gain on 2 cores: docs/reconcile.md).
    collected = []
    for part in parts:
        stop("between the rules")
        collected.append(part.collect())
    return pl.concat(collected, how="diagonal_relaxed") if collected else empty(WIDE_SCHEMA)
