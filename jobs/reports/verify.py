"""`python -m jobs reports verify`: walk the chain of reconcile reports and check every link.

For every summary.json in the window (keys `reconciliation/<date>/<runId>/summary.json`, in key
order, which is time order): its signature (`summary.sig`, KMS Verify over the exact bytes), the
sha256 of every file it lists, that it names its own prefix, and that it follows the report
before it (`previousSummary` and its sha256). A night between the first and the last with no
report is named as missing. Anything that does not hold is a `Problem`; the command exits 1 on
any.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING

from pydantic import ValidationError

from jobs.contract import layout
from jobs.errors import S3ObjectMissingError
from jobs.reconcile.provenance import SIGNATURE_FILE, Signature, signature_holds
from jobs.reconcile.report import SUMMARY_FILE, ReconcileSummary

if TYPE_CHECKING:
    from jobs.store.kms import Signatures
    from jobs.store.s3 import Buckets

_SUMMARY_KEY = re.compile(
    rf"^{re.escape(layout.RECONCILIATION_PREFIX)}(\d{{4}}-\d{{2}}-\d{{2}})/[^/]+/{re.escape(SUMMARY_FILE)}$"
)


@dataclass(frozen=True)
class Problem:
    key: str
    what: str

    def __str__(self) -> str:
        return f"{self.key}: {self.what}"


@dataclass
class Verification:
    checked: list[str] = field(default_factory=list)  # the summary keys walked, in order
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.checked) and not self.problems


def summary_keys(buckets: Buckets, bucket: str, since: date | None, until: date | None) -> list[str]:
    keys = []
    for page in buckets.list_pages(bucket, layout.RECONCILIATION_PREFIX):
        for obj in page:
            match = _SUMMARY_KEY.match(obj.key)
            if not match:
                continue
            night = date.fromisoformat(match.group(1))
            if (since is None or night >= since) and (until is None or night <= until):
                keys.append(obj.key)
    return sorted(keys)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ChainWalk:
    """One walk over the stored reports (or, for a pack, over files read from the archive)."""

    def __init__(self, read: Callable[[str], bytes], signatures: Signatures) -> None:
        self._read = read
        self._signatures = signatures

    def _get(self, key: str) -> bytes | None:
        try:
            return self._read(key)
        except (S3ObjectMissingError, KeyError):
            return None

    def report(self, key: str, body: bytes, out: list[Problem]) -> ReconcileSummary | None:
        """The checks of one summary on its own: parse, signature, own prefix, listed files."""
        try:
            summary = ReconcileSummary.model_validate_json(body)
        except ValidationError as exc:
            out.append(Problem(key, f"not a reconcile summary ({exc.error_count()} errors)"))
            return None
        prefix = key.removesuffix(SUMMARY_FILE)
        if summary.reportPrefix != prefix:
            out.append(Problem(key, f"names another report's prefix ({summary.reportPrefix}): out of place"))
        raw_signature = self._get(prefix + SIGNATURE_FILE)
        if raw_signature is None:
            out.append(Problem(key, f"unsigned: no {SIGNATURE_FILE}"))
        else:
            try:
                wrong = signature_holds(self._signatures, Signature.model_validate_json(raw_signature), body)
            except ValidationError:
                wrong = f"{SIGNATURE_FILE} is not a signature"
            if wrong:
                out.append(Problem(key, f"signature: {wrong}"))
        for name, digest in sorted(summary.files.items()):
            data = self._get(prefix + name)
            if data is None:
                out.append(Problem(prefix + name, "listed in summary.json but missing"))
            elif _sha256(data) != digest:
                out.append(Problem(prefix + name, "does not match the sha256 summary.json lists"))
        return summary

    def walk(self, keys: list[str]) -> Verification:
        result = Verification()
        before: tuple[str, str] | None = None  # the previous report in the walk: key, sha256
        nights: list[date] = []
        for key in keys:
            body = self._get(key)
            if body is None:
                result.problems.append(Problem(key, "missing"))
                continue
            result.checked.append(key)
            summary = self.report(key, body, result.problems)
            match = _SUMMARY_KEY.match(key)
            if match:
                nights.append(date.fromisoformat(match.group(1)))
            if summary is not None:
                self._link(key, summary, before, result.problems)
            before = (key, _sha256(body))
        for night in _missing_nights(nights):
            result.problems.append(Problem(f"{layout.RECONCILIATION_PREFIX}{night}/", "no report for this night"))
        return result

    def _link(self, key: str, summary: ReconcileSummary, before: tuple[str, str] | None, out: list[Problem]) -> None:
        named, digest = summary.previousSummary, summary.previousSummarySha256
        if before is None:  # the walk's first report: its predecessor, if it names one, must be there
            if named is not None:
                stored = self._get(named)
                if stored is None:
                    out.append(Problem(key, f"follows {named}, which is missing"))
                elif _sha256(stored) != digest:
                    out.append(Problem(key, f"follows {named}, whose sha256 differs from the one it names"))
            return
        if named != before[0]:
            gone = named is not None and self._get(named) is None
            reason = f"{named} is missing (removed from the chain)" if gone else f"the report before it is {before[0]}"
            out.append(Problem(key, f"out of chain: it follows {named}, but {reason}"))
        elif digest != before[1]:
            out.append(Problem(key, f"out of chain: {named} is not the report it followed (sha256 differs)"))


def _missing_nights(nights: list[date]) -> list[date]:
    if not nights:
        return []
    seen, first, last = set(nights), min(nights), max(nights)
    return [first + timedelta(days=d) for d in range((last - first).days + 1) if first + timedelta(days=d) not in seen]


def verify_chain(
    buckets: Buckets, bucket: str, signatures: Signatures, since: date | None = None, until: date | None = None
) -> Verification:
    keys = summary_keys(buckets, bucket, since, until)
    return ChainWalk(lambda key: buckets.get_bytes(bucket, key), signatures).walk(keys)
