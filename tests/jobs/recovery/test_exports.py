"""Finding and reading full exports as a restore source (files on disk: the layout AWS writes)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.errors import ReconcileInputError
from jobs.local.writers import export_line, write_export
from jobs.recovery.exports import export_batches, find_exports

ARN = "arn:aws:dynamodb:eu-west-1:1:table/docuflow-t-documents-table"


def _items(n: int, start: int = 0) -> list[dict[str, object]]:
    return [
        {"PK": {"S": f"USER#u{i}"}, "SK": {"S": f"DOC#d{i}"}, "note": {"L": [{"N": "1"}]}}
        for i in range(start, start + n)
    ]


def _export(root: Path, when: datetime, *chunks: list[dict[str, object]]) -> Path:
    return write_export(
        root, ARN, when, ["".join(export_line(i) for i in chunk).encode() for chunk in chunks], "exports/dynamodb/"
    )


def test_every_item_comes_back_with_every_attribute_file_by_file(tmp_path: Path) -> None:
    first, second = _items(3), _items(2, start=3)
    directory = _export(tmp_path / "bucket", datetime(2026, 11, 30, tzinfo=UTC), first, second)
    assert [item for batch in export_batches(str(directory), None) for item in batch] == [*first, *second]


def test_an_unreadable_export_is_left_out_and_an_incremental_one_is_kept_apart(tmp_path: Path) -> None:
    root = tmp_path / "bucket"
    good = _export(root, datetime(2026, 11, 29, tzinfo=UTC), _items(2))
    damaged = _export(root, datetime(2026, 11, 30, tzinfo=UTC), _items(2))
    (damaged / "manifest-summary.json").write_text("{not json")
    found = find_exports(str(root), None)
    assert [f.where for f in found] == [str(good / "manifest-summary.json")]
    assert find_exports(str(tmp_path / "nowhere"), None) == []


def test_a_data_file_that_does_not_match_its_manifest_stops_the_restore(tmp_path: Path) -> None:
    directory = _export(tmp_path / "bucket", datetime(2026, 11, 30, tzinfo=UTC), _items(2))
    files = [json.loads(line) for line in (directory / "manifest-files.json").read_text().splitlines()]
    data = tmp_path / "bucket" / files[0]["dataFileS3Key"]
    data.write_bytes(data.read_bytes()[:-4] + b"\0\0\0\0")
    with pytest.raises(ReconcileInputError, match="MD5"):
        list(export_batches(str(directory), None))
