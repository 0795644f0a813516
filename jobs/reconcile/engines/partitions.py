"""The polars engine over export/inventory files in bounded memory: one side at a time, key-hash
partitions when the table is large.

An in-memory run holds every item and object at once, its memory growing linearly with the table.
Here the files stream through once, one data file per thread, and each side is judged on its own:

1. each table data file's items meet the rules of one item alone (`rules.ITEM_RULES`) at once,
   then only the columns the join rules read are kept, once per side (the raw side's by rawKey,
   the result side's by the result key its ids imply);
2. the raw bucket's inventory: keys classified, `rules.OBJECT_RULES`, then the raw-side join
   rules (`RAW_JOIN_RULES`) partition by partition, after which that side's rows are dropped;
3. the same for the processed bucket's inventory and the result-side rules, with the duplicate
   markers, which meet their holder by the result key its ids imply; then --deep's rules, partition
   by partition, over the columns they alone read (spilled apart in step 1).

An item and the object it names always hash alike, so every join finds its partner in the same
partition and the findings are exactly the in-memory ones. Up to `ROWS_PER_PARTITION` items there
is one partition, held in memory, except the result side's items, which wait on disk while the
raw side is judged; beyond, every side's rows are spilled as Arrow IPC pieces per partition
(uncompressed: cheaper than a compression pass) in a temporary directory, split by key hash and
written on a thread of their own while the next chunk is judged (`_Writes`). Peak
memory is about one side of one partition whatever the table's size (docs/reconcile.md,
Performance).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from jobs.contract import layout
from jobs.reconcile.engines import ParamsFor, ReadResults, StopCheck, no_stop
from jobs.reconcile.inputs.datafiles import trim_heap
from jobs.reconcile.inputs.inventory import InventoryManifest, inventory_frames
from jobs.reconcile.rules import polars_rules as rules
from jobs.reconcile.rules.findings import WIDE_SCHEMA, EngineFindings
from jobs.reconcile.rules.frames import DEEP_ONLY_COLUMNS, ITEMS_SCHEMA, OBJECTS_SCHEMA, TTL_COLUMN, detached, empty
from jobs.reconcile.rules.join import URI_AS_IMPLIED, Prepared, classified, documents_and_markers
from jobs.reconcile.rules.keys import result_key, with_keys
from jobs.reconcile.rules.params import RuleParams

if TYPE_CHECKING:
    from jobs.reconcile.inputs.table_state import TableSource

# Items per partition: a partition's peak memory grows with its items on top of the runtime's, and
# this many keep a run near the memory the benchmark measures (docs/reconcile.md, Performance).
# The count is the table's before the run reads it (a state plus its changes: an upper bound).
ROWS_PER_PARTITION = 1_200_000
HASH_SEED = 20260601
# --deep reads and judges this many result.json files at a time (200k: peak RSS ~70 MB higher at
# 4 M items, 1.16x the shallow night instead of 1.06-1.07x, for 1.5 s less of a 38 s run).
DEEP_CHUNK = 100_000

# What the join rules read of an item (the rest met its rules in step 1 and is dropped).
RAW_SIDE = ("userId", "documentId", "pk", "sk", "status", "createdAt", "retainUntil", "rawKey", "rawEtag", "version")
# resultKey is built again from the ids when the result side is judged: held, it was the largest
# column.
RESULT_SIDE = (
    "userId",
    "documentId",
    "pk",
    "sk",
    "status",
    "updatedAt",
    "retainUntil",
    URI_AS_IMPLIED,  # resultS3Uri held apart where it is not the implied one (ODD_URIS)
    "version",
    "contentMarker",
    "invoiceMarker",
    TTL_COLUMN,
)
ODD_URIS = ("userId", "documentId", "pk", "sk", "resultS3Uri")  # the ids: partitioned like their item
# What the marker rules read of a marker row (its holder's ids, its key, when it was written).
MARKER_SIDE = ("userId", "documentId", "pk", "sk", "createdAt", TTL_COLUMN)
# What --deep's rules read of an item. Spilled apart and read for the deep pass alone, once the
# result side's rules are done with their rows: carried through them, these columns and the result
# side's own were both alive while the files were judged (peak RSS +30 % over a shallow run).
DEEP_ITEMS = ("userId", "documentId", "pk", "sk", "status", "version", "rawS3Uri", "rawEtag", *DEEP_ONLY_COLUMNS)


class _Writes:
    """Spill writes on a thread of their own, at most PENDING waiting: the run goes on with the
    next chunk while the last one's pieces are hashed, split and written (on the main thread,
    writing 3 GB of pieces was a third of the run at 4 M items). A write's error is raised by the
    next write or wait.
    """

    PENDING = 1

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="spill")
        self._pending: deque[Future[None]] = deque()

    def submit(self, write: Callable[[], None]) -> None:
        while len(self._pending) >= self.PENDING:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(write))

    def wait(self) -> None:
        while self._pending:
            self._pending.popleft().result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class _Spill:
    """Rows of one kind by partition: held in memory when there is one partition and `hold`, else
    Arrow IPC pieces under a directory, split by key hash.
    """

    def __init__(self, root: Path, name: str, partitions: int, writes: _Writes, hold: bool = True) -> None:
        self.root = root / name
        self.partitions = partitions
        self._writes = writes
        self._hold = hold and partitions == 1
        self._held: list[pl.DataFrame] = []
        self._pieces = 0

    def write(self, frame: pl.DataFrame, key: pl.Expr) -> None:
        self._pieces += 1
        if self._hold:
            self._held.append(frame)
            return
        self._writes.submit(functools.partial(self._write, frame, key, self._pieces))

    def _write(self, frame: pl.DataFrame, key: pl.Expr, piece: int) -> None:
        pieces: dict[int, pl.DataFrame] = {0: frame}
        if self.partitions > 1:
            part = frame.with_columns((key.hash(HASH_SEED) % self.partitions).alias("_p"))
            pieces = {n: p for (n,), p in part.partition_by("_p", as_dict=True, include_key=False).items()}
        for number, rows in pieces.items():
            directory = self.root / f"p{number}"
            directory.mkdir(parents=True, exist_ok=True)
            rows.write_ipc(directory / f"{piece:06d}.arrow", compression="uncompressed")

    def read(self, number: int, schema: dict[str, pl.DataType]) -> pl.DataFrame:
        """Partition `number`'s rows (held rows are handed over, not kept twice)."""
        if self._hold:
            held, self._held = self._held, []
            return pl.concat(held, how="vertical", rechunk=False) if held else empty(schema)
        self._writes.wait()
        directory = self.root / f"p{number}"
        files = sorted(directory.glob("*.arrow"))
        if not files:
            return empty(schema)
        rows = pl.read_ipc(files[0]) if len(files) == 1 else pl.scan_ipc(files).collect()
        # Read once: removed on the writes' thread while the partition is judged (at 4 M items,
        # removing 3 GB of pieces at the end took the run's last 0.6 s).
        self._writes.submit(functools.partial(shutil.rmtree, directory, ignore_errors=True))
        return rows


