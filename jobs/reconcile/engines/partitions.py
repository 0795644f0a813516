"""The polars engine over export/inventory files in bounded memory: one side at a time, key-hash
partitions when the table is large.

An in-memory run holds every item and object at once (1.6 GB at a million documents, linear).
Here the files stream through once, one data file per thread, and each side is judged on its own:

1. each table data file's items meet the rules of one item alone (`rules.ITEM_RULES`) at once,
   then only the columns the join rules read are kept, once per side (the raw side's by rawKey,
   the result side's by the result key its ids imply);
2. the raw bucket's inventory: keys classified, `rules.OBJECT_RULES`, then the raw-side join
   rules (`RAW_JOIN_RULES`) partition by partition, after which that side's rows are dropped;
3. the same for the processed bucket's inventory and the result-side rules (and --deep's).

An item and the object it names always hash alike, so every join finds its partner in the same
partition and the findings are exactly the in-memory ones. Up to `ROWS_PER_PARTITION` items there
is one partition, held in memory (both sides share the columns they both read); beyond, rows are
spilled as Arrow IPC pieces per partition (uncompressed: cheaper than a compression pass) in a
temporary directory, so peak memory is about one partition whatever the table's size.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from jobs.reconcile import rules
from jobs.reconcile.findings import WIDE_SCHEMA, EngineFindings, empty
from jobs.reconcile.rules import OBJECTS_SCHEMA, RESULTS_SCHEMA, Prepared, RuleParams
from jobs.reconcile.sources import InventoryManifest, _trim_heap, inventory_frames, inventory_pair

if TYPE_CHECKING:
    from jobs.reconcile.table_state import TableSource
    from jobs.store.s3 import Buckets

# A partition costs ~0.9 KB per item at its peak on top of ~140 MB of runtime (1.03-1.05 GB at a
# million items, measured with bench/bench_reconcile.py): 1.2 M items stay within ~1.2 GB. The
# count is the table's before the run reads it (a state plus its changes: an upper bound).
ROWS_PER_PARTITION = 1_200_000
HASH_SEED = 20260601

# What the join rules read of an item (the rest met its rules in step 1 and is dropped).
RAW_SIDE = ("userId", "documentId", "pk", "sk", "status", "createdAt", "rawKey", "rawS3Uri", "rawEtag", "version")
# resultKey is built again from the ids when the result side is judged: held, it was the largest
# column (~55 MB per million items).
RESULT_SIDE = ("userId", "documentId", "pk", "sk", "status", "updatedAt", "resultS3Uri", "version")
DEEP_SIDE = ("rawS3Uri", "rawEtag", *rules.DEEP_ONLY_COLUMNS)  # what --deep's rules compare


class _Spill:
    """Rows of one kind by partition: held in memory when there is one partition, else Arrow IPC
    pieces under a directory, split by key hash.
    """

    def __init__(self, root: Path, name: str, partitions: int) -> None:
        self.root = root / name
        self.partitions = partitions
        self._hold = partitions == 1
        self._held: list[pl.DataFrame] = []
        self._pieces = 0

    def write(self, frame: pl.DataFrame, key: pl.Expr) -> None:
        self._pieces += 1
        if self._hold:
            self._held.append(frame)
            return
        part = frame.with_columns((key.hash(HASH_SEED) % self.partitions).alias("_p"))
        for (number,), piece in part.partition_by("_p", as_dict=True, include_key=False).items():
            directory = self.root / f"p{number}"
            directory.mkdir(parents=True, exist_ok=True)
            piece.write_ipc(directory / f"{self._pieces:06d}.arrow", compression="uncompressed")

    def read(self, number: int, schema: dict[str, pl.DataType]) -> pl.DataFrame:
        """Partition `number`'s rows (held rows are handed over, not kept twice)."""
        if self._hold:
            held, self._held = self._held, []
            return pl.concat(held, how="vertical", rechunk=False) if held else empty(schema)
        files = sorted((self.root / f"p{number}").glob("*.arrow"))
        if not files:
            return empty(schema)
        return pl.read_ipc(files[0]) if len(files) == 1 else pl.scan_ipc(files).collect()


def _detached(frame: pl.DataFrame) -> pl.DataFrame:
    """A findings frame with its own string buffers: polars' strings are views into the buffers of
    the frame they were filtered from, so a kept finding would pin its whole chunk (~60 MB per
    export file at 250k items, measured: RSS grew linearly until this copy).
    """
    arrow = frame.to_arrow()  # views → contiguous Arrow strings: a copy of just these rows
    detached = pl.from_arrow(arrow)
    assert isinstance(detached, pl.DataFrame)
    return detached


@dataclasses.dataclass
class _Side:
    """One bucket's half of the run: its inventory, the items' columns its joins read, its rules."""

    kind: str  # raw | result (the key layout)
    name: str  # raw | processed (the summary's input name)
    manifest: InventoryManifest
    items: _Spill
    columns: tuple[str, ...]
    rules: tuple[Callable[[Prepared], pl.LazyFrame], ...]

    @property
    def key(self) -> pl.Expr:
        """What an item's partition is hashed from: the key of the object it names on this side."""
        return pl.col("rawKey") if self.kind == "raw" else rules.result_key()


