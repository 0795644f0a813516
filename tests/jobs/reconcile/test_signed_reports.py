"""Reports an auditor can trust (issue 44): on a fresh local stack the reports are signed by the
stack's key and verify; a report signed by any other KMS key does not, whatever its signature
file claims; a pack whose own verification fails is not written; and a night is a date in the
schedule's time zone, not the UTC date of its key.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import boto3
import pytest
from test_reconcile_live import _seed_and_ingest

from jobs.contract import layout
from jobs.contract.signing import KEY_SPEC, KEY_USAGE, signing_key_alias
from jobs.errors import ReconcileInputError, RunStoppedError
from jobs.local.stack import bootstrap_endpoints, job_env
from jobs.observability import CallMetrics
from jobs.reconcile import cli as reconcile
from jobs.reconcile.report.provenance import SIGNATURE_FILE, Signature, sign
from jobs.reconcile.report.written import ReconcileSummary
from jobs.reports import cli as reports
from jobs.reports import pack
from jobs.reports.pack import pack_key
from jobs.reports.verify import ChainWalk, Nights
from jobs.settings import JobSettings
from jobs.store.kms import Signatures, kms_client
from jobs.store.s3 import Buckets


@pytest.fixture
def signed(stack, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A fresh stage bootstrapped as `local up` does it (the signing key with it), its job env set."""
    settings = bootstrap_endpoints(stack.endpoints, JobSettings(stage=f"{stack.settings.stage}s"), signing=True)
    for key, value in job_env(stack.endpoints, settings).items():
        monkeypatch.setenv(key, value)
    stack.settings = settings
    return stack


def _get(stack, key: str) -> bytes:  # type: ignore[no-untyped-def]
    return stack.s3().get_object(Bucket=stack.settings.store.reports_bucket, Key=key)["Body"].read()


def _summaries(stack) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(
        k for k in stack.keys(stack.settings.store.reports_bucket, "reconciliation/") if k.endswith("summary.json")
    )


def test_on_a_fresh_local_stack_two_nights_are_signed_by_the_stacks_key_and_verify(signed, corpus, capsys) -> None:
    s = signed.settings
    key = boto3.client("kms").describe_key(KeyId=signing_key_alias(s.stage))["KeyMetadata"]
    assert s.run.report_signing_key == key["Arn"]  # the jobs get the key's ARN, never the alias
    assert job_env(signed.endpoints, s)["DOCUFLOW_REPORT_SIGNING_KEY"] == key["Arn"]
    assert (key["KeySpec"], key["KeyUsage"]) == (KEY_SPEC, KEY_USAGE)  # the spec the stack declares
    again = bootstrap_endpoints(signed.endpoints, JobSettings(stage=s.stage), signing=True)  # a second `up`
    assert again.run.report_signing_key == s.run.report_signing_key
    assert boto3.client("kms").describe_key(KeyId=s.run.report_signing_key)["KeyMetadata"]["Arn"] == key["Arn"]
    _seed_and_ingest(signed, corpus)
    assert reconcile.main(["live", "--grace", "0s"]) == 0
    assert reconcile.main(["live", "--grace", "0s"]) == 0
    first, second = _summaries(signed)
    for summary in (first, second):
        signature = Signature.model_validate_json(_get(signed, summary.replace("summary.json", SIGNATURE_FILE)))
        assert signature.keyArn == key["Arn"] and signature.keyId == s.run.report_signing_key
    capsys.readouterr()
    assert reports.main(["verify"]) == 0
    assert "OK: 2 reports checked" in capsys.readouterr().out


