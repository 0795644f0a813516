"""`python -m jobs reports pack --month YYYY-MM`: a month's evidence in one write-once archive,
and `verify-pack`, which checks such an archive on its own.

`reconciliation/packs/<YYYY-MM>/evidence.tar.gz` holds: every file of the month's reports
(`reports/<key>`) and the summary.json of the report the month's first one follows (so the first
link can be checked), `verification.json` (the chain's verification over the month, as
`reports verify` makes it), `findings-opened.csv`, `findings-closed.csv` and
`findings-acknowledged.json` (from the month's ledgers and acknowledgements), the month's erasure
receipts (`erasure/…`) and restore-drill reports (`runs/drill/…`), `manifest.json` (the sha256
of every other member) and `manifest.sig` (its KMS signature). `verify-pack` needs nothing but
the archive and kms:Verify: the manifest's signature (by the stack's key), every member against
it, and the chain of the packed reports.

`pack` checks the archive it built exactly as `verify-pack` would, before the write-once put:
an archive whose own verification fails (a report that does not verify, a missing night, a
signature by another key) is not written, since a write-once pack could never be replaced.
The archive is streamed to a temporary file member by member (one report file in memory at a
time), then put. The month's nights are dates in the stack's schedule time zone, as
`reports verify` reads them; the manifest records the zone, so `verify-pack` needs no setting.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import IO, TYPE_CHECKING
from zoneinfo import ZoneInfo

import polars as pl

from jobs.contract import layout
from jobs.errors import ReconcileInputError
from jobs.reconcile.chain import ledger as ledgers
from jobs.reconcile.report import SUMMARY_FILE, ReconcileSummary, Signature, sign, signature_holds, spreadsheet_csv
from jobs.reconcile.rules import empty
from jobs.reports.verify import ChainWalk, Nights, stack_key_arn, stack_zone, summary_keys

if TYPE_CHECKING:
    from jobs.settings import JobSettings
    from jobs.store.kms import Signatures
    from jobs.store.s3 import Buckets

PACKS_PREFIX = f"{layout.RECONCILIATION_PREFIX}packs/"
ARCHIVE = "evidence.tar.gz"
MANIFEST, MANIFEST_SIG = "manifest.json", "manifest.sig"
REPORTS = "reports/"
_MONTH = re.compile(r"^\d{4}-\d{2}$")


def pack_key(month: str) -> str:
    return f"{PACKS_PREFIX}{month}/{ARCHIVE}"


def month_nights(month: str, zone: ZoneInfo) -> Nights:
    """The month's nights (its first to its last day) in `zone`."""
    if not _MONTH.match(month):
        raise ReconcileInputError(f"--month {month!r}: YYYY-MM")
    first = date.fromisoformat(f"{month}-01")
    after = date(first.year + first.month // 12, first.month % 12 + 1, 1)
    return Nights(zone, first, date.fromordinal(after.toordinal() - 1))


@dataclass
class PackOutcome:
    """What `write_pack` did: the key written, or None with the problems that refused it."""

    key: str | None
    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class _Writer:
    """The archive, streamed into `out` member by member, with each member's sha256."""

    def __init__(self, out: IO[bytes], at: datetime) -> None:
        self._tar = tarfile.open(fileobj=out, mode="w:gz")  # noqa: SIM115  # closed by close()
        self._mtime = int(at.timestamp())
        self.digests: dict[str, str] = {}

    def add(self, name: str, body: bytes) -> None:
        if name in self.digests:
            return
        info = tarfile.TarInfo(name)
        info.size, info.mtime = len(body), self._mtime
        self._tar.addfile(info, io.BytesIO(body))
        self.digests[name] = hashlib.sha256(body).hexdigest()

    def close(self) -> None:
        self._tar.close()


def _add_reports(writer: _Writer, buckets: Buckets, bucket: str, keys: list[str]) -> None:
    """Every file of the month's reports, the summary the first one follows, and the month's
    opened and closed findings from their ledgers.
    """
    none = empty(ledgers.LEDGER_SCHEMA)
    opened, closed = [none], [none]
    for key in keys:
        prefix = key.removesuffix(SUMMARY_FILE)
        for page in buckets.list_pages(bucket, prefix):
            for obj in page:
                writer.add(REPORTS + obj.key, buckets.get_bytes(bucket, obj.key))
        ledger = ledgers.read_ledger(buckets, bucket, prefix)
        if ledger is not None:
            ledger = ledgers.conformed(ledger)
            opened.append(ledger.filter(pl.col("state") == ledgers.State.NEW.value))
            closed.append(ledger.filter(pl.col("state") == ledgers.State.RESOLVED.value))
    head = ReconcileSummary.model_validate_json(buckets.get_bytes(bucket, keys[0]))
    if head.previousSummary:  # the link into the month: its summary, for its sha256
        writer.add(REPORTS + head.previousSummary, buckets.get_bytes(bucket, head.previousSummary))
    writer.add("findings-opened.csv", spreadsheet_csv(pl.concat(opened)))
    writer.add("findings-closed.csv", spreadsheet_csv(pl.concat(closed)))


def _add_records(writer: _Writer, buckets: Buckets, bucket: str, nights: Nights) -> None:
    """The month's acknowledgements, erasure receipts and drill reports (by their night)."""
    acks = [
        a.model_dump(mode="json")
        for a in ledgers.Acknowledgements(buckets, bucket).records()
        if nights.holds(a.at.astimezone(nights.zone).date())
    ]
    writer.add("findings-acknowledged.json", json.dumps(acks, indent=2).encode())
    for prefix in (layout.ERASURE_PREFIX, layout.DRILL_RUNS_PREFIX):
        for page in buckets.list_pages(bucket, prefix):
            for obj in page:
                if nights.holds(obj.last_modified.astimezone(nights.zone).date()):
                    writer.add(obj.key, buckets.get_bytes(bucket, obj.key))


def write_pack(
    buckets: Buckets,
    settings: JobSettings,
    signatures: Signatures,
    month: str,
    stop_check: Callable[[str], None] = lambda _: None,
    today: date | None = None,
) -> PackOutcome:
    """Build the month's archive, check it as `verify-pack` would, and put it once when it holds
    (S3ObjectExistsError if a pack exists); a pack that does not hold is not written.
    `stop_check` (the run's stop flag) is asked just before the put: a stop leaves no pack.
    A month that has not ended in the schedule's zone (`today`: now there, unless given) is
    refused (ReconcileInputError) before any read: its pack, written once, would lack its last
    nights and block the real one for good.
    """
    nights = month_nights(month, stack_zone(settings))
    today = today or layout.utc_now().astimezone(nights.zone).date()
    if nights.until is not None and nights.until >= today:
        raise ReconcileInputError(
            f"--month {month} has not ended in the schedule's time zone {nights.zone.key} (today is {today}): "
            "a pack is written once, so it can only be made once the month's last night has run"
        )
    key_arn = stack_key_arn(settings, signatures)
    bucket = settings.store.reports_bucket
    walked = ChainWalk(lambda k: buckets.get_bytes(bucket, k), signatures, key_arn, nights, today).walk(
        summary_keys(buckets, bucket, nights.since, nights.until)
    )
    if not walked.checked:
        raise ReconcileInputError(f"no reconcile report in {month}")
    now = layout.utc_now()
    with tempfile.TemporaryFile() as spool:
        writer = _Writer(spool, now)
        _add_reports(writer, buckets, bucket, walked.checked)
        _add_records(writer, buckets, bucket, nights)
        verification = {"checked": walked.checked, "problems": [str(p) for p in walked.problems], "ok": walked.ok}
        writer.add("verification.json", json.dumps(verification, indent=2).encode())
        manifest = json.dumps(
            {
                "month": month,
                "scheduleTimezone": settings.run.schedule_timezone,
                "createdAt": now.isoformat(),
                "members": dict(sorted(writer.digests.items())),
            },
            indent=2,
        ).encode()
        signature = sign(signatures, settings.run.report_signing_key, manifest, now)
        writer.add(MANIFEST, manifest)
        writer.add(MANIFEST_SIG, signature.model_dump_json(indent=2).encode())
        writer.close()
        spool.seek(0)
        with tarfile.open(fileobj=spool, mode="r:gz") as tar:
            checked, problems = check_pack(_TarMembers(tar), signatures, key_arn)
        if problems:
            return PackOutcome(None, checked, problems)
        stop_check("before the pack was written")
        spool.seek(0)
        key = pack_key(month)
        buckets.put_once(bucket, key, spool.read(), "application/gzip")
    return PackOutcome(key, checked)


class _TarMembers(Mapping[str, bytes]):
    """An archive's members, each read when asked (one member in memory at a time)."""

    def __init__(self, tar: tarfile.TarFile) -> None:
        self._tar = tar
        self._infos = {info.name: info for info in tar.getmembers() if info.isfile()}

    def __getitem__(self, name: str) -> bytes:
        extracted = self._tar.extractfile(self._infos[name])
        if extracted is None:
            raise KeyError(name)
        return extracted.read()

    def __iter__(self) -> Iterator[str]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)


