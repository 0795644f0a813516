"""`python -m jobs reports verify`: walk the chain of reconcile reports and check every link.

For every summary.json in the window (keys `reconciliation/<date>/<runId>/summary.json`, in key
order, which is time order): its signature (`summary.sig`, KMS Verify over the exact bytes, with
the stack's signing key, set by its ARN (an alias is refused: it can be moved to another key):
never the key the signature file names, which a forger chooses), the
sha256 of every file it lists, that it names its own prefix, and that it follows the report
before it (`previousSummary` and its sha256). A night of the window with no report is named as
missing: from `--since` (else the first report found) to `--until`, but never past yesterday in
the schedule's zone (tonight's run may not have run yet), so a window whose last or first nights
have no report says so instead of passing. Anything that does not hold is a `Problem`; the
command exits 1 on any.

A report's night is the date its run started on in the stack's schedule time zone
(JobSettings.run.schedule_timezone), not the UTC date of its key: an evening schedule in a zone with
daylight saving lands on one UTC date in summer and the next in winter, which by UTC dates
would leave a night "missing" at one change and two reports on one date at the other. The keys
are listed a day beyond the window on each side and kept by their night.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ValidationError

from jobs.contract import layout
from jobs.errors import S3ObjectMissingError, SettingsError
from jobs.reconcile.report import SIGNATURE_FILE, SUMMARY_FILE, ReconcileSummary, Signature, signature_holds
from jobs.settings import ENV_REPORT_SIGNING_KEY, env_name

if TYPE_CHECKING:
    from jobs.settings import JobSettings
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


@dataclass(frozen=True)
class Nights:
    """Which nights a walk covers, and in which zone a night is a date."""

    zone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    since: date | None = None
    until: date | None = None

    def holds(self, night: date) -> bool:
        return (self.since is None or night >= self.since) and (self.until is None or night <= self.until)

    def of(self, key: str, summary: ReconcileSummary | None) -> date | None:
        """The night of the report at `key`: its start's date in the zone (the key's UTC date
        for a summary that cannot be read).
        """
        if summary is not None:
            return summary.startedAt.astimezone(self.zone).date()
        match = _SUMMARY_KEY.match(key)
        return date.fromisoformat(match.group(1)) if match else None


def summary_keys(buckets: Buckets, bucket: str, since: date | None, until: date | None) -> list[str]:
    """The summary keys whose UTC date is within a day of the window (a night in any zone is
    within a day of its UTC date): `ChainWalk.walk` keeps those of the window's nights.
    """
    first = since - timedelta(days=1) if since is not None else None
    last = until + timedelta(days=1) if until is not None else None
    keys = []
    for page in buckets.list_pages(bucket, layout.RECONCILIATION_PREFIX):
        for obj in page:
            match = _SUMMARY_KEY.match(obj.key)
            if not match:
                continue
            day = date.fromisoformat(match.group(1))
            if (first is None or day >= first) and (last is None or day <= last):
                keys.append(obj.key)
    return sorted(keys)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ChainWalk:
    """One walk over the stored reports (or, for a pack, over files read from the archive)."""

    def __init__(
        self,
        read: Callable[[str], bytes],
        signatures: Signatures,
        stack_key_arn: str,
        nights: Nights | None = None,
        today: date | None = None,
    ) -> None:
        """`stack_key_arn`: the stack's signing key, resolved to its ARN (`Signatures.key_arn`);
        every signature must be that key's. `today`: the date in the nights' zone (now, unless
        given); no night from today on is ever called missing.
        """
        self._read = read
        self._signatures = signatures
        self._key_arn = stack_key_arn
        self.nights = nights or Nights()
        self.today = today or layout.utc_now().astimezone(self.nights.zone).date()

    def _get(self, key: str) -> bytes | None:
        try:
            return self._read(key)
        except (S3ObjectMissingError, KeyError):
            return None

    @staticmethod
    def parsed(body: bytes) -> ReconcileSummary | ValidationError:
        try:
            return ReconcileSummary.model_validate_json(body)
        except ValidationError as exc:
            return exc

    def report(self, key: str, body: bytes, out: list[Problem]) -> ReconcileSummary | None:
        """The checks of one summary on its own: parse, signature, own prefix, listed files."""
        summary = self.parsed(body)
        if isinstance(summary, ValidationError):
            out.append(Problem(key, f"not a reconcile summary ({summary.error_count()} errors)"))
            return None
        prefix = key.removesuffix(SUMMARY_FILE)
        if summary.reportPrefix != prefix:
            out.append(Problem(key, f"names another report's prefix ({summary.reportPrefix}): out of place"))
        raw_signature = self._get(prefix + SIGNATURE_FILE)
        if raw_signature is None:
            out.append(Problem(key, f"unsigned: no {SIGNATURE_FILE}"))
        else:
            try:
                signature = Signature.model_validate_json(raw_signature)
                wrong = signature_holds(self._signatures, signature, body, self._key_arn)
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
        """Check the reports at `keys` (in key order) whose night is in `self.nights`."""
        result = Verification()
        before: tuple[str, str] | None = None  # the previous report in the walk: key, sha256
        nights: list[date] = []
        for key in keys:
            body = self._get(key)
            if body is None:
                result.problems.append(Problem(key, "missing"))
                continue
            parsed = self.parsed(body)
            night = self.nights.of(key, None if isinstance(parsed, ValidationError) else parsed)
            if night is not None and not self.nights.holds(night):
                continue  # listed for the margin: another night's report
            result.checked.append(key)
            summary = self.report(key, body, result.problems)
            if night is not None:
                nights.append(night)
            if summary is not None:
                self._link(key, summary, before, result.problems)
            before = (key, _sha256(body))
        for night in _missing_nights(nights, self.nights, self.today):
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


def _missing_nights(found: list[date], window: Nights, today: date) -> list[date]:
    """The window's nights with no report: from its first night (the first report found when it
    names none) to its last, never past yesterday: the edges count as much as the middle.
    """
    first = window.since if window.since is not None else min(found, default=None)
    if first is None:
        return []
    yesterday = today - timedelta(days=1)
    last = yesterday if window.until is None else min(window.until, yesterday)
    seen = set(found)
    return [first + timedelta(days=d) for d in range((last - first).days + 1) if first + timedelta(days=d) not in seen]


def is_alias(key_id: str) -> bool:
    """`alias/…` or an alias ARN (`arn:aws:kms:…:alias/…`): a name anyone allowed may point elsewhere."""
    return key_id.startswith("alias/") or ":alias/" in key_id


def stack_key_arn(settings: JobSettings, signatures: Signatures) -> str:
    """The stack's signing key as an identity: the setting, a key ARN (or key id), resolved to the
    key's ARN. An alias is refused: whoever may move it (UpdateAlias) could point it at their
    own key, and every report they signed would then verify.
    """
    key = settings.run.report_signing_key
    if not key:
        raise SettingsError(
            f"{ENV_REPORT_SIGNING_KEY} is not set: the reports are checked against the stack's signing key "
            "(its key ARN, the stack output reportSigningKeyArn)"
        )
    if is_alias(key):
        raise SettingsError(
            f"{ENV_REPORT_SIGNING_KEY}={key!r} is an alias: an alias can be pointed at another key, so it "
            "proves nothing; set the stack's signing key ARN (the stack output reportSigningKeyArn)"
        )
    return signatures.key_arn(key)


def stack_zone(settings: JobSettings) -> ZoneInfo:
    """The schedule's time zone; SettingsError naming the variable when it is no IANA zone."""
    try:
        return ZoneInfo(settings.run.schedule_timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise SettingsError(
            f"{env_name('schedule_timezone')}={settings.run.schedule_timezone!r}: "
            "no IANA time zone (e.g. Europe/Berlin)"
        ) from exc


def stack_nights(settings: JobSettings, since: date | None = None, until: date | None = None) -> Nights:
    return Nights(stack_zone(settings), since, until)


def verify_chain(
    buckets: Buckets, bucket: str, signatures: Signatures, stack_key_arn: str, nights: Nights | None = None
) -> Verification:
    nights = nights or Nights()
    keys = summary_keys(buckets, bucket, nights.since, nights.until)
    return ChainWalk(lambda key: buckets.get_bytes(bucket, key), signatures, stack_key_arn, nights).walk(keys)
