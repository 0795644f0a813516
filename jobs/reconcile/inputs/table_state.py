"""The table as a files reconcile reads it: a full DynamoDB export, or the table state an earlier
run kept, brought forward by an incremental export of what changed since.

A full export reads every item every night, and parsing its DynamoDB JSON is most of a files
run's CPU (docs/reconcile.md, Performance). An incremental export holds only what
changed in its window (15 minutes to 24 hours, one final image per changed item, none for a
deleted one). So a run may keep the table it judged (`--write-table-state`): Parquet data files
of the columns reconcile reads (deep ones included) and `table-state.json`, written last, listing
them with their row counts and MD5s. The next night reads that state plus the night's
incremental export (`--table-state` with `--dynamodb-export`): every item the export names is
dropped from the state and those still alive are added, which is the table at the export's end,
the same rows a full export at that time would hold (a test compares the two, finding for finding).

The chain is checked: the export must be of the same table and its window must start exactly at
the state's time and end after it. A gap loses changes; an overlap is not harmless either:
DynamoDB reports each item's net change over the window, so an item created inside the overlap
and deleted after the state's time appears in no line and would stay in the state for ever. A
gap, an overlap, another table, a full export given as changes, or a damaged data file is a
ReconcileInputError (exit 2), never a silently wrong table. A state location is written once.

A night's state need not write every row again: most of the table did not change, and encoding
it was a fifth of a night's CPU. A state keeps the previous state's data files where they lie (in
the directory beside its own that wrote them) with the row numbers of each that are no longer in
the table (`dropped/`, one small Parquet file per kept data file), and writes only the night's
changed rows. A kept data file is written again once it is older than the writer's `keep_for`
(each file at its own point between half and all of it, so files written together are not all
written again the same night) or once a fifth of its rows are dropped. `keep_for` is what keeps
every file of a state readable while the state can still be brought forward: the states' expiry
less the catch-up limit and a day (`nightly.files_kept_for`).

table-state.json names the item columns its files hold. A state written with other columns than
the reconcile now reads (before retention and holds were items' attributes, or before documents
named the duplicate markers they hold) is refused, not read as holding none: its rows would lack
what the rules judge (a marker row beside a document that seems to hold nothing is a false
ORPHAN_MARKER). The nightly chain then re-anchors from a full export.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from jobs.contract.layout import format_ts
from jobs.errors import ReconcileInputError, S3ObjectExistsError
from jobs.reconcile.inputs.datafiles import bounded_map, data_file
from jobs.reconcile.inputs.export import (
    ExportManifest,
    change_frames,
    export_frames,
    export_manifest,
    full_export_manifest,
)
from jobs.reconcile.inputs.location import Location
from jobs.reconcile.rules.frames import ITEMS_SCHEMA, detached, empty

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

TABLE_STATE = "table-state.json"
FORMAT = "docuflow-table-state/3"
KEY = ["pk", "sk"]
# A kept data file is written again once this share of its rows is no longer in the table.
MAX_DROPPED = 0.2
# A state directory beside this one (the states of a chain share a parent directory).
_SIBLING = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_ROW = "_row"


@dataclass(frozen=True)
class TableSource:
    """Where the table's items come from, as of when, and the items themselves (ITEMS_SCHEMA
    frames, one data file at a time).
    """

    inputs: tuple[str, ...]  # the export, or the state and the exports that brought it forward
    taken_at: datetime
    item_count: int | None
    table_arn: str | None
    frames: Callable[[], Iterator[pl.DataFrame]]
    anchored_at: datetime | None = None  # the full export the chain of states started from
    # The same frames with where their rows came from (a kept state's data files): a state writer
    # keeps those files rather than write their rows again. None: frames only.
    pieces: Callable[[], Iterator[Piece]] | None = None

    @property
    def where(self) -> str:
        return " + ".join(self.inputs)


def export_source(location: str, buckets: Buckets | None, deep: bool) -> TableSource:
    """A full export (deep: also parse the columns only --deep compares)."""
    manifest = full_export_manifest(location, buckets)
    # The summary's itemCount sizes the partitions; the data files' counts when it has none.
    counts = [f.item_count for f in manifest.files]
    item_count = manifest.item_count
    if item_count is None and None not in counts:
        item_count = sum(c or 0 for c in counts)
    return TableSource(
        (location,),
        manifest.export_time,
        item_count,
        manifest.table_arn,
        lambda: export_frames(manifest, deep),
        anchored_at=manifest.export_time,
    )


class DroppedRows(BaseModel):
    """The row numbers of a kept data file that are no longer in the table: a Parquet file of one
    UInt32 column, in the directory of the state that lists it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(pattern=r"^dropped/[0-9a-f]{8}-[0-9]{5}\.parquet$")
    rows: int = Field(ge=1)
    bytes: int
    md5: str


class StateFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Relative to the directory that holds it, and only the names a writer gives: a manifest
    # cannot send the reader to another file (`../`, another prefix).
    key: str = Field(pattern=r"^data/[0-9a-f]{8}-[0-9]{5}\.parquet$")
    rows: int  # in the data file
    bytes: int
    md5: str
    writtenAt: AwareDatetime  # the time of the state that wrote it
    # The state directory beside this one that wrote the file and keeps it; None: this state's.
    state: str | None = Field(default=None, pattern=_SIBLING)
    dropped: DroppedRows | None = None

    @property
    def live_rows(self) -> int:
        return self.rows - (self.dropped.rows if self.dropped else 0)


class StateManifest(BaseModel):
    """table-state.json."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str
    tableArn: str | None
    asOf: AwareDatetime
    itemCount: int
    files: list[StateFile]
    builtFrom: list[str]  # the export, or the state and exports, it was made of
    anchoredAt: AwareDatetime | None = None  # the full export its chain started from
    columns: list[str]  # the item columns its files hold (ITEMS_SCHEMA's when written)

    def dump(self) -> bytes:
        return self.model_dump_json(indent=2).encode()


def _state_directory(location: str, buckets: Buckets | None) -> Location:
    """A state's LOCATION is its directory or its table-state.json."""
    return Location(location.removesuffix(TABLE_STATE).rstrip("/") or ".", buckets)


def read_state(location: str, buckets: Buckets | None) -> tuple[StateManifest, Location]:
    """table-state.json at LOCATION, checked."""
    base = _state_directory(location, buckets)
    manifest_loc = base.child(TABLE_STATE)
    try:
        manifest = StateManifest.model_validate_json(manifest_loc.read())
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ReconcileInputError(
            f"{manifest_loc.text} is not a table state: {'.'.join(map(str, first['loc']))}: {first['msg']}"
        ) from exc
    if manifest.format != FORMAT:
        raise ReconcileInputError(f"{manifest_loc.text}: format {manifest.format!r} is not {FORMAT!r}")
    if manifest.columns != list(ITEMS_SCHEMA):
        missing = sorted(set(ITEMS_SCHEMA) - set(manifest.columns))
        raise ReconcileInputError(
            f"{manifest_loc.text} holds other item columns than the reconcile reads"
            f"{f' (it lacks {missing})' if missing else ''}: start over from a full export"
        )
    if len({(f.state, f.key) for f in manifest.files}) != len(manifest.files):
        raise ReconcileInputError(f"{manifest_loc.text} lists a data file twice")
    if any(f.live_rows < 0 for f in manifest.files):
        raise ReconcileInputError(f"{manifest_loc.text}: a data file drops more rows than it holds")
    if sum(f.live_rows for f in manifest.files) != manifest.itemCount:
        raise ReconcileInputError(
            f"{manifest_loc.text}: its files hold {sum(f.live_rows for f in manifest.files)} rows, "
            f"itemCount says {manifest.itemCount}"
        )
    return manifest, base


def _parquet(location: Location, size: int, md5: str, schema: dict[str, pl.DataType], rows: int) -> pl.DataFrame:
    data = data_file(location, size, md5)
    try:
        frame = pl.read_parquet(io.BytesIO(data))
    except pl.exceptions.PolarsError as exc:
        raise ReconcileInputError(f"{location.text} is not a Parquet file: {exc}") from exc
    if dict(frame.schema) != schema:
        raise ReconcileInputError(f"{location.text} has columns {dict(frame.schema)}, not a table state's")
    if frame.height != rows:
        raise ReconcileInputError(f"{location.text} holds {frame.height} rows, table-state.json says {rows}")
    return frame


@dataclass(frozen=True)
class Inherited:
    """The kept data file a piece's rows come from, less its rows no longer in the table."""

    entry: StateFile
    state: str  # the directory that holds the file
    parent: str  # that directory's parent: only a state beside it may keep the file
    dropped: pl.Series  # UInt32 row numbers of the file, sorted