def read_pack(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return dict(_TarMembers(tar))


def _members_problems(members: Mapping[str, bytes], listed: dict[str, str]) -> list[str]:
    problems = []
    for name in sorted(set(listed) | set(members) - {MANIFEST, MANIFEST_SIG}):
        if name not in members:
            problems.append(f"{name}: listed in the manifest but not in the archive")
        elif name not in listed:
            problems.append(f"{name}: in the archive but not in the manifest")
        elif hashlib.sha256(members[name]).hexdigest() != listed[name]:
            problems.append(f"{name}: does not match the manifest's sha256")
    return problems


def check_pack(members: Mapping[str, bytes], signatures: Signatures, stack_key_arn: str) -> tuple[list[str], list[str]]:
    """(reports checked, problems) of an archive's members, with nothing but KMS Verify and the
    stack's key (resolved to its ARN): the manifest's signature, every member against it, the
    chain of the packed reports over the month's nights in the zone the manifest names.
    """
    if MANIFEST not in members or MANIFEST_SIG not in members:
        return [], ["the archive has no manifest.json or manifest.sig"]
    raw_manifest = members[MANIFEST]
    problems: list[str] = []
    wrong = signature_holds(
        signatures, Signature.model_validate_json(members[MANIFEST_SIG]), raw_manifest, stack_key_arn
    )
    if wrong:
        problems.append(f"{MANIFEST}: signature: {wrong}")
    manifest = json.loads(raw_manifest)
    problems += _members_problems(members, manifest["members"])
    nights = month_nights(manifest["month"], ZoneInfo(manifest.get("scheduleTimezone", "UTC")))
    keys = sorted(
        n.removeprefix(REPORTS)
        for n in members
        if n.startswith(f"{REPORTS}{layout.RECONCILIATION_PREFIX}") and n.endswith("/" + SUMMARY_FILE)
    )
    # The whole month is judged, its last night too, whenever the archive is checked.
    after = None if nights.until is None else nights.until + timedelta(days=1)
    walked = ChainWalk(lambda k: members[REPORTS + k], signatures, stack_key_arn, nights, after).walk(keys)
    problems += [str(p) for p in walked.problems]
    return walked.checked, problems


def verify_pack(
    buckets: Buckets, settings: JobSettings, signatures: Signatures, month: str
) -> tuple[list[str], list[str]]:
    month_nights(month, ZoneInfo("UTC"))  # a malformed --month is refused before any read
    key_arn = stack_key_arn(settings, signatures)
    return check_pack(read_pack(buckets.get_bytes(settings.store.reports_bucket, pack_key(month))), signatures, key_arn)


__all__ = ["PackOutcome", "check_pack", "month_nights", "pack_key", "read_pack", "verify_pack", "write_pack"]