def _columns(
    frame: pl.DataFrame, names: tuple[str, ...], instead: Mapping[str, pl.Series] | None = None
) -> pl.DataFrame:
    """The columns `names` of `frame`, as they are (or the series `instead` names for some).
    DataFrame.select first aligns the chunks of every column of a frame whose columns are chunked
    differently (a filtered frame's derived columns are), a copy of the whole chunk per select:
    15 ms per select of a 250k-row chunk.
    """
    given = instead or {}
    return pl.DataFrame([given[name] if name in given else frame.get_column(name) for name in names])


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
        return pl.col("rawKey") if self.kind == "raw" else result_key()


@dataclasses.dataclass
class _Deep:
    """--deep's share of the run: the items' columns its rules read, and the GETs of result.json."""

    items: _Spill
    read_results: ReadResults


class _Run:
    """The run's state: what was found so far, rows read, and the empty frames a rule reads for
    the side it does not look at.
    """

    def __init__(
        self, params: RuleParams, root: Path, partitions: int, writes: _Writes, stop: StopCheck = no_stop
    ) -> None:
        self.params = params
        self.stop = stop  # between chunks and partitions, on either thread
        self.root = root
        self.partitions = partitions
        self.writes = writes
        objects = classified(empty(OBJECTS_SCHEMA).lazy(), "raw", params).collect()
        self.nothing = Prepared(with_keys(empty(ITEMS_SCHEMA).lazy(), params), objects.lazy(), objects.lazy(), params)
        self.item_schema = self.nothing.items.collect_schema()
        self.object_schema = dict(objects.schema)
        self.found: list[pl.DataFrame] = []
        self.sizes = {"table": 0, "raw": 0, "processed": 0}

    def collect(self, frames: Iterator[pl.LazyFrame]) -> None:
        self.found += [detached(frame.collect()) for frame in frames]

    def items(
        self,
        chunks: Iterator[pl.DataFrame],
        sides: list[_Side],
        markers: _Spill,
        odd_uris: _Spill,
        deep_items: _Spill | None,
    ) -> None:
        for chunk in chunks:
            self.stop("between the table's chunks")
            self.sizes["table"] += chunk.height
            documents, marker_rows = documents_and_markers(chunk.lazy(), self.params)
            items = documents.collect()
            prepared = dataclasses.replace(self.nothing, items=items.lazy())
            self.collect(rule(prepared) for rule in rules.ITEM_RULES)
            implied, odd = self._result_uris(items)
            for side in sides:
                side.items.write(_columns(items, side.columns, {URI_AS_IMPLIED: implied}), side.key)
            odd_uris.write(odd, result_key())
            markers.write(marker_rows.select(MARKER_SIDE).collect(), result_key())
            if deep_items is not None:
                deep_items.write(_columns(items, DEEP_ITEMS), result_key())
            del items, prepared, chunk
            trim_heap()  # Arrow's parse buffers come from glibc: give them back file by file

    def _result_uris(self, items: pl.DataFrame) -> tuple[pl.Series, pl.DataFrame]:
        """URI_AS_IMPLIED for `items`, and the ODD_URIS rows of those whose URI is not the implied
        one (copied: a few rows must not pin their chunk).
        """
        uris = items.get_column("resultS3Uri")
        prefix = layout.s3_uri(self.params.processed_bucket, "")
        implied = uris.str.starts_with(prefix) & uris.str.strip_prefix(prefix).eq_missing(items.get_column("resultKey"))
        implied = implied.fill_null(False).alias(URI_AS_IMPLIED)
        odd = _columns(items, ODD_URIS).filter(uris.is_not_null() & ~implied)
        return implied, detached(odd)

    def spill_objects(self, side: _Side, writes: _Writes | None = None) -> _Spill:
        """The side's inventory read once: its objects' own rules applied, the objects spilled by
        partition (by `writes`, when another thread than the run's reads it).
        """
        # Beside the table's reading (writes given): one file at a time and the objects on disk,
        # as the table's chunks are alive too (held, or two files at once, peak RSS +80 MB at 1 M).
        spill = _Spill(self.root, side.name, self.partitions, writes or self.writes, hold=writes is None)
        for chunk in inventory_frames(side.manifest, 1 if writes else 2):
            self.stop(f"between the {side.name} inventory's chunks")
            self.sizes[side.name] += chunk.height
            objects = classified(chunk.lazy(), side.kind, self.params).collect()
            prepared = self._prepared(side, self.nothing.items, objects.lazy())
            self.collect(rule(prepared) for rule in rules.OBJECT_RULES)
            # The bucket is the inventory's source bucket on every row (checked): not kept per row.
            spill.write(objects.drop("bucket"), pl.col("key"))
            del objects, prepared, chunk
            trim_heap()
        return spill

    def judge(
        self,
        side: _Side,
        markers: _Spill | None = None,
        odd_uris: _Spill | None = None,
        deep: _Deep | None = None,
        inventory: _Spill | None = None,
    ) -> None:
        """The side's join rules partition by partition (`inventory`: its objects already spilled)."""
        objects_spill = inventory or self.spill_objects(side)
        for number in range(self.partitions):
            self.stop(f"between the {side.name} side's partitions")
            items_frame = side.items.read(number, self._schema(side.columns))
            if side.kind == "result":
                items_frame = items_frame.with_columns(result_key())  # once: the join and its check read it
            items = items_frame.lazy()
            spilled = objects_spill.read(number, self.object_schema)
            objects = spilled.lazy().with_columns(pl.lit(side.manifest.source_bucket).alias("bucket"))
            prepared = self._prepared(side, items, objects)
            if markers is not None:
                held = markers.read(number, self._schema(MARKER_SIDE))
                prepared = dataclasses.replace(prepared, markers=held.lazy())
            if odd_uris is not None:
                odd = odd_uris.read(number, self._schema(ODD_URIS))
                prepared = dataclasses.replace(prepared, odd_uris=odd.lazy())
            self.collect(rule(prepared) for rule in side.rules)
            del prepared, items, items_frame
            if deep is not None:
                keys = spilled.filter(~pl.col("badKey")).get_column("key").sort()
                held = deep.items.read(number, {c: self.item_schema[c] for c in DEEP_ITEMS})
                self.deep(self._prepared(side, held.lazy(), objects), keys, deep.read_results)
                del held, keys
            del objects, spilled

    def deep(self, prepared: Prepared, keys: pl.Series, read_results: ReadResults) -> None:
        """--deep over one partition: its result.json files read and judged DEEP_CHUNK at a time.
        Each finding depends on its own file, its key's object and the items its key's ids name,
        so each chunk is judged against just those: neither the keys, the contents nor the
        rules' joins ever span the partition.
        """
        for start in range(0, keys.len(), DEEP_CHUNK):
            self.stop("between --deep's chunks")
            chunk = keys.slice(start, DEEP_CHUNK)
            results = read_results(chunk.to_list()).lazy()
            objects = prepared.processed.join(pl.LazyFrame({"key": chunk}), on="key", how="semi").collect()
            named = objects.lazy().select("userId", "documentId")
            # Once per chunk: several rules read these items.
            items = prepared.items.join(named, on=["userId", "documentId"], how="semi").collect()
            part = dataclasses.replace(prepared, items=items.lazy(), processed=objects.lazy())
            self.collect(rule(part, results) for rule in rules.DEEP_RULES)
            del results, objects, items, part

    def _schema(self, columns: tuple[str, ...]) -> dict[str, pl.DataType]:
        return {c: pl.Boolean() if c == URI_AS_IMPLIED else self.item_schema[c] for c in columns}

    def _prepared(self, side: _Side, items: pl.LazyFrame, objects: pl.LazyFrame) -> Prepared:
        if side.kind == "raw":
            return Prepared(items, objects, self.nothing.processed, self.params)
        return Prepared(items, self.nothing.raw, objects, self.params)


