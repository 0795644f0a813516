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

The chain is checked: the export must be of the same table and its window must start no later
than the state's time and end after it (an overlap is harmless: each changed item comes with its
final image); a gap, another table, a full export given as changes, or a damaged data file is a
ReconcileInputError (exit 2), never a silently partial table. A state location is written once.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from jobs.contract.item import MARKER_FIELDS
from jobs.errors import ReconcileInputError, S3ObjectExistsError
from jobs.reconcile.frames import ITEMS_SCHEMA, empty
from jobs.reconcile.inputs.datafiles import bounded_map, data_file
from jobs.reconcile.inputs.export import (
    ExportManifest,
    change_frames,
    export_frames,
    export_manifest,
    full_export_manifest,
)
from jobs.reconcile.inputs.location import Location

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

TABLE_STATE = "table-state.json"
FORMAT = "docuflow-table-state/1"
KEY = ["pk", "sk"]


@dataclass(frozen=True)
class TableSource:
    """Where the table's items come from, as of when, and the items themselves (ITEMS_SCHEMA
    frames, one data file at a time).
    """

    inputs: tuple[str, ...]  # the export, or the state and the export that brought it forward
    taken_at: datetime
    item_count: int | None
    table_arn: str | None
    frames: Callable[[], Iterator[pl.DataFrame]]

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
        (location,), manifest.export_time, item_count, manifest.table_arn, lambda: export_frames(manifest, deep)
    )


class StateFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Relative to the state's location, and only the names a writer gives: a manifest cannot send
    # the reader to another file (`../`, another prefix).
    key: str = Field(pattern=r"^data/[0-9a-f]{8}-[0-9]{5}\.parquet$")
    rows: int
    bytes: int
    md5: str


