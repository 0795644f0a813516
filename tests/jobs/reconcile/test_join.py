"""The joins cannot mis-pair: keys that collide on their hashes are told apart by their strings.

The rules pair items with objects on two seeded 64-bit hashes of the key; keys are chosen by
users and the hash is not cryptographic. Here the hashes are replaced by a function that makes
almost every pair of keys collide (three values in all), and the findings must not change.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from jobs.local.writers import export_line, write_export, write_inventory
from jobs.reconcile.engines import partitions
from jobs.reconcile.engines.polars import FileInputs, PolarsEngine
from jobs.reconcile.inputs.inventory import inventory_pair
from jobs.reconcile.inputs.table_state import export_source
from jobs.reconcile.rules import join
from jobs.reconcile.rules.findings import render
from jobs.reconcile.rules.frames import OBJECTS_SCHEMA, RESULTS_SCHEMA, Snapshot
from jobs.reconcile.rules.params import RuleParams
from jobs.store.dynamo_wire import to_wire
from tests.jobs.reconcile.reconcile_helpers import files_snapshot, judged_in_memory
from tests.jobs.reconcile.test_engines import AS_OF, PROC, RAW, state


def colliding(key: pl.Expr) -> list[pl.Expr]:
    """Both hashes from the key's length modulo 3: nearly every two keys agree on them."""
    return [pl.when(key.is_not_null()).then(key.str.len_bytes() % 3).alias(name) for name in join.KEY_HASHES]


def test_a_collision_is_split_back_into_an_item_and_an_object_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(join, "key_hashes", lambda key: [pl.lit(0, pl.UInt64).alias(n) for n in join.KEY_HASHES])
    monkeypatch.setattr(join, "VERIFY_CHUNK", 2)  # several chunks
    items = pl.DataFrame({"rawKey": ["a", "b", "b", None], "rawEtag": ["1", "2", "3", "4"]})
    objects = pl.DataFrame({"key": ["b", "c"], "etag": ["2", "9"], "judged": [True, True]})
    prepared = join.Prepared(
        items.lazy(), objects.lazy(), pl.LazyFrame(), RuleParams(raw_bucket=RAW, processed_bucket=PROC, as_of=AS_OF)
    )
    pairs = prepared.raw_pairs.select("_item", "_object").sort("_item", "_object", nulls_last=True)
    # a alone, both b items with object b, the null key alone, object c alone: as on the strings.
    assert pairs.rows() == [(0, None), (1, 0), (2, 0), (3, None), (None, 1)]


def _files(tmp_path: Path) -> tuple[str, list[str], pl.DataFrame]:
    items, raw, processed, results = state()
    lines = b"".join(export_line(to_wire(item)).encode() for item in items)
    export = str(write_export(tmp_path / "exports", "arn:aws:dynamodb:eq:0:table/t", AS_OF, [lines]))
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
    return export, manifests, pl.DataFrame(results, schema=RESULTS_SCHEMA, orient="row")


@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_colliding_hashes_give_the_same_findings(tmp_path: Path, deep: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    export, manifests, results = _files(tmp_path)
    params = RuleParams(raw_bucket=RAW, processed_bucket=PROC, as_of=AS_OF, deep=deep)

    def read(keys: list[str]) -> pl.DataFrame:
        return results.filter(pl.col("key").is_in(keys))

    def params_for(as_of: datetime) -> RuleParams:
        return dataclasses.replace(params, as_of=as_of)

    def findings() -> tuple[pl.DataFrame, pl.DataFrame]:
        snapshot: Snapshot = files_snapshot(export, manifests, None, RAW, PROC, deep)
        in_memory = judged_in_memory(snapshot, params, read if deep else None)
        files = FileInputs(export_source(export, None, deep), *inventory_pair(manifests, None, RAW, PROC))
        spilled = render(PolarsEngine(files, read if deep else None).find(params_for).wide)
        return in_memory, spilled

    monkeypatch.setattr(partitions, "ROWS_PER_PARTITION", 20)  # three partitions
    expected, _ = findings()
    assert expected.height > 20
    monkeypatch.setattr(join, "key_hashes", colliding)
    in_memory, spilled = findings()
    assert_frame_equal(in_memory, expected)
    assert_frame_equal(spilled, expected)
