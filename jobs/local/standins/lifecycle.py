"""Stand-in for S3 lifecycle on the local S3 server (moto stores the rules, never applies them).

At a given date it does what S3's daily lifecycle run would have done by then, from the rules
the bucket declares (`rules.py`): a delete marker over each current version whose retention
expired, the deletion of each noncurrent version (and noncurrent delete marker) whose grace has
passed, the removal of delete markers left without versions. Versions under a legal hold are
left (the server refuses their deletion, as S3 does). Storage-class transitions and multipart
aborts change nothing the jobs look at and are not emulated.

The server stamps a delete marker with the real time; S3 would have put it at the expiration
date, and a version's noncurrent days count from then. The ledger keeps the date each marker of
the stand-in stands for, and the last date the clock was moved to (it only moves forward).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from jobs.contract import layout
from jobs.local.standins.rules import expiration_due, noncurrent_due, removes_expired_markers

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


@dataclass
class LifecycleReport:
    markers_placed: int = 0
    versions_deleted: int = 0
    markers_removed: int = 0
    held_skipped: int = 0

    def add(self, other: LifecycleReport) -> None:
        for name in ("markers_placed", "versions_deleted", "markers_removed", "held_skipped"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Ledger:
    """The stand-in's memory across runs: its clock, and the date each of its markers stands for."""

    path: Path
    clock: datetime | None = None
    markers: dict[str, str] = field(default_factory=dict)  # "bucket/key/versionId" -> ISO date

    @classmethod
    def load(cls, path: Path) -> Ledger:
        if not path.exists():
            return cls(path)
        data = json.loads(path.read_text())
        return cls(path, layout.parse_ts(data["clock"]) if data.get("clock") else None, data.get("markers", {}))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        clock = layout.format_ts(self.clock) if self.clock else None
        self.path.write_text(json.dumps({"clock": clock, "markers": self.markers}, indent=1))

    def move_to(self, when: datetime) -> None:
        if self.clock is not None and when < self.clock:
            raise ValueError(f"the stand-in's clock is at {layout.format_ts(self.clock)}: it only moves forward")
        self.clock = when

    def dated(self, bucket: str, entry: dict[str, Any]) -> datetime:
        """When an entry came to be, for lifecycle: the ledger's date for the stand-in's own
        markers, the server's time for everything else.
        """
        stamped = self.markers.get(f"{bucket}/{entry['Key']}/{entry['VersionId']}")
        return layout.parse_ts(stamped) if stamped else entry["LastModified"]


def _version_stacks(s3: S3Client, bucket: str) -> dict[str, list[dict[str, Any]]]:
    """Every key's versions and markers, newest first (the server lists them that way per key)."""
    stacks: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        entries: list[dict[str, Any]] = [{**v, "marker": False} for v in page.get("Versions", [])]
        entries += [{**m, "marker": True} for m in page.get("DeleteMarkers", [])]
        for entry in entries:
            stacks[str(entry["Key"])].append(entry)
    for stack in stacks.values():
        stack.sort(key=lambda e: (not e["IsLatest"], -e["LastModified"].timestamp()))
    return stacks


class LifecycleStandIn:
    def __init__(self, s3: S3Client, ledger: Ledger) -> None:
        self._s3 = s3
        self._ledger = ledger

    def apply(self, bucket: str, when: datetime) -> LifecycleReport:
        """Apply the bucket's declared rules as of `when` (the ledger's clock must allow it)."""
        try:
            declared: list[dict[str, Any]] = [
                dict(rule) for rule in self._s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
            ]
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "NoSuchLifecycleConfiguration":
                return LifecycleReport()
            raise
        report = LifecycleReport()
        for key, stack in _version_stacks(self._s3, bucket).items():
            report.add(self._one_key(bucket, key, stack, declared, when))
        return report

    def _one_key(
        self, bucket: str, key: str, stack: list[dict[str, Any]], declared: list[dict[str, Any]], when: datetime
    ) -> LifecycleReport:
        report = LifecycleReport()
        current = stack[0]
        if not current["marker"]:
            tags = {t["Key"]: t["Value"] for t in self._s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]}
            due = expiration_due(declared, key, current["LastModified"], tags)
            if due is not None and due <= when:
                marker = self._s3.delete_object(Bucket=bucket, Key=key)
                self._ledger.markers[f"{bucket}/{key}/{marker['VersionId']}"] = layout.format_ts(due)
                stack.insert(0, {"Key": key, "VersionId": marker["VersionId"], "LastModified": due, "marker": True})
                report.markers_placed += 1
        # Each noncurrent entry counts from its successor's date (the newer entry above it).
        kept = [stack[0]]
        for newer, entry in pairwise(stack):
            due = noncurrent_due(declared, key, self._ledger.dated(bucket, newer))
            if due is not None and due <= when and self._delete(bucket, entry, report):
                continue
            kept.append(entry)
        if len(kept) == 1 and kept[0]["marker"] and removes_expired_markers(declared, key):
            self._delete(bucket, kept[0], report)
        return report

    def _delete(self, bucket: str, entry: dict[str, Any], report: LifecycleReport) -> bool:
        try:
            self._s3.delete_object(Bucket=bucket, Key=entry["Key"], VersionId=entry["VersionId"])
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "AccessDenied":
                raise
            report.held_skipped += 1  # a legal hold: lifecycle leaves the version
            return False
        self._ledger.markers.pop(f"{bucket}/{entry['Key']}/{entry['VersionId']}", None)
        if entry["marker"]:
            report.markers_removed += 1
        else:
            report.versions_deleted += 1
        return True
