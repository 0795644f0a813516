"""S3 lifecycle rules as S3 evaluates them, for the local stand-in: pure date arithmetic.

The rules are read back from the bucket (the dicts `jobs.contract.LifecycleSpec` declares, which
Pulumi deploys and the local bootstrap puts), so the stand-in applies exactly what AWS would.
S3 counts a rule's days from an object's creation (Expiration, Transitions) or from the creation
of its successor (NoncurrentVersionExpiration), and rounds the result up to the next midnight UTC;
when several rules' filters match, the earliest expiration wins, and a transition only ever moves
an object to a colder class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, time, timedelta
from typing import Any

Rule = Mapping[str, Any]


def next_midnight(moment: datetime) -> datetime:
    """The next midnight UTC after `moment` (S3's rounding of a lifecycle date)."""
    return datetime.combine(moment.astimezone(UTC).date() + timedelta(days=1), time(), tzinfo=UTC)


def _filter_parts(rule: Rule) -> tuple[str, dict[str, str]]:
    flt = rule.get("Filter", {})
    if "And" in flt:
        both = flt["And"]
        return both.get("Prefix", ""), {t["Key"]: t["Value"] for t in both.get("Tags", [])}
    if "Tag" in flt:
        return "", {flt["Tag"]["Key"]: flt["Tag"]["Value"]}
    return flt.get("Prefix", rule.get("Prefix", "")), {}


def matches(rule: Rule, key: str, tags: Mapping[str, str]) -> bool:
    """Whether the rule's filter selects this key with these tags."""
    if rule.get("Status") != "Enabled":
        return False
    prefix, wanted = _filter_parts(rule)
    if not key.startswith(prefix):
        return False
    return all(tags.get(k) == v for k, v in wanted.items())


def expiration_due(rules: Sequence[Rule], key: str, created: datetime, tags: Mapping[str, str]) -> datetime | None:
    """When the current version expires (S3 puts a delete marker over it), or None."""
    days = [r["Expiration"]["Days"] for r in rules if "Days" in r.get("Expiration", {}) and matches(r, key, tags)]
    return next_midnight(created + timedelta(days=min(days))) if days else None


def noncurrent_due(rules: Sequence[Rule], key: str, noncurrent_since: datetime) -> datetime | None:
    """When a noncurrent version (or delete marker) is deleted for good, or None.

    A noncurrent rule filtered on tags would need each version's tags: the contract declares
    none, so such a rule never matches here.
    """
    days = [
        r["NoncurrentVersionExpiration"]["NoncurrentDays"]
        for r in rules
        if "NoncurrentVersionExpiration" in r and matches(r, key, {})
    ]
    return next_midnight(noncurrent_since + timedelta(days=min(days))) if days else None


# Warmest to coldest: a transition moves an object down this list, never up.
STORAGE_CLASSES = (
    "STANDARD",
    "INTELLIGENT_TIERING",
    "STANDARD_IA",
    "ONEZONE_IA",
    "GLACIER_IR",
    "GLACIER",
    "DEEP_ARCHIVE",
)


def colder(target: str, current: str) -> bool:
    """Whether `target` is a colder class than `current` (an unknown class is never moved)."""
    if target not in STORAGE_CLASSES or current not in STORAGE_CLASSES:
        return False
    return STORAGE_CLASSES.index(target) > STORAGE_CLASSES.index(current)


# S3 moves no object under 128 KB (its default since September 2024, which a bucket's
# TransitionDefaultMinimumObjectSize declares), or, with "varies_by_storage_class", none but to
# GLACIER and DEEP_ARCHIVE.
SMALL_OBJECT_BYTES = 128 * 1024
_SMALL_TO_ARCHIVES_ONLY = "varies_by_storage_class"


def transition_allowed(minimum_object_size: str | None, size: int, target: str) -> bool:
    """Whether the bucket's minimum object size lets an object of `size` bytes move to `target`."""
    if size >= SMALL_OBJECT_BYTES:
        return True
    return minimum_object_size == _SMALL_TO_ARCHIVES_ONLY and target in ("GLACIER", "DEEP_ARCHIVE")


def storage_class_at(
    rules: Sequence[Rule], key: str, created: datetime, tags: Mapping[str, str], when: datetime
) -> str | None:
    """The coldest class the matching rules' Transitions have moved the current version to by
    `when`, or None when no transition is due yet.
    """
    due = [
        t["StorageClass"]
        for r in rules
        if matches(r, key, tags)
        for t in r.get("Transitions", [])
        if "Days" in t and next_midnight(created + timedelta(days=t["Days"])) <= when
    ]
    known = [c for c in due if c in STORAGE_CLASSES]
    return max(known, key=STORAGE_CLASSES.index) if known else None


def removes_expired_markers(rules: Sequence[Rule], key: str) -> bool:
    """Whether a delete marker left without versions is removed (ExpiredObjectDeleteMarker)."""
    return any(r.get("Expiration", {}).get("ExpiredObjectDeleteMarker") and matches(r, key, {}) for r in rules)