def _forge(stack, other: str, claim: str | None, name: str) -> str:  # type: ignore[no-untyped-def]
    """A copy of the newest report under a new prefix, signed by the KMS key `other`; its
    signature file names `claim` as the key that signed (None: it names none, as an old one).
    """
    newest = _summaries(stack)[-1]
    prefix = newest.removesuffix("summary.json").rstrip("/") + f"-{name}/"
    stored = ReconcileSummary.model_validate_json(_get(stack, newest))
    body = (
        stored.model_copy(update={"reportPrefix": prefix, "totalFindings": 0, "files": {}}).model_dump_json().encode()
    )
    digest = hashlib.sha256(body).digest()
    raw = boto3.client("kms").sign(KeyId=other, Message=digest, MessageType="DIGEST", SigningAlgorithm="ECDSA_SHA_256")
    signature = Signature(
        keyId=claim or other,
        keyArn=claim,
        algorithm="ECDSA_SHA_256",
        sha256=digest.hex(),
        signature=base64.b64encode(raw["Signature"]).decode(),
        signedAt=layout.utc_now(),
    )
    bucket, s3 = stack.settings.store.reports_bucket, stack.s3()
    s3.put_object(Bucket=bucket, Key=prefix + SIGNATURE_FILE, Body=signature.model_dump_json().encode())
    s3.put_object(Bucket=bucket, Key=prefix + "summary.json", Body=body)
    return prefix + "summary.json"


