"""A kept table state brought forward by an incremental export is the table a full export shows.

The engines' test state (every kind of finding) is the table at T1. At T0, a day earlier, three of
its items did not exist yet, three had other values and two more existed that were deleted since.
T0 goes out as a full export and is kept as a table state; the window [T0, T1) goes out as an
incremental export (a final image per changed item, keys only for the deleted ones); T1 also goes
out as a full export. Duplicate markers are rows like the items: the deleted documents held theirs
(deleted with them), and an orphan marker of the state was put in the window. The state plus the
changes must give the findings the full T1 export gives, finding for finding; and a broken chain
or a damaged state is refused, never read as a table.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from jobs.contract import DuplicateKind, DuplicateMarker, Status, layout
from jobs.errors import ReconcileInputError
from jobs.local.writers import (
    change_line,
    export_line,
    write_export,
    write_incremental_export,
    write_inventory,
)
from jobs.reconcile import cli
from jobs.reconcile.engines import partitions
from jobs.reconcile.engines.polars import FileInputs, PolarsEngine
from jobs.reconcile.inputs.inventory import inventory_pair
from jobs.reconcile.inputs.table_state import (
    TABLE_STATE,
    StateWriter,
    TableSource,
    export_source,
    state_source,
    without_keys,
)
from jobs.reconcile.rules.findings import render
from jobs.reconcile.rules.frames import OBJECTS_SCHEMA, RESULTS_SCHEMA
from jobs.reconcile.rules.params import RuleParams
from jobs.store.dynamo_wire import to_wire
from tests.jobs.reconcile.test_engines import AS_OF, PROC, RAW, _item, state

TABLE = "arn:aws:dynamodb:eq:0:table/t"
T0 = AS_OF - timedelta(days=1)
NEW = ("ok", "noresult", "stale")  # created in the window (their item is absent at T0)
CHANGED = ("noraw", "stuck", "drift")  # other values at T0
DELETED = ("gone1", "gone2")  # existed at T0 holding a marker, deleted in the window with it
NEW_MARKER = "gone"  # the state's orphan marker (its holder never existed) was put in the window


def _doc(item: dict[str, Any]) -> str:
    # An erasure marker (in the shared state) names no document: its sort key stands for it.
    return str(item.get("documentId", item[layout.SK_ATTR])["S"])


def _held(doc: str) -> list[dict[str, Any]]:
    """A document of T0 that held its content marker, and the marker."""
    digest = hashlib.sha256(doc.encode()).hexdigest()
    marker = DuplicateMarker(
        userId="u9", kind=DuplicateKind.CONTENT, digest=digest, documentId=doc, createdAt=T0, updatedBy="ingest:r"
    )
    return [to_wire(_item("u9", doc, contentMarker=digest)), to_wire(marker.to_item())]


def _key(item: dict[str, Any]) -> dict[str, Any]:
    return {a: item[a] for a in (layout.PK_ATTR, layout.SK_ATTR)}


def _chunks(lines: list[str], size: int = 7) -> list[bytes]:
    return [("".join(lines[i : i + size])).encode() for i in range(0, len(lines), size)] + [b""]


@dataclasses.dataclass
class Files:
    t0: str
    t1: str
    changes: str
    manifests: list[str]
    results: pl.DataFrame


def _files(tmp_path: Path) -> Files:
    items, raw, processed, results = state()
    t1 = [to_wire(item) for item in items]
    earlier = {
        doc: to_wire(_item("u1", doc, status=Status.FAILED, updatedAt=T0 - timedelta(hours=1))) for doc in CHANGED
    }
    t0 = [earlier.get(_doc(i), i) for i in t1 if _doc(i) not in (*NEW, NEW_MARKER)]
    t0 += [row for doc in DELETED for row in _held(doc)]
    changed = [i for i in t1 if _doc(i) in (*NEW, *CHANGED, NEW_MARKER)]
    assert len(changed) == len(NEW + CHANGED) + 1
    change_lines = [change_line(_key(i), i, AS_OF - timedelta(hours=2)) for i in changed]
    change_lines += [change_line(_key(i), None, AS_OF - timedelta(hours=3)) for i in t0 if _doc(i) in DELETED]
    exports = tmp_path / "exports"
    manifests = [
        str(
            write_inventory(
                tmp_path / "inventory",
                bucket,
                AS_OF,
                [pl.DataFrame(rows, schema=OBJECTS_SCHEMA, orient="row")],
                "Parquet",
            )
        )
        for bucket, rows in ((RAW, raw), (PROC, processed))
    ]
    return Files(
        t0=str(write_export(exports, TABLE, T0, _chunks([export_line(i) for i in t0]))),
        t1=str(write_export(exports, TABLE, AS_OF, _chunks([export_line(i) for i in t1]))),
        changes=str(write_incremental_export(exports, TABLE, T0, AS_OF, _chunks(change_lines, 3))),
        manifests=manifests,
        results=pl.DataFrame(results, schema=RESULTS_SCHEMA, orient="row"),
    )


def _kept(source: TableSource, location: Path) -> str:
    writer = StateWriter(str(location), None)
    for _ in writer.tee(source).frames():
        pass
    return writer.commit()


def _findings(files: Files, table: TableSource, deep: bool) -> tuple[pl.DataFrame, dict[str, int]]:
    params = RuleParams(raw_bucket=RAW, processed_bucket=PROC, as_of=AS_OF, deep=deep)

    def read(keys: list[str]) -> pl.DataFrame:
        return files.results.filter(pl.col("key").is_in(keys))

    inputs = FileInputs(table, *inventory_pair(files.manifests, None, RAW, PROC))
    found = PolarsEngine(inputs, read if deep else None).find(lambda as_of: dataclasses.replace(params, as_of=as_of))
    assert found.taken_at["table"] == table.taken_at
    return render(found.wide), found.sizes


def _sorted(frames: list[pl.DataFrame]) -> pl.DataFrame:
    return pl.concat(frames).sort("pk", "sk")


@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
@pytest.mark.parametrize("rows_per_partition", [partitions.ROWS_PER_PARTITION, 10], ids=["one-partition", "partitions"])
def test_state_plus_incremental_export_gives_the_full_exports_findings(
    tmp_path: Path, deep: bool, rows_per_partition: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(partitions, "ROWS_PER_PARTITION", rows_per_partition)
    files = _files(tmp_path)
    kept = _kept(export_source(files.t0, None, deep=True), tmp_path / "state-t0")
    # The kept state is the T0 table, every column.
    t0_items = _sorted(list(export_source(files.t0, None, deep=True).frames()))
    assert_frame_equal(_sorted(list(state_source(kept, [], None).frames())), t0_items)

    forward = state_source(kept, [files.changes], None)
    assert forward.taken_at == AS_OF
    by_state, sizes = _findings(files, forward, deep)
    by_full, full_sizes = _findings(files, export_source(files.t1, None, deep), deep)
    assert_frame_equal(by_state, by_full)
    assert sizes == full_sizes
    documents = set(by_state.get_column("documentId").drop_nulls().to_list())
    assert {"noresult", "noraw", "stale", "stuck", "drift"} <= documents  # findings of new and changed items
    assert not set(DELETED) & documents
    markers = by_state.filter(pl.col("code").str.ends_with("_MARKER"))
    assert "gone" in markers.get_column("documentId").to_list()  # the marker put in the window
    t1_items = _sorted(list(export_source(files.t1, None, deep=True).frames()))
    assert_frame_equal(_sorted(list(state_source(kept, [files.changes], None).frames())), t1_items)


def test_the_state_a_run_keeps_chains_into_the_next_nights_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the CLI: night 1 reads the full export and keeps the table; night 2 reads that
    plus the incremental export, keeps its own, and finds what a full export finds.
    """
    files = _files(tmp_path)
    monkeypatch.setenv("DOCUFLOW_RAW_BUCKET", RAW)
    monkeypatch.setenv("DOCUFLOW_PROCESSED_BUCKET", PROC)
    inventories = [arg for m in files.manifests for arg in ("--s3-inventory", m)]
    common = [*inventories, "--no-report", "--grace", "0s"]
    night1, night2 = tmp_path / "night1", tmp_path / "night2"
    assert cli.main(["files", "--dynamodb-export", files.t0, "--write-table-state", str(night1), *common]) == 1
    assert json.loads((night1 / TABLE_STATE).read_text())["builtFrom"] == [files.t0]
    capsys.readouterr()
    assert (
        cli.main(
            [
                "files",
                "--table-state",
                str(night1),
                "--dynamodb-export",
                files.changes,
                "--write-table-state",
                str(night2),
                *common,
            ]
        )
        == 1
    )
    by_state = capsys.readouterr().out
    assert cli.main(["files", "--dynamodb-export", files.t1, *common]) == 1
    by_full = capsys.readouterr().out
    assert by_state.splitlines()[1:] == by_full.splitlines()[1:]  # the same counts, line for line
    kept = json.loads((night2 / TABLE_STATE).read_text())
    assert kept["builtFrom"] == [str(night1), files.changes]
    assert kept["asOf"].startswith(AS_OF.strftime("%Y-%m-%dT%H:%M"))
    assert kept["itemCount"] == len(state()[0])
    # A run that fails (one bucket's inventory missing) keeps no state.
    failed = tmp_path / "failed"
    one_inventory = ["--s3-inventory", files.manifests[0], "--no-report"]
    assert (
        cli.main(
            [
                "files",
                "--table-state",
                str(night1),
                "--dynamodb-export",
                files.changes,
                "--write-table-state",
                str(failed),
                *one_inventory,
            ]
        )
        == 2
    )
    assert not (failed / TABLE_STATE).exists()
    # A state is written once: the same location again is exit 2, before anything is read.
    assert (
        cli.main(
            [
                "files",
                "--table-state",
                str(night1),
                "--dynamodb-export",
                files.changes,
                "--write-table-state",
                str(night2),
                *common,
            ]
        )
        == 2
    )
    assert "written once" in capsys.readouterr().err