class _Engine:
    """The run's state: what was found so far, rows read, and the empty frames a rule reads for
    the side it does not look at.
    """

    def __init__(self, params: RuleParams, root: Path, partitions: int) -> None:
        self.params = params
        self.root = root
        self.partitions = partitions
        objects = rules.classified(empty(OBJECTS_SCHEMA).lazy(), "raw", params).collect()
        self.nothing = Prepared(
            rules.with_keys(empty(rules.ITEMS_SCHEMA).lazy(), params), objects.lazy(), objects.lazy(), params
        )
        self.item_schema = self.nothing.items.collect_schema()
        self.object_schema = dict(objects.schema)
        self.found: list[pl.DataFrame] = []
        self.sizes = {"table": 0, "raw": 0, "processed": 0}

    def collect(self, frames: Iterator[pl.LazyFrame]) -> None:
        self.found += [_detached(frame.collect()) for frame in frames]

    def items(self, chunks: Iterator[pl.DataFrame], sides: list[_Side]) -> None:
        for chunk in chunks:
            self.sizes["table"] += chunk.height
            items = rules.with_keys(chunk.lazy(), self.params).collect()
            prepared = dataclasses.replace(self.nothing, items=items.lazy())
            self.collect(rule(prepared) for rule in rules.ITEM_RULES)
            for side in sides:
                side.items.write(items.select(side.columns), side.key)
            del items, prepared, chunk
            _trim_heap()  # Arrow's parse buffers come from glibc: give them back file by file

    def judge(self, side: _Side, read_results: Callable[[list[str]], pl.DataFrame] | None) -> None:
        objects_spill = _Spill(self.root, side.name, self.partitions)
        deep_keys: list[str] = []
        for chunk in inventory_frames(side.manifest):
            self.sizes[side.name] += chunk.height
            objects = rules.classified(chunk.lazy(), side.kind, self.params).collect()
            prepared = self._prepared(side, self.nothing.items, objects.lazy())
            self.collect(rule(prepared) for rule in rules.OBJECT_RULES)
            if read_results is not None:
                deep_keys += objects.filter(~pl.col("badKey")).get_column("key").to_list()
            # The bucket is the inventory's source bucket on every row (checked): not kept per row.
            objects_spill.write(objects.drop("bucket"), pl.col("key"))
            del objects, prepared, chunk
            _trim_heap()
        results_spill = _Spill(self.root, "results", self.partitions)
        if read_results is not None:
            deep_keys.sort()
            for start in range(0, len(deep_keys), ROWS_PER_PARTITION):
                results_spill.write(read_results(deep_keys[start : start + ROWS_PER_PARTITION]), pl.col("key"))
        for number in range(self.partitions):
            items = side.items.read(number, {c: self.item_schema[c] for c in side.columns}).lazy()
            if side.kind == "result":
                items = items.with_columns(rules.result_key())
            objects = (
                objects_spill.read(number, self.object_schema)
                .lazy()
                .with_columns(pl.lit(side.manifest.source_bucket).alias("bucket"))
            )
            prepared = self._prepared(side, items, objects)
            self.collect(rule(prepared) for rule in side.rules)
            if read_results is not None:
                results = results_spill.read(number, RESULTS_SCHEMA).lazy()
                self.collect(rule(prepared, results) for rule in rules.DEEP_RULES)
            del prepared, items, objects

    def _prepared(self, side: _Side, items: pl.LazyFrame, objects: pl.LazyFrame) -> Prepared:
        if side.kind == "raw":
            return Prepared(items, objects, self.nothing.processed, self.params)
        return Prepared(items, self.nothing.raw, objects, self.params)


def partitioned_find(
    table: TableSource,
    manifests: list[str],
    buckets: Buckets | None,
    raw_bucket: str,
    processed_bucket: str,
    params_for: Callable[[datetime], RuleParams],
    read_results: Callable[[list[str]], pl.DataFrame] | None = None,
) -> EngineFindings:
    """Every finding of the files, in bounded memory (read_results: --deep's GETs, or None)."""
    raw_m, processed_m = inventory_pair(manifests, buckets, raw_bucket, processed_bucket)
    taken_at = {"table": table.taken_at, "raw": raw_m.created, "processed": processed_m.created}
    params = params_for(min(taken_at.values()))
    deep = read_results is not None
    partitions = max(1, math.ceil((table.item_count or 0) / ROWS_PER_PARTITION))
    with tempfile.TemporaryDirectory(prefix="docuflow-reconcile-") as tmp:
        root = Path(tmp)
        engine = _Engine(params, root, partitions)
        sides = [
            _Side("raw", "raw", raw_m, _Spill(root, "items-raw", partitions), RAW_SIDE, rules.RAW_JOIN_RULES),
            _Side(
                "result",
                "processed",
                processed_m,
                _Spill(root, "items-result", partitions),
                (*RESULT_SIDE, *(DEEP_SIDE if deep else ())),
                rules.RESULT_JOIN_RULES,
            ),
        ]
        engine.items(table.frames(), sides)
        engine.judge(sides[0], None)
        engine.judge(sides[1], read_results)
    found = [f for f in engine.found if f.height]
    wide = pl.concat(found, how="diagonal_relaxed") if found else empty(WIDE_SCHEMA)
    inputs = {"table": table.where, "raw": raw_m.where, "processed": processed_m.where}
    return EngineFindings(wide, taken_at, inputs, engine.sizes)