def judge_files(
    table: TableSource,
    raw_inventory: InventoryManifest,
    processed_inventory: InventoryManifest,
    params_for: ParamsFor,
    read_results: ReadResults | None = None,
    *,
    stop: StopCheck = no_stop,
) -> EngineFindings:
    """Every finding of the files, in bounded memory (read_results: --deep's GETs, or None); a
    stop is taken between chunks and partitions (the temporary files go with the directory).
    """
    taken_at = {"table": table.taken_at, "raw": raw_inventory.created, "processed": processed_inventory.created}
    params = params_for(min(taken_at.values()))
    partitions = max(1, math.ceil((table.item_count or 0) / ROWS_PER_PARTITION))
    with tempfile.TemporaryDirectory(prefix="docuflow-reconcile-") as tmp:
        root, writes, ahead_writes = Path(tmp), _Writes(), _Writes()
        try:
            run = _Run(params, root, partitions, writes, stop)
            raw = _Side(
                "raw",
                "raw",
                raw_inventory,
                _Spill(root, "items-raw", partitions, writes),
                RAW_SIDE,
                rules.RAW_JOIN_RULES,
            )
            result = _Side(
                "result",
                "processed",
                processed_inventory,
                _Spill(root, "items-result", partitions, writes, hold=False),
                RESULT_SIDE,
                rules.RESULT_JOIN_RULES + rules.MARKER_RULES,
            )
            markers = _Spill(root, "markers", partitions, writes)
            odd_uris = _Spill(root, "odd-uris", partitions, writes)
            deep = None
            if read_results is not None:
                deep = _Deep(_Spill(root, "items-deep", partitions, writes, hold=False), read_results)
            # The raw bucket's inventory is read, classified and spilled on a thread of its own while
            # the table is (neither reads the other): the run's longest stretch had one core busy.
            with ThreadPoolExecutor(1, thread_name_prefix="inventory") as ahead:
                raw_objects = ahead.submit(run.spill_objects, raw, ahead_writes)
                run.items(table.frames(), [raw, result], markers, odd_uris, deep.items if deep else None)
                run.judge(raw, inventory=raw_objects.result())
            run.judge(result, markers, odd_uris, deep)
        finally:
            writes.close()
            ahead_writes.close()
    found = [f for f in run.found if f.height]
    wide = pl.concat(found, how="diagonal_relaxed") if found else empty(WIDE_SCHEMA)
    inputs = {"table": table.where, "raw": raw_inventory.where, "processed": processed_inventory.where}
    return EngineFindings(wide, taken_at, inputs, run.sizes)
