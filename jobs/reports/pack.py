"""`python -m jobs reports pack --month YYYY-MM`: a month's evidence in one write-once archive,
and `verify-pack`, which checks such an archive on its own.

`reconciliation/packs/<YYYY-MM>/evidence.tar.gz` holds: every file of the month's reports
(`reports/<key>`) and the summary.json of the report the month's first one follows (so the first
link can be checked), `verification.json` (the chain's verification over the month, as
`reports verify` makes it), `findings-opened.csv`, `findings-closed.csv` and
`findings-acknowledged.json` (from the month's ledgers and acknowledgements), the month's erasure
receipts (`erasure/…`) and restore-drill reports (`runs/drill/…`), `manifest.json` (the sha256
of every other member) and `manifest.sig` (its KMS signature). `verify-pack` needs nothing but
the archive and kms:Verify: the manifest's signature, every member against it, and the chain of
the packed reports.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from datetime import UTC, date
from typing import TYPE_CHECKING

import polars as pl

from jobs.contract import layout
from jobs.reconcile import ledger as ledgers
from jobs.reconcile.frames import empty
from jobs.reconcile.provenance import ENV_SIGNING_KEY, Signature, sign, signature_holds
from jobs.reconcile.report import SUMMARY_FILE, ReconcileSummary
from jobs.reconcile.spreadsheet_csv import spreadsheet_csv
from jobs.reports.verify import ChainWalk, summary_keys

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


def _month(month: str) -> tuple[date, date]:
    if not _MONTH.match(month):
        raise ValueError(f"--month {month!r}: YYYY-MM")
    first = date.fromisoformat(f"{month}-01")
    after = date(first.year + first.month // 12, first.month % 12 + 1, 1)
    return first, after


def _members(buckets: Buckets, bucket: str, signatures: Signatures, month: str) -> dict[str, bytes]:
    first, after = _month(month)
    last = date.fromordinal(after.toordinal() - 1)
    keys = summary_keys(buckets, bucket, first, last)
    if not keys:
        raise ValueError(f"no reconcile report in {month}")
    members: dict[str, bytes] = {}
    opened, closed = [], []
    for key in keys:
        prefix = key.removesuffix(SUMMARY_FILE)
        for page in buckets.list_pages(bucket, prefix):
            for obj in page:
                members[REPORTS + obj.key] = buckets.get_bytes(bucket, obj.key)
        ledger = ledgers.read_ledger(buckets, bucket, prefix)
        if ledger is not None:
            opened.append(ledger.filter(pl.col("state") == ledgers.State.NEW.value))
            closed.append(ledger.filter(pl.col("state") == ledgers.State.RESOLVED.value))
    head = ReconcileSummary.model_validate_json(members[REPORTS + keys[0]])
    if head.previousSummary:  # the link into the month: its summary, for its sha256
        members[REPORTS + head.previousSummary] = buckets.get_bytes(bucket, head.previousSummary)
    none = empty(ledgers.LEDGER_SCHEMA)
    members["findings-opened.csv"] = spreadsheet_csv(pl.concat([none, *opened]))
    members["findings-closed.csv"] = spreadsheet_csv(pl.concat([none, *closed]))
    acks = [
        a.model_dump(mode="json")
        for a in ledgers.Acknowledgements(buckets, bucket).all().values()
        if first <= a.at.date() < after
    ]
    members["findings-acknowledged.json"] = json.dumps(acks, indent=2).encode()
    for prefix in (layout.ERASURE_PREFIX, layout.DRILL_RUNS_PREFIX):
        for page in buckets.list_pages(bucket, prefix):
            for obj in page:
                if first <= obj.last_modified.astimezone(UTC).date() < after:
                    members[obj.key] = buckets.get_bytes(bucket, obj.key)
    walked = ChainWalk(lambda k: members[REPORTS + k], signatures).walk(keys)
    members["verification.json"] = json.dumps(
        {"checked": walked.checked, "problems": [str(p) for p in walked.problems], "ok": walked.ok}, indent=2
    ).encode()
    return members


def write_pack(buckets: Buckets, settings: JobSettings, signatures: Signatures, month: str) -> str:
    """Build and put the month's archive once; S3ObjectExistsError if it exists."""
    key_id = settings.report_signing_key
    if not key_id:
        raise ValueError(f"{ENV_SIGNING_KEY} is not set: a pack is signed")
    bucket = settings.reports_bucket
    members = _members(buckets, bucket, signatures, month)
    now = layout.utc_now()
    manifest = json.dumps(
        {
            "month": month,
            "createdAt": now.isoformat(),
            "members": {name: hashlib.sha256(body).hexdigest() for name, body in sorted(members.items())},
        },
        indent=2,
    ).encode()
    signature = sign(signatures, key_id, manifest, now)
    members[MANIFEST], members[MANIFEST_SIG] = manifest, signature.model_dump_json(indent=2).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, body in sorted(members.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(body), int(now.timestamp())
            tar.addfile(info, io.BytesIO(body))
    key = pack_key(month)
    buckets.put_once(bucket, key, buffer.getvalue(), "application/gzip")
    return key


def read_pack(data: bytes) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for info in tar.getmembers():
            extracted = tar.extractfile(info) if info.isfile() else None
            if extracted is not None:
                members[info.name] = extracted.read()
    return members


def check_pack(members: dict[str, bytes], signatures: Signatures) -> tuple[list[str], list[str]]:
    """(reports checked, problems) of an archive's members, with nothing but KMS Verify."""
    problems: list[str] = []
    if MANIFEST not in members or MANIFEST_SIG not in members:
        return [], ["the archive has no manifest.json or manifest.sig"]
    wrong = signature_holds(signatures, Signature.model_validate_json(members[MANIFEST_SIG]), members[MANIFEST])
    if wrong:
        problems.append(f"{MANIFEST}: signature: {wrong}")
    listed: dict[str, str] = json.loads(members[MANIFEST])["members"]
    for name in sorted(set(listed) | set(members) - {MANIFEST, MANIFEST_SIG}):
        if name not in members:
            problems.append(f"{name}: listed in the manifest but not in the archive")
        elif name not in listed:
            problems.append(f"{name}: in the archive but not in the manifest")
        elif hashlib.sha256(members[name]).hexdigest() != listed[name]:
            problems.append(f"{name}: does not match the manifest's sha256")
    month = json.loads(members[MANIFEST])["month"]
    keys = sorted(
        n.removeprefix(REPORTS)
        for n in members
        if n.startswith(f"{REPORTS}{layout.RECONCILIATION_PREFIX}{month}-") and n.endswith("/" + SUMMARY_FILE)
    )
    walked = ChainWalk(lambda k: members[REPORTS + k], signatures).walk(keys)
    problems += [str(p) for p in walked.problems]
    return walked.checked, problems


def verify_pack(buckets: Buckets, bucket: str, signatures: Signatures, month: str) -> tuple[list[str], list[str]]:
    _month(month)
    return check_pack(read_pack(buckets.get_bytes(bucket, pack_key(month))), signatures)


__all__ = ["check_pack", "pack_key", "read_pack", "verify_pack", "write_pack"]