@dataclass(frozen=True)
class Piece:
    """Rows of the table, and the kept data file they are (None: rows to write)."""

    frame: pl.DataFrame
    origin: Inherited | None = None


def _kept_file(base: Location, entry: StateFile) -> tuple[pl.DataFrame, Inherited]:
    """A state's data file and the rows it no longer holds (checked: sizes, MD5s, row numbers)."""
    holder = base.sibling(entry.state) if entry.state else base
    frame = _parquet(holder.child(entry.key), entry.bytes, entry.md5, ITEMS_SCHEMA, entry.rows)
    dropped = pl.Series(_ROW, [], pl.UInt32)
    if entry.dropped is not None:
        where = base.child(entry.dropped.key)
        listed = _parquet(where, entry.dropped.bytes, entry.dropped.md5, {_ROW: pl.UInt32()}, entry.dropped.rows)
        dropped = listed.get_column(_ROW)
        if not dropped.is_sorted() or dropped.is_duplicated().any() or dropped.max() >= entry.rows:  # type: ignore[operator]
            raise ReconcileInputError(f"{where.text}: not the sorted, distinct row numbers of a {entry.rows}-row file")
    return frame, Inherited(entry, holder.name, holder.parent, dropped)


def check_follows(changes: ExportManifest, table_at: datetime, table_arn: str | None, where: str) -> None:
    """`changes` must bring the table at `where` forward from `table_at` (the state's time, or
    the end of the export before it): incremental, of the same table, starting exactly then.
    """
    if not changes.incremental:
        raise ReconcileInputError(
            f"{changes.where} is a full export (the whole table): give it without --table-state, "
            "or give the incremental export that follows the state"
        )
    if table_arn and changes.table_arn and table_arn != changes.table_arn:
        raise ReconcileInputError(
            f"{changes.where} exports {changes.table_arn}, the table state at {where} is of {table_arn}"
        )
    assert changes.from_time is not None
    if changes.from_time > table_at:
        raise ReconcileInputError(
            f"{changes.where} starts at {format_ts(changes.from_time)}, "
            f"after the table state's {format_ts(table_at)}: the changes in between are in no input "
            "(export from the state's time, or start over from a full export)"
        )
    if changes.from_time < table_at:
        # Not harmless: DynamoDB reports each item's net change over the window, so an item
        # created after the window's start and deleted after the state's time is in no line,
        # and the state would keep it for ever.
        raise ReconcileInputError(
            f"{changes.where} starts at {format_ts(changes.from_time)}, before the table state's "
            f"{format_ts(table_at)}: an overlapping window can hide a delete (an item created inside the "
            "overlap and deleted after the state's time is in no line); export from exactly the state's time"
        )


def state_source(location: str, changes: Sequence[str], buckets: Buckets | None) -> TableSource:
    """A kept table state, brought forward by incremental exports (none, one, or the nights a run
    catches up), in order: each must start exactly where the state or the previous one ends.
    """
    state, base = read_state(location, buckets)
    manifests = [export_manifest(where, buckets) for where in changes]
    table_at = state.asOf
    for manifest in manifests:
        check_follows(manifest, table_at, state.tableArn, base.text)
        table_at = manifest.export_time

    def pieces() -> Iterator[Piece]:
        return _brought_forward(base, state, manifests)

    return TableSource(
        (base.text, *changes),
        table_at,
        state.itemCount + sum(m.item_count or 0 for m in manifests),  # an upper bound: it sizes the partitions
        state.tableArn or next((m.table_arn for m in manifests if m.table_arn), None),
        lambda: (piece.frame for piece in pieces()),
        anchored_at=state.anchoredAt,
        pieces=pieces,
    )


