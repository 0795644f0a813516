"""Stand-in for S3 lifecycle on the local S3 server (moto stores the rules, never applies them).

At a given date it does what S3's daily lifecycle run would have done by then, from the rules
the bucket declares (`rules.py`): a delete marker over each current version whose retention
expired, the deletion of each noncurrent version (and noncurrent delete marker) whose grace has
passed, the removal of delete markers left without versions. Versions under a legal hold are
left (the server refuses their deletion, as S3 does). Storage-class transitions are applied too,
since a GET of a GLACIER or DEEP_ARCHIVE object fails until it is restored (moto keeps classes and
answers InvalidObjectState as S3 does): S3 changes a version's class in place, the server only by
a copy, so the stand-in copies the current version into its class (tags and metadata kept, the
same bytes and ETag) and deletes the version it replaces. S3 sends no ObjectCreated event for a
transition; the copy would, so the bucket's notifications are suspended meanwhile (putting them
back sends an s3:TestEvent, which the ingest counts as a notice). A held version is not moved
(the copy's old version could not be deleted), nor is any version of a bucket with a default
Object Lock retention (the reports), nor an object the bucket's minimum transition size keeps
(TransitionDefaultMinimumObjectSize: under 128 KB). Multipart aborts are not emulated.

The server stamps a delete marker with the real time; S3 would have put it at the expiration
date, and a version's noncurrent days count from then. The ledger keeps the date each marker of
the stand-in stands for, the creation date (and tags: the server refuses GetObjectTagging on an
archived object, S3 does not) of each version a transition copied, and the last date the clock
was moved to (it only moves forward).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from jobs.contract import layout
from jobs.errors import BadInputError
from jobs.local.standins.rules import (
    colder,
    expiration_due,
    noncurrent_due,
    removes_expired_markers,
    storage_class_at,
    transition_allowed,
)

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


@dataclass
class LifecycleReport:
    markers_placed: int = 0
    versions_deleted: int = 0
    markers_removed: int = 0
    held_skipped: int = 0
    transitioned: int = 0

    def add(self, other: LifecycleReport) -> None:
        for name in ("markers_placed", "versions_deleted", "markers_removed", "held_skipped", "transitioned"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Ledger:
    """The stand-in's memory across runs: its clock, and the date each of its markers stands for."""

    path: Path
    clock: datetime | None = None
    markers: dict[str, str] = field(default_factory=dict)  # "bucket/key/versionId" -> ISO date
    # Versions a transition copied: "bucket/key/versionId" -> the original's creation and tags.
    created: dict[str, str] = field(default_factory=dict)
    tags: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Ledger:
        if not path.exists():
            return cls(path)
        data = json.loads(path.read_text())
        clock = layout.parse_ts(data["clock"]) if data.get("clock") else None
        return cls(path, clock, data.get("markers", {}), data.get("created", {}), data.get("tags", {}))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        clock = layout.format_ts(self.clock) if self.clock else None
        state = {"clock": clock, "markers": self.markers, "created": self.created, "tags": self.tags}
        self.path.write_text(json.dumps(state, indent=1))

    def move_to(self, when: datetime) -> None:
        if self.clock is not None and when < self.clock:
            raise BadInputError(f"the stand-in's clock is at {layout.format_ts(self.clock)}: it only moves forward")
        self.clock = when

    def dated(self, bucket: str, entry: dict[str, Any]) -> datetime:
        """When an entry came to be, for lifecycle: the ledger's date for the stand-in's own
        markers and for the versions its transitions copied, the server's time for everything else.
        """
        name = f"{bucket}/{entry['Key']}/{entry['VersionId']}"
        stamped = self.markers.get(name) or self.created.get(name)
        return layout.parse_ts(stamped) if stamped else entry["LastModified"]

    def forget(self, bucket: str, key: str, version_id: str) -> None:
        name = f"{bucket}/{key}/{version_id}"
        for dates in (self.markers, self.created, self.tags):
            dates.pop(name, None)