def _keep_night(source: TableSource, location: Path, keep_for: timedelta) -> dict[str, Any]:
    writer = StateWriter(str(location), None, keep_for)
    for _ in writer.tee(source).frames():
        pass
    writer.commit()
    return dict(json.loads((location / TABLE_STATE).read_text()))


def test_a_night_keeps_the_files_it_did_not_write_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Night 1 keeps night 0's data files where they lie, with the rows each no longer holds,
    and writes only the changed items (and the rows of files it may not keep); night 2, with
    nothing changed, writes nothing. Each state reads as the table of its time, and its findings
    are the full export's.
    """
    monkeypatch.setattr(StateWriter, "ROWS_PER_FILE", 4)  # several files, not all touched by the night
    monkeypatch.setattr("jobs.reconcile.inputs.table_state.MAX_DROPPED", 0.5)  # kept with up to 2 of 4 dropped
    files = _files(tmp_path)
    states, week = tmp_path / "states", timedelta(days=6)
    night0 = _keep_night(export_source(files.t0, None, deep=True), states / "night0", week)
    assert all(f["state"] is None and f["dropped"] is None for f in night0["files"])
    night1 = _keep_night(state_source(str(states / "night0"), [files.changes], None), states / "night1", week)
    kept = {f["key"]: f for f in night1["files"] if f["state"] == "night0"}
    assert any(f["dropped"] for f in kept.values()) and any(not f["dropped"] for f in kept.values())
    rewritten = [f for f in night0["files"] if f["key"] not in kept]
    written = sum(f["rows"] for f in night1["files"] if f["state"] is None)
    live_rewritten = sum(f["rows"] for f in rewritten) - (
        len(CHANGED) + 2 * len(DELETED) - sum(f["dropped"]["rows"] for f in kept.values() if f["dropped"])
    )
    assert written == len(NEW) + len(CHANGED) + 1 + live_rewritten  # the night's images, the new marker
    assert night1["itemCount"] == len(state()[0])
    t1_items = _sorted(list(export_source(files.t1, None, deep=True).frames()))
    assert_frame_equal(_sorted(list(state_source(str(states / "night1"), [], None).frames())), t1_items)
    by_state, _ = _findings(files, state_source(str(states / "night1"), [], None), deep=True)
    assert_frame_equal(by_state, _findings(files, export_source(files.t1, None, deep=True), deep=True)[0])

    quiet = str(write_incremental_export(tmp_path / "quiet", TABLE, AS_OF, AS_OF + timedelta(days=1), [b""]))
    night2 = _keep_night(state_source(str(states / "night1"), [quiet], None), states / "night2", week)
    assert {f["state"] for f in night2["files"]} <= {"night0", "night1"}  # nothing written again
    dropped = {f["key"]: f["dropped"]["rows"] for f in night2["files"] if f["dropped"]}
    assert dropped == {k: f["dropped"]["rows"] for k, f in kept.items() if f["dropped"]}
    assert_frame_equal(_sorted(list(state_source(str(states / "night2"), [], None).frames())), t1_items)


@pytest.mark.parametrize("why", ["aged", "elsewhere", "mostly-dropped"])
def test_a_file_is_written_again_when_it_may_not_be_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, why: str
) -> None:
    """Older than the writer may keep it (the states' expiry would remove it while a later state
    needs it), in another directory than the new state's, or a fifth of it dropped: its live rows
    are written again and the new state names no earlier one.
    """
    monkeypatch.setattr(StateWriter, "ROWS_PER_FILE", 4)
    files = _files(tmp_path)
    _keep_night(export_source(files.t0, None, deep=True), tmp_path / "a" / "night0", timedelta(days=6))
    keep_for, target = timedelta(days=6), tmp_path / "a" / "night1"
    if why == "aged":
        keep_for = timedelta(hours=23)  # the state is a day old: past even the latest a file may be kept
    elif why == "elsewhere":
        target = tmp_path / "b" / "night1"
    else:
        monkeypatch.setattr("jobs.reconcile.inputs.table_state.MAX_DROPPED", 0.0)
    source = state_source(str(tmp_path / "a" / "night0"), [files.changes], None)
    night1 = _keep_night(source, target, keep_for)
    if why == "mostly-dropped":  # only the files that lost a row are written again
        assert any(f["state"] == "night0" for f in night1["files"])
        assert all(f["dropped"] is None for f in night1["files"])
    else:
        assert all(f["state"] is None and f["dropped"] is None for f in night1["files"])
    t1_items = _sorted(list(export_source(files.t1, None, deep=True).frames()))
    assert_frame_equal(_sorted(list(state_source(str(target), [], None).frames())), t1_items)


@pytest.mark.parametrize(
    "damage", ["dropped-replaced", "dropped-missing", "kept-missing", "outside", "unsorted", "listed-twice"]
)
def test_a_damaged_kept_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    monkeypatch.setattr(StateWriter, "ROWS_PER_FILE", 4)
    monkeypatch.setattr("jobs.reconcile.inputs.table_state.MAX_DROPPED", 0.5)
    files = _files(tmp_path)
    _keep_night(export_source(files.t0, None, deep=True), tmp_path / "night0", timedelta(days=6))
    source = state_source(str(tmp_path / "night0"), [files.changes], None)
    night1 = tmp_path / "night1"
    manifest = _keep_night(source, night1, timedelta(days=6))
    entry = next(f for f in manifest["files"] if f["dropped"])
    if damage == "dropped-replaced":
        pl.DataFrame({"_row": [0]}, schema={"_row": pl.UInt32}).write_parquet(night1 / entry["dropped"]["key"])
    elif damage == "dropped-missing":
        (night1 / entry["dropped"]["key"]).unlink()
    elif damage == "kept-missing":
        (tmp_path / "night0" / entry["key"]).unlink()
    else:
        if damage == "outside":
            entry["state"] = ".."
        elif damage == "listed-twice":  # its rows would be read twice
            manifest["files"].append(entry)
            manifest["itemCount"] += entry["rows"] - entry["dropped"]["rows"]
        else:  # row numbers listed out of order: checked, never trusted
            rows = pl.DataFrame({"_row": [3, 1]}, schema={"_row": pl.UInt32})
            rows.write_parquet(night1 / entry["dropped"]["key"])
            data = (night1 / entry["dropped"]["key"]).read_bytes()
            entry["dropped"] |= {"rows": 2, "bytes": len(data), "md5": hashlib.md5(data).hexdigest()}
            manifest["itemCount"] = sum(
                f["rows"] - (f["dropped"]["rows"] if f["dropped"] else 0) for f in manifest["files"]
            )
        (night1 / TABLE_STATE).write_text(json.dumps(manifest))
    with pytest.raises(ReconcileInputError):
        list(state_source(str(night1), [], None).frames())


def _summary(export: str) -> tuple[Path, dict[str, Any]]:
    path = Path(export) / "manifest-summary.json"
    return path, json.loads(path.read_text())


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("gap", "the changes in between are in no input"),
        ("overlap", "an overlapping window can hide a delete"),
        ("other-table", "the table state at"),
        ("full-as-changes", "is a full export"),
        ("twice", "more than once"),
    ],
)
def test_a_broken_chain_is_refused(tmp_path: Path, case: str, message: str) -> None:
    files = _files(tmp_path)
    kept = _kept(export_source(files.t0, None, deep=True), tmp_path / "state")
    changes = files.changes
    if case == "gap":
        changes = str(write_incremental_export(tmp_path / "later", TABLE, T0 + timedelta(hours=1), AS_OF, [b""]))
    elif case == "overlap":
        changes = str(write_incremental_export(tmp_path / "earlier", TABLE, T0 - timedelta(hours=1), AS_OF, [b""]))
    elif case == "other-table":
        changes = str(write_incremental_export(tmp_path / "other", TABLE + "2", T0, AS_OF, [b""]))
    elif case == "full-as-changes":
        changes = files.t1
    else:
        item = to_wire(_item("u1", "ok"))
        line = change_line(_key(item), item, AS_OF - timedelta(hours=1))
        changes = str(write_incremental_export(tmp_path / "twice", TABLE, T0, AS_OF, [(line + line).encode()]))
    with pytest.raises(ReconcileInputError, match=message):
        list(state_source(kept, [changes], None).frames())


def test_an_incremental_export_alone_is_not_a_table(tmp_path: Path) -> None:
    files = _files(tmp_path)
    with pytest.raises(ReconcileInputError, match="give it with --table-state"):
        export_source(files.changes, None, deep=False)


@pytest.mark.parametrize("damage", ["replaced", "missing", "format", "count", "elsewhere"])
def test_a_damaged_state_is_refused(tmp_path: Path, damage: str) -> None:
    files = _files(tmp_path)
    kept = Path(_kept(export_source(files.t0, None, deep=True), tmp_path / "state"))
    manifest = json.loads((kept / TABLE_STATE).read_text())
    data = kept / manifest["files"][0]["key"]
    if damage == "replaced":
        frame = pl.read_parquet(data)
        frame.with_columns(pl.lit("PROCESSED").alias("status")).write_parquet(data)
    elif damage == "missing":
        data.unlink()
    elif damage == "elsewhere":  # a manifest naming a file outside the state
        manifest["files"][0]["key"] = "data/../../exports/" + manifest["files"][0]["key"]
        (kept / TABLE_STATE).write_text(json.dumps(manifest))
    elif damage == "format":
        (kept / TABLE_STATE).write_text(json.dumps(manifest | {"format": "something-else/9"}))
    else:
        (kept / TABLE_STATE).write_text(json.dumps(manifest | {"itemCount": manifest["itemCount"] + 1}))
    with pytest.raises(ReconcileInputError):
        list(state_source(str(kept), [files.changes], None).frames())


@pytest.mark.parametrize(
    "missing",
    [
        # Judged as they are, every item would look like one written before retention was recorded.
        ["hardDeleteAt", "legalHoldAt", "retainUntil", "retentionClass"],
        # Not read as holding none: every marker beside its document would be an ORPHAN_MARKER.
        ["contentMarker", "invoiceMarker"],
    ],
    ids=["lifecycle", "duplicate-markers"],
)
def test_a_state_written_before_columns_the_rules_read_is_refused(tmp_path: Path, missing: list[str]) -> None:
    files = _files(tmp_path)
    kept = Path(_kept(export_source(files.t0, None, deep=True), tmp_path / "state"))
    manifest = json.loads((kept / TABLE_STATE).read_text())
    older = [c for c in manifest["columns"] if c not in missing]
    (kept / TABLE_STATE).write_text(json.dumps(manifest | {"columns": older}))
    with pytest.raises(ReconcileInputError, match=re.escape(f"lacks {missing}")):
        state_source(str(kept), [files.changes], None)


def test_an_unfinished_write_leaves_no_state_and_a_retry_writes_one(tmp_path: Path) -> None:
    files = _files(tmp_path)
    location = tmp_path / "state"
    writer = StateWriter(str(location), None)
    frames = writer.tee(export_source(files.t0, None, deep=True)).frames()
    next(frames)  # the run dies after its first data file
    assert not (location / TABLE_STATE).exists()
    with pytest.raises(ReconcileInputError, match=r"table-state\.json"):
        state_source(str(location), [], None)
    kept = _kept(export_source(files.t0, None, deep=True), location)
    listed = {f["key"] for f in json.loads((Path(kept) / TABLE_STATE).read_text())["files"]}
    on_disk = {p.relative_to(location).as_posix() for p in (location / "data").iterdir()}
    assert listed < on_disk  # the dead attempt's file is there, and not part of the state
    t0_rows = len(state()[0]) - len(NEW) - 1 + 2 * len(DELETED)  # less the new marker; the deleted held one each
    assert sum(f.height for f in state_source(kept, [], None).frames()) == t0_rows


def test_a_deleted_item_needs_only_its_key(tmp_path: Path) -> None:
    """A deleted item's line has Keys and no NewImage (NEW_IMAGE view, or OldImage only)."""
    files = _files(tmp_path)
    kept = _kept(export_source(files.t0, None, deep=True), tmp_path / "state")
    item = to_wire(_item("u9", "gone1"))
    line = json.dumps({"Metadata": {"WriteTimestampMicros": {"N": "1"}}, "Keys": _key(item), "OldImage": item}) + "\n"
    changes = str(write_incremental_export(tmp_path / "delete", TABLE, T0, AS_OF, [line.encode()]))
    keys = pl.concat(list(state_source(kept, [changes], None).frames())).get_column("sk").to_list()
    assert layout.document_sk("gone1") not in keys and layout.document_sk("gone2") in keys