def _changed(manifests: list[ExportManifest], directory: Path) -> tuple[pl.DataFrame, list[Path]]:
    """The keys the exports name, and their images still alive (spilled as Arrow files): where
    several exports name an item, the latest one's image, so they are read newest first.
    """
    seen = empty({k: ITEMS_SCHEMA[k] for k in KEY})
    alive: list[Path] = []
    for manifest in reversed(manifests):
        named = []
        for frame in change_frames(manifest):
            named.append(frame.select(KEY))
            path = directory / f"{len(alive):05d}.arrow"
            newer = frame.join(seen, on=KEY, how="anti") if seen.height else frame
            newer.filter(pl.col("_alive")).drop("_alive").write_ipc(path, compression="uncompressed")
            alive.append(path)
        keys = pl.concat(named) if named else seen.clear()
        twice = keys.filter(pl.struct(KEY).is_duplicated())
        if twice.height:
            first = twice.row(0, named=True)
            raise ReconcileInputError(
                f"{manifest.where} names item {first['pk']} / {first['sk']} more than once: "
                "an incremental export holds one final image per item"
            )
        seen = pl.concat([seen, keys]).unique()
    return seen, alive


def _brought_forward(base: Location, state: StateManifest, changes: list[ExportManifest]) -> Iterator[Piece]:
    """The state's items without those the changes name, then the changed items still alive
    (spilled while the changes are read, so only the changed keys stay in memory).
    """
    with tempfile.TemporaryDirectory(prefix="docuflow-table-state-") as tmp:
        keys, alive = _changed(changes, Path(tmp))
        for frame, origin in bounded_map(lambda entry: _kept_file(base, entry), state.files, width=1):
            dropped = origin.dropped.append(named_rows(frame, keys)).unique().sort()
            yield Piece(_without_rows(frame, dropped), dataclasses.replace(origin, dropped=dropped))
        for path in alive:
            yield Piece(pl.read_ipc(path))


def named_rows(frame: pl.DataFrame, keys: pl.DataFrame) -> pl.Series:
    """The row numbers of `frame` whose (pk, sk) is in `keys`. Membership of the sort key alone
    first (one string column, cheap), the exact two-column join only on those candidates: a night
    names a few thousand of a state file's rows (a third the time of joining them all).
    """
    none = pl.Series(_ROW, [], pl.UInt32)
    if not keys.height:
        return none
    candidates = frame.with_row_index(_ROW).filter(pl.col("sk").is_in(keys.get_column("sk").implode()))
    if not candidates.height:
        return none
    return candidates.join(keys, on=KEY, how="semi").get_column(_ROW)


def _without_rows(frame: pl.DataFrame, rows: pl.Series) -> pl.DataFrame:
    if not rows.len():
        return frame
    return frame.filter(~pl.int_range(pl.len(), dtype=pl.UInt32).is_in(rows.implode()))


