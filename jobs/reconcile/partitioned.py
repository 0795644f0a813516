"""The polars engine over export/inventory files in bounded memory: key-hash partitions in turn.

An in-memory run holds every item and object at once (1.4 GB at a million documents, 5.2 GB at
four, linear). Here the files stream through once, one data file per thread:

1. each export file's items meet the rules of one item alone (`rules.ITEM_RULES`) at once, then
   only the columns the join rules read are spilled, twice: partitioned by hash(rawKey) for the
   raw-side joins and by hash(resultKey) for the result-side joins;
2. each inventory file's objects get their keys classified, meet `rules.OBJECT_RULES`, and are
   spilled partitioned by hash(key);
3. partition by partition, the join rules (`RAW_JOIN_RULES`, `RESULT_JOIN_RULES`, --deep's) run
   on what the partition holds: an item and the object it names always hash alike, so every join
   finds its partner in the same partition and the findings are exactly the in-memory ones.

Spills are Arrow IPC files (uncompressed: writing and reading them costs less than a gzip pass)
in a temporary directory; peak memory is a few data files plus one partition. The partition count
grows with the export's item count (`ROWS_PER_PARTITION`).
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from jobs.reconcile import rules
from jobs.reconcile.findings import WIDE_SCHEMA, EngineFindings, empty
from jobs.reconcile.rules import OBJECTS_SCHEMA, RESULTS_SCHEMA, Prepared, RuleParams
from jobs.reconcile.sources import _trim_heap, export_frames, export_manifest, inventory_frames, inventory_pair

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

ROWS_PER_PARTITION = 250_000
HASH_SEED = 20260601

# What the join rules read of an item (the rest met its rules in step 1 and is dropped).
RAW_SIDE = ("userId", "documentId", "pk", "sk", "status", "createdAt", "rawKey", "rawS3Uri", "rawEtag", "version")
RESULT_SIDE = ("userId", "documentId", "pk", "sk", "status", "updatedAt", "resultKey", "resultS3Uri", "rawS3Uri", "rawEtag", "version")
DEEP_SIDE = rules.DEEP_ONLY_COLUMNS


class _Spill:
    """Partitioned Arrow IPC pieces of one kind of rows under a directory."""

    def __init__(self, root: Path, name: str, partitions: int) -> None:
        self.root = root / name
        self.partitions = partitions
        self._pieces = 0

    def write(self, frame: pl.DataFrame, key: str) -> None:
        self._pieces += 1
        part = frame.with_columns((pl.col(key).hash(HASH_SEED) % self.partitions).alias("_p"))
        for (number,), piece in part.partition_by("_p", as_dict=True, include_key=False).items():
            directory = self.root / f"p{number}"
            directory.mkdir(parents=True, exist_ok=True)
            piece.write_ipc(directory / f"{self._pieces:06d}.arrow", compression="uncompressed")

    def read(self, number: int, schema: dict[str, pl.DataType]) -> pl.DataFrame:
        files = sorted((self.root / f"p{number}").glob("*.arrow"))
        if not files:
            return empty(schema)
        return pl.read_ipc(files[0]) if len(files) == 1 else pl.scan_ipc(files).collect()


def _detached(frame: pl.DataFrame) -> pl.DataFrame:
    """A findings frame with its own string buffers: polars' strings are views into the buffers of
    the frame they were filtered from, so a kept finding would pin its whole chunk (~60 MB per
    export file at 250k items, measured: RSS grew linearly until this copy)."""
    arrow = frame.to_arrow()  # views → contiguous Arrow strings: a copy of just these rows
    detached = pl.from_arrow(arrow)
    assert isinstance(detached, pl.DataFrame)
    return detached


def _empty_prepared(params: RuleParams) -> Prepared:
    objects = rules.classified(empty(OBJECTS_SCHEMA).lazy(), "raw", params).collect().lazy()
    return Prepared(rules.with_keys(empty(rules.ITEMS_SCHEMA).lazy(), params), objects, objects, params)


def partitioned_find(
    export: str,
    manifests: list[str],
    buckets: Buckets | None,
    raw_bucket: str,
    processed_bucket: str,
    params_for: Callable[[datetime], RuleParams],
    read_results: Callable[[list[str]], pl.DataFrame] | None = None,
) -> EngineFindings:
    """Every finding of the files, in bounded memory (read_results: --deep's GETs, or None)."""
    export_m = export_manifest(export, buckets)
    raw_m, processed_m = inventory_pair(manifests, buckets, raw_bucket, processed_bucket)
    taken_at = {"table": export_m.export_time, "raw": raw_m.created, "processed": processed_m.created}
    params = params_for(min(taken_at.values()))
    deep = read_results is not None
    partitions = max(1, math.ceil((export_m.item_count or 0) / ROWS_PER_PARTITION))
    found: list[pl.DataFrame] = []
    sizes = {"table": 0, "raw": 0, "processed": 0}
    nothing = _empty_prepared(params)
    with tempfile.TemporaryDirectory(prefix="docuflow-reconcile-") as tmp:
        root = Path(tmp)
        raw_items, result_items = _Spill(root, "items-raw", partitions), _Spill(root, "items-result", partitions)
        raw_objects, processed_objects = _Spill(root, "raw", partitions), _Spill(root, "processed", partitions)
        deep_keys: list[str] = []

        for chunk in export_frames(export_m, deep):
            sizes["table"] += chunk.height
            items = rules.with_keys(chunk.lazy(), params).collect()
            prepared = dataclasses.replace(nothing, items=items.lazy())
            found += [_detached(rule(prepared).collect()) for rule in rules.ITEM_RULES]
            raw_items.write(items.select(RAW_SIDE), "rawKey")
            result_items.write(items.select(*RESULT_SIDE, *(DEEP_SIDE if deep else ())), "resultKey")
            del items, prepared, chunk
            _trim_heap()  # Arrow's parse buffers come from glibc: give them back file by file

        for manifest, spill, kind, name in ((raw_m, raw_objects, "raw", "raw"), (processed_m, processed_objects, "result", "processed")):
            for chunk in inventory_frames(manifest):
                sizes[name] += chunk.height
                objects = rules.classified(chunk.lazy(), kind, params).collect()
                prepared = dataclasses.replace(nothing, raw=objects.lazy()) if kind == "raw" else dataclasses.replace(nothing, processed=objects.lazy())
                found += [_detached(rule(prepared).collect()) for rule in rules.OBJECT_RULES]
                if deep and kind == "result":
                    deep_keys += objects.filter(~pl.col("badKey")).get_column("key").to_list()
                spill.write(objects, "key")
                del objects, prepared, chunk
                _trim_heap()

        results_spill = _Spill(root, "results", partitions)
        if deep and read_results is not None:
            deep_keys.sort()
            for start in range(0, len(deep_keys), ROWS_PER_PARTITION):
                results_spill.write(read_results(deep_keys[start : start + ROWS_PER_PARTITION]), "key")

        item_schema = rules.with_keys(empty(rules.ITEMS_SCHEMA).lazy(), params).collect_schema()
        object_schema = rules.classified(empty(OBJECTS_SCHEMA).lazy(), "raw", params).collect_schema()
        for number in range(partitions):
            raw_side = Prepared(
                raw_items.read(number, {c: item_schema[c] for c in RAW_SIDE}).lazy(),
                raw_objects.read(number, dict(object_schema)).lazy(),
                nothing.processed,
                params,
            )
            found += [_detached(rule(raw_side).collect()) for rule in rules.RAW_JOIN_RULES]
            del raw_side
            result_columns = (*RESULT_SIDE, *(DEEP_SIDE if deep else ()))
            result_side = Prepared(
                result_items.read(number, {c: item_schema[c] for c in result_columns}).lazy(),
                nothing.raw,
                processed_objects.read(number, dict(object_schema)).lazy(),
                params,
            )
            found += [_detached(rule(result_side).collect()) for rule in rules.RESULT_JOIN_RULES]
            if deep:
                results = results_spill.read(number, RESULTS_SCHEMA).lazy()
                found += [_detached(rule(result_side, results).collect()) for rule in rules.DEEP_RULES]
            del result_side
    found = [f for f in found if f.height]
    wide = pl.concat(found, how="diagonal_relaxed") if found else empty(WIDE_SCHEMA)
    inputs = {"table": export, "raw": raw_m.where, "processed": processed_m.where}
    return EngineFindings(wide, taken_at, inputs, sizes)