def test_a_summary_without_an_item_count_is_sized_from_its_data_files(tmp_path: Path) -> None:
    """The count sizes the partitions: without it a large export would be held in one."""
    files = _files(tmp_path)
    path, summary = _summary(files.t1)
    path.write_text(json.dumps({k: v for k, v in summary.items() if k != "itemCount"}))
    assert export_source(files.t1, None, deep=False).item_count == summary["itemCount"]


# --- the chain is exact: what DynamoDB writes for each window ------------------------------------
Event = tuple[datetime, str, "dict[str, Any] | None"]  # (when, documentId, the item written or None: deleted)


def _table_at(events: list[Event], moment: datetime) -> dict[str, dict[str, Any]]:
    """The table just before `moment`: every write before it applied in order."""
    table: dict[str, dict[str, Any]] = {}
    for when, doc, image in sorted(events, key=lambda e: e[0]):
        if when >= moment:
            break
        if image is None:
            table.pop(doc, None)
        else:
            table[doc] = image
    return table


def _window_export(root: Path, events: list[Event], start: datetime, end: datetime) -> str:
    """The incremental export DynamoDB writes for [start, end): one line per item written in the
    window with its net change, i.e. its image at the end, its key alone when it existed at the
    start and is gone at the end, and no line at all when it was created and deleted inside.
    """
    before, after = _table_at(events, start), _table_at(events, end)
    written = {doc for when, doc, _ in events if start <= when < end}
    lines = []
    for doc in sorted(written):
        if doc in after:
            lines.append(change_line(_key(after[doc]), after[doc], end))
        elif doc in before:
            lines.append(change_line(_key(before[doc]), None, end))
    return str(write_incremental_export(root, TABLE, start, end, [("".join(lines)).encode()]))


