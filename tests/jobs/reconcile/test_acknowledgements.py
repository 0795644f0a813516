"""Acknowledgements are scoped (issue 44): one life of a finding, until it resolves or an expiry
date, with the caller's AWS identity beside the typed name. The ledger rules are pure; the CLI
runs against the local stack (moto answers STS).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest
from test_ledger_coverage import NIGHT1, STRAY, frame, rows, summary
from test_reconcile_live import _seed_and_ingest

from jobs.reconcile import cli
from jobs.reconcile.chain import ledger as ledgers
from jobs.reconcile.chain.coverage import Coverage
from jobs.reconcile.chain.ledger import ACKNOWLEDGEMENTS_PREFIX, Acknowledgement, CallerIdentity
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.run import ReconcileRun

KEY = "BAD_KEYnotes/stray.txt"


def _ack(first_seen: datetime | None, at: datetime, expires: datetime | None = None) -> Acknowledgement:
    stray = frame(STRAY).get_column("findingId")[0]
    return Acknowledgement(
        findingId=stray,
        code="BAD_KEY",
        userId=None,
        documentId=None,
        by="Ada",
        reason="known",
        at=at,
        firstSeen=first_seen,
        expiresAt=expires,
        caller=CallerIdentity(arn="arn:aws:iam::123456789012:user/ada", account="123456789012", userId="AIDA"),
    )


def _nights(found: list[bool], acks: list[Acknowledgement]) -> list[dict[str, object]]:
    """The stray finding's ledger row each night (found or not); None when it is not listed."""
    ledger, out = None, []
    for n, present in enumerate(found, start=1):
        now = NIGHT1 + timedelta(days=n - 1)
        ledger = ledgers.carry(frame(STRAY) if present else frame(), ledger, acks, now, [], Coverage.of(summary()))
        out.append(rows(ledger).get(KEY, {}))
    return out


def test_an_acknowledgement_ends_with_the_life_it_accepted_a_recurrence_is_new() -> None:
    ack = _ack(NIGHT1, NIGHT1 + timedelta(hours=2))
    one, two, gone, back = _nights([True, True, False, True], [ack])
    assert one["state"] == "acknowledged" and two["state"] == "acknowledged"
    assert two["acknowledgedCaller"] == "arn:aws:iam::123456789012:user/ada"
    assert gone["state"] == "resolved"
    assert back["state"] == "new" and back["acknowledgedBy"] is None and back["nightsOpen"] == 1


def test_a_record_from_before_lives_covers_the_life_open_when_it_was_made_only() -> None:
    old = _ack(None, NIGHT1 + timedelta(hours=2))  # the old format: no firstSeen
    one, two, _, back = _nights([True, True, False, True], [old])
    # Night 1 ran before the record was made; from night 2 it covers that life, not a recurrence.
    assert one["state"] == "new" and two["state"] == "acknowledged" and back["state"] == "new"


def test_a_record_from_before_lives_dated_in_the_future_applies_to_nothing() -> None:
    """An old-format record covers lives first seen before its `at`: one dated a year ahead
    (forged, or a clock gone wrong) would have acknowledged every life begun before then,
    recurrences included. It applies only once its `at` is not in the future.
    """
    ahead = _ack(None, NIGHT1 + timedelta(days=365))
    one, two, _, back = _nights([True, True, False, True], [ahead])
    assert [n["state"] for n in (one, two, back)] == ["new", "open", "new"]
    assert all(n["acknowledgedBy"] is None for n in (one, two, back))
    assert not ahead.applies(NIGHT1, NIGHT1 + timedelta(days=3))
    assert ahead.applies(NIGHT1, NIGHT1 + timedelta(days=365))  # its day came: the old rule


def test_an_acknowledgement_lapses_at_its_expiry() -> None:
    ack = _ack(NIGHT1, NIGHT1 + timedelta(hours=2), expires=NIGHT1 + timedelta(days=2))
    one, two, three = _nights([True, True, True], [ack])
    assert one["state"] == two["state"] == "acknowledged" and two["acknowledgedUntil"] == NIGHT1 + timedelta(days=2)
    assert three["state"] == "open" and three["acknowledgedBy"] is None and three["nightsOpen"] == 3


def test_the_cli_records_the_callers_identity_refuses_a_second_and_a_past_expiry(stack, corpus, capsys) -> None:
    _seed_and_ingest(stack, corpus)
    s, s3 = stack.settings, stack.s3()
    s3.put_object(Bucket=s.store.raw_bucket, Key="notes/stray.txt", Body=b"x")

    def night() -> None:
        ReconcileRun(s, LivePlan(grace=timedelta(0))).execute()

    night()
    stray = ledgers.finding_id("BAD_KEY", None, None, s.store.raw_bucket, "notes/stray.txt", None, None)
    args = ["acknowledge", "--finding", stray, "--by", "Ada Auditor", "--reason", "known"]
    assert cli.main([*args, "--expires", f"{date.today() - timedelta(days=1)}"]) == 2
    assert "must be a day after today" in capsys.readouterr().err
    assert cli.main([*args, "--expires", f"{datetime.now(UTC).date() + timedelta(days=30)}"]) == 0
    assert cli.main(args) == 2 and "acknowledged already" in capsys.readouterr().err
    (key,) = stack.keys(s.store.reports_bucket, ACKNOWLEDGEMENTS_PREFIX)
    record = json.loads(s3.get_object(Bucket=s.store.reports_bucket, Key=key)["Body"].read())
    assert record["caller"]["arn"].startswith("arn:aws:") and record["caller"]["account"]
    assert record["by"] == "Ada Auditor" and record["firstSeen"] and record["expiresAt"]

    # The stray removed, a night resolves it; uploaded again, it is new and unacknowledged.
    s3.delete_object(Bucket=s.store.raw_bucket, Key="notes/stray.txt")
    night()
    s3.put_object(Bucket=s.store.raw_bucket, Key="notes/stray.txt", Body=b"x")
    night()
    newest = ReconcileRun(s, LivePlan(grace=timedelta(0))).execute().summary
    assert newest.changes["open"] == 1 and newest.changes["acknowledged"] == 0
    assert cli.main(args) == 0  # the new life may be acknowledged on its own


@pytest.mark.parametrize("by", ["", "  "])
def test_an_empty_name_is_refused(by: str) -> None:
    from jobs.errors import ReconcileInputError
    from jobs.reconcile.acknowledge import acknowledge

    with pytest.raises(ReconcileInputError):
        acknowledge(None, "bucket", "f", by, "reason", None)  # type: ignore[arg-type]  # refused before any read