class StateManifest(BaseModel):
    """table-state.json."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str
    tableArn: str | None
    asOf: AwareDatetime
    itemCount: int
    files: list[StateFile]
    builtFrom: list[str]  # the export and state it was made of

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
    if sum(f.rows for f in manifest.files) != manifest.itemCount:
        raise ReconcileInputError(
            f"{manifest_loc.text}: its files hold {sum(f.rows for f in manifest.files)} rows, "
            f"itemCount says {manifest.itemCount}"
        )
    return manifest, base


def _state_frame(base: Location, entry: StateFile) -> pl.DataFrame:
    location = base.child(entry.key)
    data = data_file(location, entry.bytes, entry.md5)
    try:
        frame = pl.read_parquet(io.BytesIO(data))
    except pl.exceptions.PolarsError as exc:
        raise ReconcileInputError(f"{location.text} is not a Parquet file: {exc}") from exc
    frame = _with_marker_columns(frame)
    if dict(frame.schema) != ITEMS_SCHEMA:
        raise ReconcileInputError(f"{location.text} has columns {dict(frame.schema)}, not a table state's")
    if frame.height != entry.rows:
        raise ReconcileInputError(f"{location.text} holds {frame.height} rows, table-state.json says {entry.rows}")
    return frame


def _with_marker_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """A state kept before documents held duplicate markers has no marker columns: none held any."""
    missing = [c for c in MARKER_FIELDS.values() if c not in frame.columns]
    if not missing:
        return frame
    added = frame.with_columns(pl.lit(None, pl.String).alias(c) for c in missing)
    return added.select(list(ITEMS_SCHEMA)) if set(added.columns) == set(ITEMS_SCHEMA) else added


def _check_chain(state: StateManifest, where: str, changes: ExportManifest) -> None:
    if not changes.incremental:
        raise ReconcileInputError(
            f"{changes.where} is a full export (the whole table): give it without --table-state, "
            "or give the incremental export that follows the state"
        )
    if state.tableArn and changes.table_arn and state.tableArn != changes.table_arn:
        raise ReconcileInputError(
            f"{changes.where} exports {changes.table_arn}, the table state at {where} is of {state.tableArn}"
        )
    assert changes.from_time is not None
    if changes.from_time > state.asOf:
        raise ReconcileInputError(
            f"{changes.where} starts at {changes.from_time:%Y-%m-%dT%H:%M:%SZ}, "
            f"after the table state's {state.asOf:%Y-%m-%dT%H:%M:%SZ}: the changes in between are in no input "
            "(export from the state's time, or start over from a full export)"
        )
    if changes.export_time <= state.asOf:
        raise ReconcileInputError(
            f"{changes.where} ends at {changes.export_time:%Y-%m-%dT%H:%M:%SZ}, "
            "not after the table state's time: it brings nothing forward"
        )


def state_source(location: str, changes_location: str | None, buckets: Buckets | None) -> TableSource:
    """A kept table state, brought forward by an incremental export when one is given."""
    state, base = read_state(location, buckets)
    if changes_location is None:
        return TableSource(
            (base.text,), state.asOf, state.itemCount, state.tableArn, lambda: _brought_forward(base, state, None)
        )
    changes = export_manifest(changes_location, buckets)
    _check_chain(state, base.text, changes)
    return TableSource(
        (base.text, changes_location),
        changes.export_time,
        state.itemCount + (changes.item_count or 0),  # an upper bound: it sizes the partitions
        state.tableArn or changes.table_arn,
        lambda: _brought_forward(base, state, changes),
    )


def _brought_forward(base: Location, state: StateManifest, changes: ExportManifest | None) -> Iterator[pl.DataFrame]:
    """The state's items without those the changes name, then the changed items still alive
    (spilled while the state is read, so only the changed keys stay in memory).
    """
    with tempfile.TemporaryDirectory(prefix="docuflow-table-state-") as tmp:
        keys = empty({k: ITEMS_SCHEMA[k] for k in KEY})
        alive: list[Path] = []
        if changes is not None:
            parts = []
            for number, frame in enumerate(change_frames(changes)):
                parts.append(frame.select(KEY))
                path = Path(tmp) / f"{number:05d}.arrow"
                frame.filter(pl.col("_alive")).drop("_alive").write_ipc(path, compression="uncompressed")
                alive.append(path)
            keys = pl.concat([keys, *parts])
            twice = keys.filter(pl.struct(KEY).is_duplicated())
            if twice.height:
                first = twice.row(0, named=True)
                raise ReconcileInputError(
                    f"{changes.where} names item {first['pk']} / {first['sk']} more than once: "
                    "an incremental export holds one final image per item"
                )
        for frame in bounded_map(lambda entry: _state_frame(base, entry), state.files):
            yield frame.join(keys, on=KEY, how="anti") if keys.height else frame
        for path in alive:
            yield pl.read_ipc(path)


class StateWriter:
    """Writes the items a run reads as a new table state at `location` (write-once).

    Data files are written on a thread of their own while the run goes on judging (Parquet
    encoding releases the GIL); `commit` waits for them, then writes table-state.json.
    """

    ROWS_PER_FILE = 250_000

    def __init__(self, location: str, buckets: Buckets | None) -> None:
        self.base = _state_directory(location, buckets)
        if self.base.child(TABLE_STATE).exists():
            raise ReconcileInputError(
                f"{self.base.child(TABLE_STATE).text} exists: a table state is written once, give a new location"
            )
        # Data files of an attempt that never wrote table-state.json are not listed, so never read.
        self._attempt = uuid.uuid4().hex[:8]
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="table-state")
        self._pending: list[Future[StateFile]] = []

    def tee(self, source: TableSource) -> TableSource:
        """The same source; every frame it yields is also written as a data file."""

        def frames() -> Iterator[pl.DataFrame]:
            for frame in source.frames():
                for start in range(0, frame.height, self.ROWS_PER_FILE):
                    key = f"data/{self._attempt}-{len(self._pending):05d}.parquet"
                    self._pending.append(self._pool.submit(self._write, key, frame.slice(start, self.ROWS_PER_FILE)))
                yield frame

        return TableSource(source.inputs, source.taken_at, source.item_count, source.table_arn, frames)

    def _write(self, key: str, frame: pl.DataFrame) -> StateFile:
        buffer = io.BytesIO()
        # zstd level 1 without statistics: little CPU per file and far fewer bytes than lz4
        # (docs/reconcile.md, Performance).
        frame.write_parquet(buffer, compression="zstd", compression_level=1, statistics=False)
        data = buffer.getvalue()
        self._write_once(self.base.child(key), data, "application/vnd.apache.parquet")
        return StateFile(key=key, rows=frame.height, bytes=len(data), md5=hashlib.md5(data).hexdigest())

    def commit(self, source: TableSource) -> str:
        """Write table-state.json once every data file is written: the state exists from here on."""
        files = [pending.result() for pending in self._pending]
        self.close()
        manifest = StateManifest(
            format=FORMAT,
            tableArn=source.table_arn,
            asOf=source.taken_at,
            itemCount=sum(f.rows for f in files),
            files=files,
            builtFrom=list(source.inputs),
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