@dataclass(frozen=True)
class _Transition:
    key: str
    entry: dict[str, Any]
    target: str
    tags: dict[str, str]


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
            configuration = self._s3.get_bucket_lifecycle_configuration(Bucket=bucket)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "NoSuchLifecycleConfiguration":
                return LifecycleReport()
            raise
        declared: list[dict[str, Any]] = [dict(rule) for rule in configuration["Rules"]]
        minimum_size = configuration.get("TransitionDefaultMinimumObjectSize")
        report = LifecycleReport()
        moves: list[_Transition] = []
        for key, stack in _version_stacks(self._s3, bucket).items():
            report.add(self._one_key(bucket, key, stack, declared, when, moves))
        moves = [m for m in moves if transition_allowed(minimum_size, int(m.entry.get("Size", 0)), m.target)]
        if moves and self._replaceable(bucket):
            with self._notifications_suspended(bucket):
                for move in moves:
                    self._transition(bucket, move, report)
        return report

    def _one_key(
        self,
        bucket: str,
        key: str,
        stack: list[dict[str, Any]],
        declared: list[dict[str, Any]],
        when: datetime,
        moves: list[_Transition],
    ) -> LifecycleReport:
        report = LifecycleReport()
        current = stack[0]
        if not current["marker"]:
            tags = self._tags(bucket, current)
            created = self._ledger.dated(bucket, current)
            due = expiration_due(declared, key, created, tags)
            if due is not None and due <= when:
                marker = self._s3.delete_object(Bucket=bucket, Key=key)
                self._ledger.markers[f"{bucket}/{key}/{marker['VersionId']}"] = layout.format_ts(due)
                stack.insert(0, {"Key": key, "VersionId": marker["VersionId"], "LastModified": due, "marker": True})
                report.markers_placed += 1
            else:
                target = storage_class_at(declared, key, created, tags, when)
                # The server cannot copy out of an archive class: one transition into it is the last.
                if target is not None and colder(target, current.get("StorageClass", "STANDARD")):
                    moves.append(_Transition(key, current, target, tags))
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
        self._ledger.forget(bucket, entry["Key"], entry["VersionId"])
        if entry["marker"]:
            report.markers_removed += 1
        else:
            report.versions_deleted += 1
        return True

    def _replaceable(self, bucket: str) -> bool:
        """Whether a copy may replace a version: not under a default Object Lock retention (the
        reports bucket), where the old version cannot be deleted. Its transitions are not
        emulated; the jobs read few reports, and none a year old.
        """
        try:
            lock = self._s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ObjectLockConfigurationNotFoundError":
                raise
            return True
        return "DefaultRetention" not in lock.get("Rule", {})

    def _tags(self, bucket: str, entry: dict[str, Any]) -> dict[str, str]:
        """The current version's tags (the ledger's for a version it archived: the server
        refuses GetObjectTagging on an archived object, S3 answers it).
        """
        kept = self._ledger.tags.get(f"{bucket}/{entry['Key']}/{entry['VersionId']}")
        if kept is not None:
            return kept
        try:
            tag_set = self._s3.get_object_tagging(Bucket=bucket, Key=entry["Key"])["TagSet"]
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "InvalidObjectState":
                raise
            return {}  # put straight into an archive class, by a test: untagged as far as we know
        return {t["Key"]: t["Value"] for t in tag_set}

    @contextmanager
    def _notifications_suspended(self, bucket: str) -> Iterator[None]:
        """No ObjectCreated:Copy events while transitions copy (S3 sends none for a transition)."""
        kept = self._s3.get_bucket_notification_configuration(Bucket=bucket)
        kept.pop("ResponseMetadata", None)  # type: ignore[misc]
        configured = any(kept.get(kind) for kind in _NOTIFICATION_KINDS)
        if configured:
            self._s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={})
        try:
            yield
        finally:
            if configured:
                config = {kind: kept[kind] for kind in _NOTIFICATION_KINDS if kept.get(kind)}  # type: ignore[literal-required]
                self._s3.put_bucket_notification_configuration(
                    Bucket=bucket,
                    NotificationConfiguration=config,  # type: ignore[arg-type]
                )

    def _transition(self, bucket: str, move: _Transition, report: LifecycleReport) -> None:
        """The current version copied into its class, and the version it replaces deleted."""
        old = move.entry["VersionId"]
        created = self._ledger.dated(bucket, move.entry)
        copy = self._s3.copy_object(
            Bucket=bucket,
            Key=move.key,
            CopySource={"Bucket": bucket, "Key": move.key, "VersionId": old},
            StorageClass=move.target,  # type: ignore[arg-type]
        )
        new = copy["VersionId"]
        try:
            self._s3.delete_object(Bucket=bucket, Key=move.key, VersionId=old)
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "AccessDenied":
                raise
            # A legal hold keeps the old version: undo the copy, the version stays where it was.
            self._s3.delete_object(Bucket=bucket, Key=move.key, VersionId=new)
            report.held_skipped += 1
            return
        self._ledger.forget(bucket, move.key, old)
        self._ledger.created[f"{bucket}/{move.key}/{new}"] = layout.format_ts(created)
        self._ledger.tags[f"{bucket}/{move.key}/{new}"] = move.tags
        report.transitioned += 1


_NOTIFICATION_KINDS = ("QueueConfigurations", "TopicConfigurations", "LambdaFunctionConfigurations")