def test_a_report_signed_by_another_kms_key_does_not_verify(signed, corpus, capsys) -> None:
    _seed_and_ingest(signed, corpus)
    assert reconcile.main(["live", "--grace", "0s"]) == 0
    kms = boto3.client("kms")
    other = kms.create_key(KeySpec=KEY_SPEC, KeyUsage=KEY_USAGE)["KeyMetadata"]["Arn"]
    stack_arn = kms.describe_key(KeyId=signed.settings.run.report_signing_key)["KeyMetadata"]["Arn"]
    honest = _forge(signed, other, other, "a")  # names the key that signed it
    lying = _forge(signed, other, stack_arn, "b")  # claims the stack's key
    old_style = _forge(signed, other, None, "c")  # names no key ARN, only the other key
    capsys.readouterr()
    assert reports.main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"{honest}: signature: signed by key {other}, not by the stack's signing key {stack_arn}" in out
    assert f"{lying}: signature: the signature does not verify with the stack's signing key {stack_arn}" in out
    assert f"{old_style}: signature: the signature does not verify with the stack's signing key" in out
    # The month's pack, once the month has ended, would carry them: it is not written, and says why.
    now = layout.utc_now()
    outcome = pack.write_pack(
        *_packing(signed), f"{now:%Y-%m}", today=date(now.year + now.month // 12, now.month % 12 + 1, 1)
    )
    assert outcome.key is None and any("signed by key" in p for p in outcome.problems)
    assert not signed.keys(signed.settings.store.reports_bucket, "reconciliation/packs/")


def test_verify_needs_the_stacks_key(signed, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("DOCUFLOW_REPORT_SIGNING_KEY")
    assert reports.main(["verify"]) == 2
    assert "DOCUFLOW_REPORT_SIGNING_KEY is not set" in capsys.readouterr().err


def test_verify_refuses_an_alias_and_a_moved_alias_proves_nothing(signed, corpus, monkeypatch, capsys) -> None:
    """The alias is a name anyone allowed to UpdateAlias may point at their own key: verify
    refuses it as the stack's key (exit 2, whichever form), and reports signed after the alias
    was moved are refused by the key ARN the stack configures.
    """
    s, kms = signed.settings, boto3.client("kms")
    alias = signing_key_alias(s.stage)
    alias_arn = f"arn:aws:kms:{kms.meta.region_name}:000000000000:{alias}"
    for named in (alias, alias_arn):
        monkeypatch.setenv("DOCUFLOW_REPORT_SIGNING_KEY", named)
        assert reports.main(["verify"]) == 2
        assert f"DOCUFLOW_REPORT_SIGNING_KEY={named!r} is an alias" in capsys.readouterr().err
        assert reports.main(["verify-pack", "--month", "2026-02"]) == 2
        assert "is an alias" in capsys.readouterr().err
    # The alias moved to another key; a signer still configured by the alias signs with that key.
    _seed_and_ingest(signed, corpus)
    other = kms.create_key(KeySpec=KEY_SPEC, KeyUsage=KEY_USAGE)["KeyMetadata"]["Arn"]
    kms.update_alias(AliasName=alias, TargetKeyId=other)
    monkeypatch.setenv("DOCUFLOW_REPORT_SIGNING_KEY", alias)
    assert reconcile.main(["live", "--grace", "0s"]) == 0
    monkeypatch.setenv("DOCUFLOW_REPORT_SIGNING_KEY", s.run.report_signing_key)  # the stack's key ARN
    capsys.readouterr()
    assert reports.main(["verify"]) == 1
    (summary,) = _summaries(signed)
    assert f"{summary}: signature: signed by key {other}, not by the stack's signing key" in capsys.readouterr().out


# --- nights in the schedule's zone (pure: the walk over summaries kept in memory) ---------------
@dataclass
class _Signatures:
    """KMS stand-in for the pure walk: every signature by `arn` holds."""

    arn: str = "arn:aws:kms:us-east-1:000000000000:key/stack"
    algorithm: str = "ECDSA_SHA_256"
    calls: list[str] = field(default_factory=list)

    def verify(self, key_id: str, digest: bytes, signature: bytes) -> bool:
        self.calls.append(key_id)
        return key_id == self.arn


def _fake_signature(body: bytes, start: datetime) -> bytes:
    return json.dumps(
        {"keyId": "alias/x", "keyArn": _Signatures.arn, "algorithm": "ECDSA_SHA_256",
         "sha256": hashlib.sha256(body).hexdigest(), "signature": "c2ln", "signedAt": start.isoformat()}
    ).encode()  # fmt: skip


def _chain(starts: list[datetime], signer: Callable[[bytes, datetime], bytes] = _fake_signature) -> dict[str, bytes]:
    """Signed, linked summaries started at `starts` (their keys by UTC date, as the reconcile writes them)."""
    files: dict[str, bytes] = {}
    before: tuple[str, str] | None = None
    for n, start in enumerate(starts):
        prefix = layout.reconciliation_prefix(f"{start.astimezone(UTC):%Y-%m-%d}", f"{start:%Y%m%dT%H%M%S}Z-{n}")
        summary = ReconcileSummary(
            runId=f"r{n}", startedAt=start, finishedAt=start, source="files", options={}, inputs={},
            snapshotTimes={}, asOf=start, itemCount=0, rawObjectCount=0, processedObjectCount=0, counts={},
            severities={}, totalFindings=0, reportPrefix=prefix,
            previousSummary=before[0] if before else None, previousSummarySha256=before[1] if before else None,
        )  # fmt: skip
        body = summary.model_dump_json().encode()
        digest = hashlib.sha256(body).hexdigest()
        files[prefix + "summary.json"] = body
        files[prefix + SIGNATURE_FILE] = signer(body, start)
        before = (prefix + "summary.json", digest)
    return files


NEW_YORK = ZoneInfo("America/New_York")  # DST ends Sunday 1 November 2026


def _walk(starts: list[datetime], nights: Nights, today: date = date(2026, 11, 4)) -> list[str]:
    files = _chain(starts)
    keys = sorted(k for k in files if k.endswith("summary.json"))
    walked = ChainWalk(files.__getitem__, _Signatures(), _Signatures.arn, nights, today).walk(keys)  # type: ignore[arg-type]
    return [str(p) for p in walked.problems]


def test_an_evening_schedule_across_the_dst_change_misses_no_night() -> None:
    """19:30 in New York is 23:30 UTC in summer time and 00:30 UTC the next day in winter: by
    UTC dates 1 November has no report and 2 November two; in the schedule's zone, one a night.
    """
    evenings = [datetime(2026, 10, d, 19, 30, tzinfo=NEW_YORK) for d in (29, 30, 31)]
    evenings += [datetime(2026, 11, d, 19, 30, tzinfo=NEW_YORK) for d in (1, 2, 3)]
    assert _walk(evenings, Nights(NEW_YORK)) == []
    by_utc = _walk(evenings, Nights(ZoneInfo("UTC")))  # what reading the key's UTC date said
    assert by_utc == ["reconciliation/2026-11-01/: no report for this night"]
    # A night really missed is still named, by its local date.
    skipped = [e for e in evenings if e.day != 1]
    assert _walk(skipped, Nights(NEW_YORK)) == ["reconciliation/2026-11-01/: no report for this night"]


def test_a_window_of_local_nights_takes_the_reports_of_those_nights() -> None:
    evenings = [datetime(2026, 11, d, 19, 30, tzinfo=NEW_YORK) for d in (1, 2, 3)]  # keys on 2-4 November UTC
    files = _chain(evenings)
    keys = sorted(k for k in files if k.endswith("summary.json"))
    nights = Nights(NEW_YORK, date(2026, 11, 2), date(2026, 11, 2))
    walked = ChainWalk(files.__getitem__, _Signatures(), _Signatures.arn, nights).walk(keys)  # type: ignore[arg-type]
    assert walked.ok and walked.checked == [keys[1]]


def test_a_signature_is_checked_with_the_stacks_key_not_the_one_it_names() -> None:
    files = _chain([datetime(2026, 11, 2, 5, tzinfo=UTC)])
    (key,) = [k for k in files if k.endswith("summary.json")]
    signatures = _Signatures()
    walked = ChainWalk(files.__getitem__, signatures, _Signatures.arn, Nights(), date(2026, 11, 3)).walk([key])  # type: ignore[arg-type]
    assert walked.ok and signatures.calls == [_Signatures.arn]


def _packing(stack) -> tuple[Buckets, JobSettings, Signatures]:  # type: ignore[no-untyped-def]
    return Buckets(stack.s3(), CallMetrics()), stack.settings, Signatures(kms_client(stack.settings), CallMetrics())


FEBRUARY = "2026-02"  # a month long ended, of 28 nights


def _signed_february(stack) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """A linked chain of 28 reports, one a night of February 2026 at 02:00 UTC, each signed by
    the stack's key through KMS, as the reconcile signs (not yet stored).
    """
    _, settings, signatures = _packing(stack)

    def kms_signed(body: bytes, at: datetime) -> bytes:
        return sign(signatures, settings.run.report_signing_key, body, at).model_dump_json().encode()

    return _chain([datetime(2026, 2, d, 2, tzinfo=UTC) for d in range(1, 29)], kms_signed)


def _store(stack, files: dict[str, bytes]) -> None:  # type: ignore[no-untyped-def]
    for key, body in files.items():
        stack.s3().put_object(Bucket=stack.settings.store.reports_bucket, Key=key, Body=body)


def test_a_stop_before_the_put_leaves_no_pack_and_a_good_month_is_packed_once(signed) -> None:
    _store(signed, _signed_february(signed))
    s = signed.settings

    def stopped(where: str) -> None:
        raise RunStoppedError(where)

    with pytest.raises(RunStoppedError):
        pack.write_pack(*_packing(signed), FEBRUARY, stopped)
    assert not signed.keys(s.store.reports_bucket, "reconciliation/packs/")
    outcome = pack.write_pack(*_packing(signed), FEBRUARY)
    assert outcome.key == pack_key(FEBRUARY) and not outcome.problems and len(outcome.checked) == 28
    manifest = json.loads(pack.read_pack(_get(signed, outcome.key))[pack.MANIFEST])
    assert manifest["scheduleTimezone"] == "UTC" and "verification.json" in manifest["members"]


# --- the window's edges, and a month that has not ended (issue 44 review) -----------------------
NOVEMBER = Nights(ZoneInfo("UTC"), date(2026, 11, 1), date(2026, 11, 30))


def _november(first: int, last: int) -> list[datetime]:
    return [datetime(2026, 11, d, 2, tzinfo=UTC) for d in range(first, last + 1)]


def _missing(*days: int) -> list[str]:
    return [f"reconciliation/2026-11-{d:02d}/: no report for this night" for d in days]


def test_missing_nights_at_the_edges_of_the_window_are_named() -> None:
    """November with reports for the 1st-25th only: its last five nights are missing (the old
    walk looked only between the first and the last report found, and said nothing).
    """
    assert _walk(_november(1, 25), NOVEMBER, today=date(2026, 12, 3)) == _missing(26, 27, 28, 29, 30)
    assert _walk(_november(3, 30), NOVEMBER, today=date(2026, 12, 3)) == _missing(1, 2)
    # A window not yet over ends yesterday in the schedule's zone: tonight may not have run yet.
    assert _walk(_november(1, 25), NOVEMBER, today=date(2026, 11, 27)) == _missing(26)
    assert _walk(_november(1, 25), Nights(ZoneInfo("UTC")), today=date(2026, 11, 27)) == _missing(26)
    assert _walk(_november(1, 25), Nights(ZoneInfo("UTC")), today=date(2026, 11, 26)) == []
    assert _walk(_november(1, 26), Nights(ZoneInfo("UTC")), today=date(2026, 11, 26)) == []  # tonight's, early
    # In the schedule's zone: 19:30 New York on 30 November is 1 December in UTC, and still November's.
    evenings = [datetime(2026, 11, d, 19, 30, tzinfo=NEW_YORK) for d in range(1, 30)]
    assert _walk(evenings, Nights(NEW_YORK, date(2026, 11, 1), date(2026, 11, 30)), date(2026, 12, 1)) == _missing(30)


def test_a_month_is_packed_only_once_it_has_ended_and_whole(signed, capsys) -> None:
    """A pack is write-once: one made before the month ended (in the schedule's zone) would lack
    its last nights and block the real one for good, so it is refused (exit 2); an ended month
    missing its last nights is not written; the whole month is, once, and verifies on its own.
    """
    month = f"{layout.utc_now():%Y-%m}"
    assert reports.main(["pack", "--month", month]) == 2
    assert f"--month {month} has not ended in the schedule's time zone UTC" in capsys.readouterr().err
    with pytest.raises(ReconcileInputError, match="has not ended"):
        pack.write_pack(*_packing(signed), FEBRUARY, today=date(2026, 2, 28))
    files = _signed_february(signed)
    last_three = {
        k: v
        for k, v in files.items()
        if k.startswith(("reconciliation/2026-02-26", "reconciliation/2026-02-27", "reconciliation/2026-02-28"))
    }
    _store(signed, {k: v for k, v in files.items() if k not in last_three})
    outcome = pack.write_pack(*_packing(signed), FEBRUARY, today=date(2026, 3, 1))
    assert outcome.key is None
    assert outcome.problems == [f"reconciliation/2026-02-{d}/: no report for this night" for d in (26, 27, 28)]
    _store(signed, last_three)
    capsys.readouterr()
    assert reports.main(["pack", "--month", FEBRUARY]) == 0
    assert reports.main(["pack", "--month", FEBRUARY]) == 2  # write-once
    assert reports.main(["verify-pack", "--month", FEBRUARY]) == 0
    members = pack.read_pack(_get(signed, pack_key(FEBRUARY)))
    assert {"verification.json", "findings-opened.csv", "manifest.json", "manifest.sig"} <= set(members)
    _, _, signatures = _packing(signed)
    key_arn = signatures.key_arn(signed.settings.run.report_signing_key)
    forged = dict(members)
    forged[next(k for k in members if k.endswith("20260210T020000Z-9/summary.json"))] += b" "
    assert any("does not match the manifest" in p for p in pack.check_pack(forged, signatures, key_arn)[1])
    # Its last night removed from the archive (and the manifest re-signed by the stack's key): named.
    gone = {k: v for k, v in members.items() if "2026-02-28" not in k}
    assert "reconciliation/2026-02-28/: no report for this night" in pack.check_pack(gone, signatures, key_arn)[1]
