"""The engines that judge a reconcile's inputs, behind one interface the run selects by name.

Every engine is built with what it reads and answers one call, `find(params_for)`: its findings
as wide rows (`findings.EngineFindings`), with when each input was taken and how many rows it
held. `params_for` turns the inputs' snapshot time (the earliest of them, which only the engine
knows once it has read its manifests or started its reads) into the rules' parameters. Findings
are rendered once, after whichever engine ran, so the report cannot tell them apart:

- `polars.PolarsEngine`: the polars rules, in memory over a live snapshot, or over export and
  inventory files in bounded memory (`partitions`);
- `duckdb.DuckdbEngine`: the Athena engine's Trino SQL on an embedded DuckDB over the same files;
- `athena.AthenaEngine`: that SQL in an Athena workgroup over S3 Inventory and a table export.

`find` takes the run's stop check too (`StopCheck`: the StopFlag's `check`, which raises
RunStoppedError once a SIGTERM or SIGINT arrived). An engine stage can outlast the task's 120 s
stop timeout (a night of millions of items), so the engines call it between partitions, chunks,
files, rules and queries: a stop is honoured within one of those, seconds, and as an engine
writes nothing but its temporary files (removed as the stop unwinds), nothing is half-written.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import polars as pl

from jobs.reconcile.rules.findings import EngineFindings
from jobs.reconcile.rules.params import RuleParams

__all__ = [
    "NAMES",
    "Engine",
    "ParamsFor",
    "ReadResults",
    "StopCheck",
    "no_stop",
]  # the engines: `jobs.reconcile.engines.<name>`

NAMES = ("polars", "duckdb", "athena")
# The rules' parameters for the inputs' snapshot time.
ParamsFor = Callable[[datetime], RuleParams]
# --deep: the result.json contents of the listed keys (RESULTS_SCHEMA), read from S3.
ReadResults = Callable[[list[str]], pl.DataFrame]
# The run's stop check: called with where the engine stands, raises RunStoppedError on a stop.
StopCheck = Callable[[str], None]


def no_stop(_where: str) -> None:
    """The stop check of an engine run outside a job (a test, a bench): never stops."""


class Engine(Protocol):
    def find(self, params_for: ParamsFor, stop: StopCheck = no_stop) -> EngineFindings:
        """Every finding of the engine's inputs, as wide rows, with what it read."""
        ...
