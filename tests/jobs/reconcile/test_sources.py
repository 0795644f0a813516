"""The file readers: AWS export and inventory layouts in, the rules' frames out."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
import pytest

from jobs.contract import layout
from jobs.errors import ReconcileInputError
from jobs.local.writers import export_line, write_export, write_inventory
from jobs.reconcile.inputs.inventory import read_inventory
from tests.jobs.reconcile.reconcile_helpers import read_export

WHEN = datetime(2026, 3, 1, 8, 30, tzinfo=UTC)


def test_export_reads_the_attributes_it_needs_and_ignores_the_rest(tmp_path) -> None:
    item = {
        layout.PK_ATTR: {"S": layout.user_pk("u1")},
        "userId": {"S": "u1"},
        "version": {"N": "3"},
        "status": {"N": "7"},  # a wrong type tag reads as missing, it does not break the file
        "reviewReasons": {"L": [{"S": "x"}]},
        "totalAmount": {"N": "12.50"},
    }
    export = write_export(tmp_path / "bucket", "arn:table/t", WHEN, [export_line(item).encode(), b""])
    items, taken = read_export(str(export), None, deep=True)
    assert taken == WHEN
    row = items.row(0, named=True)
    assert (row["pk"], row["userId"], row["version"], row["status"], row["totalAmount"]) == (
        layout.user_pk("u1"),
        "u1",
        3,
        None,
        "12.50",
    )
    assert items.height == 1
    shallow, _ = read_export(str(export / "manifest-summary.json"), None, deep=False)
    assert shallow.item(0, "totalAmount") is None  # deep-only columns are not parsed without --deep


def test_export_count_mismatch_and_foreign_format_are_errors(tmp_path) -> None:
    export = write_export(tmp_path / "b", "arn:table/t", WHEN, [export_line({"userId": {"S": "u"}}).encode()])
    summary = json.loads((export / "manifest-summary.json").read_text())
    (export / "manifest-summary.json").write_text(json.dumps({**summary, "outputFormat": "ION"}))
    with pytest.raises(ReconcileInputError, match="ION"):
        read_export(str(export), None, deep=False)
    (export / "manifest-summary.json").write_text(json.dumps({**summary, "itemCount": 5}))
    with pytest.raises(ReconcileInputError, match="declares 5 items"):
        read_export(str(export), None, deep=False)


@pytest.mark.parametrize("fmt", ["CSV", "Parquet"])
def test_inventory_round_trips_odd_keys(tmp_path, fmt: str) -> None:
    keys = [layout.raw_key("u1", "d1", "Rechnung März + 1.pdf"), "odd/100%.txt", layout.raw_key("u2", "d2", "a.xml")]
    frame = pl.DataFrame(
        {"bucket": ["b"] * 3, "key": keys, "size": [1, 2, 3], "lastModified": [WHEN] * 3, "etag": ['"e1"', "e2", "e3"]},
        schema_overrides={"lastModified": pl.Datetime("ms", "UTC")},
    )
    manifest = write_inventory(tmp_path / "dest", "b", WHEN, [frame.head(2), frame.tail(1)], fmt)
    inventory = read_inventory(str(manifest), None)
    assert inventory.source_bucket == "b" and inventory.created == WHEN
    assert inventory.objects.get_column("key").to_list() == keys
    assert inventory.objects.get_column("etag").to_list() == ["e1", "e2", "e3"]
    assert inventory.objects.get_column("lastModified").to_list() == [WHEN] * 3


def test_inventory_with_unsupported_format_or_missing_data_file(tmp_path) -> None:
    frame = pl.DataFrame({"bucket": ["b"], "key": ["k"], "size": [1], "lastModified": [WHEN], "etag": ["e"]})
    manifest = write_inventory(tmp_path / "dest", "b", WHEN, [frame])
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "fileFormat": "ORC"}))
    with pytest.raises(ReconcileInputError, match="ORC"):
        read_inventory(str(manifest), None)
    manifest.write_text(json.dumps({**data, "files": [{"key": "b/docuflow-daily/data/gone.csv.gz"}]}))
    with pytest.raises(ReconcileInputError, match="not under any parent"):
        read_inventory(str(manifest), None)