def _ids(frames: list[pl.DataFrame]) -> dict[str, tuple[str, int]]:
    rows = pl.concat(frames).select("documentId", "status", "version").rows()
    return {doc: (status, version) for doc, status, version in rows}


def _version(doc: str, version: int, status: Status = Status.PROCESSED) -> dict[str, Any]:
    return to_wire(_item("u1", doc, status=status, version=version))


def test_a_chain_of_exact_windows_is_the_table_at_each_windows_end(tmp_path: Path) -> None:
    """Created then deleted inside one window, changed several times in one window, deleted and
    re-created (in one window and across two), a delete just after the state's time: night after
    night, the state brought forward by the night's export is the table at the night's end.
    """
    hour = timedelta(hours=1)
    nights = [T0 + n * timedelta(days=1) for n in range(4)]
    events: list[Event] = [
        (T0 - 3 * hour, "kept", _version("kept", 1)),
        (T0 - 2 * hour, "gone-early", _version("gone-early", 1)),
        (T0 - 2 * hour, "recreated", _version("recreated", 1)),
        (T0 - hour, "back-next-night", _version("back-next-night", 1)),
        (T0 + timedelta(seconds=1), "gone-early", None),  # deleted just after the state's time
        (T0 + hour, "brief", _version("brief", 1)),  # created and deleted inside one window
        (T0 + 2 * hour, "brief", None),
        (T0 + hour, "busy", _version("busy", 1)),  # changed several times in one window
        (T0 + 2 * hour, "busy", _version("busy", 2, Status.PROCESSING)),
        (T0 + 3 * hour, "busy", _version("busy", 3, Status.FAILED)),
        (T0 + 4 * hour, "recreated", None),  # deleted and re-created in one window
        (T0 + 5 * hour, "recreated", _version("recreated", 7)),
        (nights[1] + hour, "back-next-night", None),  # deleted one night, back the next
        (nights[2] + hour, "back-next-night", _version("back-next-night", 9)),
        (nights[2] + 2 * hour, "brief2", _version("brief2", 1)),
        (nights[2] + 3 * hour, "brief2", None),
    ]
    anchor = [export_line(item) for item in _table_at(events, T0).values()]
    location = _kept(
        export_source(str(write_export(tmp_path / "full", TABLE, T0, [("".join(anchor)).encode()])), None, deep=True),
        tmp_path / "night0",
    )
    night0, every = location, []
    for number, (start, end) in enumerate(itertools.pairwise(nights), 1):
        changes = _window_export(tmp_path / f"changes{number}", events, start, end)
        every.append(changes)
        forward = state_source(location, [changes], None)
        truth = _table_at(events, end)
        assert _ids(list(forward.frames())) == {d: (i["status"]["S"], int(i["version"]["N"])) for d, i in truth.items()}
        location = _kept(state_source(location, [changes], None), tmp_path / f"night{number}")
    final = _ids(list(state_source(location, [], None).frames()))
    # Missed nights: the first state brought forward by the three exports in one run.
    assert _ids(list(state_source(night0, every, None).frames())) == final
    with pytest.raises(ReconcileInputError, match="the changes in between are in no input"):
        state_source(night0, [every[0], every[2]], None)  # the second night's export left out
    assert final == {
        "kept": ("PROCESSED", 1),
        "busy": ("FAILED", 3),
        "recreated": ("PROCESSED", 7),
        "back-next-night": ("PROCESSED", 9),
    }