def without_keys(frame: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """`frame` without the rows whose (pk, sk) is in `keys`, in order."""
    return _without_rows(frame, named_rows(frame, keys))


def gathering(source: TableSource, wanted: pl.Expr, into: list[pl.DataFrame]) -> TableSource:
    """The same source; as the engine reads its frames, the rows matching `wanted` are added to
    `into` (copied: a few rows must not pin their chunk), so a second look at them needs no
    second read of the table.
    """

    def gather(frame: pl.DataFrame) -> None:
        rows = frame.filter(wanted)
        if rows.height:
            into.append(detached(rows))

    if source.pieces is not None:
        read = source.pieces

        def pieces() -> Iterator[Piece]:
            for piece in read():
                gather(piece.frame)
                yield piece

        return dataclasses.replace(source, frames=lambda: (p.frame for p in pieces()), pieces=pieces)

    def frames() -> Iterator[pl.DataFrame]:
        for frame in source.frames():
            gather(frame)
            yield frame

    return dataclasses.replace(source, frames=frames)


class StateWriter:
    """Writes the items a run reads as a new table state at `location` (write-once).

    Rows that come from a kept state's data file keep that file, with the row numbers it no
    longer holds, while the file is younger than `keep_for` and mostly alive (module docstring);
    every other row is written again. Data files are written on a thread of their own while the
    run goes on judging (Parquet encoding releases the GIL); `commit` waits for them, then writes
    table-state.json.
    """

    ROWS_PER_FILE = 250_000
    QUEUED = 2  # data files at most waiting to be written (each holds its rows until then)

    def __init__(self, location: str, buckets: Buckets | None, keep_for: timedelta = timedelta(0)) -> None:
        self.base = _state_directory(location, buckets)
        if self.base.child(TABLE_STATE).exists():
            raise ReconcileInputError(
                f"{self.base.child(TABLE_STATE).text} exists: a table state is written once, give a new location"
            )
        self.keep_for = keep_for
        # Data files of an attempt that never wrote table-state.json are not listed, so never read.
        self._attempt = uuid.uuid4().hex[:8]
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="table-state")
        self._pending: list[Future[StateFile]] = []
        self._source: TableSource | None = None

    def tee(self, source: TableSource) -> TableSource:
        """The same source; every frame it yields is also kept in this state (`commit` then
        describes the state as of that source's time).
        """
        self._source = source
        pieces = source.pieces or (lambda: (Piece(frame) for frame in source.frames()))

        def frames() -> Iterator[pl.DataFrame]:
            for piece in pieces():
                if piece.origin is not None and self.keeps(piece.origin, source.taken_at):
                    self._pending.append(self._pool.submit(self._keep, self._key("dropped"), piece.origin))
                else:
                    self._write_rows(piece.frame, source.taken_at)
                yield piece.frame

        return dataclasses.replace(source, frames=frames, pieces=None)

    def keeps(self, origin: Inherited, as_of: datetime) -> bool:
        """Whether this state keeps `origin`'s data file rather than write its rows again."""
        entry = origin.entry
        if origin.parent != self.base.parent or origin.dropped.len() > MAX_DROPPED * entry.rows:
            return False
        # Each file at its own point of keep_for: files written together are not all rewritten at once.
        spread = int(hashlib.md5(entry.key.encode()).hexdigest()[:8], 16) / 2**32
        return as_of - entry.writtenAt < self.keep_for * (0.5 + 0.5 * spread)

    def _key(self, kind: str) -> str:
        return f"{kind}/{self._attempt}-{len(self._pending):05d}.parquet"

    def _write_rows(self, frame: pl.DataFrame, as_of: datetime) -> None:
        for start in range(0, frame.height, self.ROWS_PER_FILE):
            if len(self._pending) >= self.QUEUED:
                # The writer is behind: wait, so frames waiting to be written stay few.
                self._pending[-self.QUEUED].result()
            rows = frame.slice(start, self.ROWS_PER_FILE)
            self._pending.append(self._pool.submit(self._write, self._key("data"), rows, as_of))

    def _write(self, key: str, frame: pl.DataFrame, as_of: datetime) -> StateFile:
        size, md5 = self._put(key, frame)
        return StateFile(key=key, rows=frame.height, bytes=size, md5=md5, writtenAt=as_of)

    def _keep(self, key: str, origin: Inherited) -> StateFile:
        dropped = None
        if origin.dropped.len():
            size, md5 = self._put(key, origin.dropped.to_frame(_ROW))
            dropped = DroppedRows(key=key, rows=origin.dropped.len(), bytes=size, md5=md5)
        return origin.entry.model_copy(update={"state": origin.state, "dropped": dropped})

    def _put(self, key: str, frame: pl.DataFrame) -> tuple[int, str]:
        """Write `frame` as Parquet at `key` of this state (once); its size and MD5."""
        buffer = io.BytesIO()
        # zstd level 1 without statistics: little CPU per file and far fewer bytes than lz4
        # (docs/reconcile.md, Performance).
        frame.write_parquet(buffer, compression="zstd", compression_level=1, statistics=False)
        data = buffer.getvalue()
        self._write_once(self.base.child(key), data, "application/vnd.apache.parquet")
        return len(data), hashlib.md5(data).hexdigest()

    def commit(self) -> str:
        """Write table-state.json once every data file is written: the state exists from here on."""
        source = self._source
        if source is None:
            raise ReconcileInputError(f"{self.base.text}: no table was read into this state")
        files = [pending.result() for pending in self._pending]
        self.close()
        manifest = StateManifest(
            format=FORMAT,
            tableArn=source.table_arn,
            asOf=source.taken_at,
            itemCount=sum(f.live_rows for f in files),
            files=files,
            builtFrom=list(source.inputs),
            anchoredAt=source.anchored_at,
            columns=list(ITEMS_SCHEMA),
        )
        self._write_once(self.base.child(TABLE_STATE), manifest.dump(), "application/json")
        return self.base.text

    def close(self) -> None:
        """Stop writing (a failed run): data files not started are dropped, none is listed."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    @staticmethod
    def _write_once(location: Location, data: bytes, content_type: str) -> None:
        try:
            location.write_once(data, content_type)
        except (FileExistsError, S3ObjectExistsError) as exc:
            raise ReconcileInputError(
                f"{location.text} exists: a table state is written once, give a new location"
            ) from exc