def test_an_overlapping_window_is_refused_because_it_hides_a_delete(tmp_path: Path) -> None:
    """The state at T0 holds an item created an hour before and deleted after T0. Exported from
    two hours before T0, the item was created and deleted inside the window: DynamoDB writes no
    line for it, and the state would keep it for ever. From exactly T0 its delete is there.
    """
    hour = timedelta(hours=1)
    events: list[Event] = [
        (T0 - 5 * hour, "kept", _version("kept", 1)),
        (T0 - hour, "hidden", _version("hidden", 1)),
        (T0 + hour, "hidden", None),
    ]
    anchor = [export_line(item) for item in _table_at(events, T0).values()]
    full = str(write_export(tmp_path / "full", TABLE, T0, [("".join(anchor)).encode()]))
    kept = _kept(export_source(full, None, deep=True), tmp_path / "state")
    overlapping = _window_export(tmp_path / "overlap", events, T0 - 2 * hour, AS_OF)
    assert json.loads((Path(overlapping) / "manifest-summary.json").read_text())["itemCount"] == 0  # no line for it
    with pytest.raises(ReconcileInputError, match="an overlapping window can hide a delete"):
        list(state_source(kept, [overlapping], None).frames())
    exact = _window_export(tmp_path / "exact", events, T0, AS_OF)
    assert _ids(list(state_source(kept, [exact], None).frames())) == {"kept": ("PROCESSED", 1)}


def test_a_state_file_loses_exactly_the_rows_the_changes_name_in_order() -> None:
    frame = pl.DataFrame({"pk": ["U#a", "U#b", "U#a", "U#c"], "sk": ["D#1", "D#1", "D#2", "D#3"], "n": [0, 1, 2, 3]})
    # (U#a, D#1) is named; U#b shares its sort key and (U#c, D#2) crosses the two: both stay.
    keys = pl.DataFrame({"pk": ["U#a", "U#c", "U#z"], "sk": ["D#1", "D#2", "D#9"]})
    assert without_keys(frame, keys).get_column("n").to_list() == [1, 2, 3]
    assert without_keys(frame, keys.clear()).equals(frame)
    assert without_keys(frame, pl.DataFrame({"pk": ["U#q"], "sk": ["D#7"]})).equals(frame)
