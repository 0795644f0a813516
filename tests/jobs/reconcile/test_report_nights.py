"""Three nights on the live local stack: a report that explains itself, and findings with a life.

Night 1 finds three planted faults; night 2 repairs one of them (INDEX_DRIFT) and a person
acknowledges another; night 3 shows the repaired one resolved with its repair, the one left
open for three nights, and the acknowledged one with who and why.
"""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo

import polars as pl
from test_reconcile_live import _item, _put, _seed_and_ingest

from jobs.contract import Status, layout
from jobs.reconcile import cli
from jobs.reconcile.chain.ledger import LEDGER_FILE, finding_id
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.report.written import ReconcileSummary
from jobs.reconcile.rules.findings import DEFINITIONS, Code
from jobs.reconcile.run import ReconcileRun


def _night(stack, n: int, **options) -> ReconcileSummary:
    run = ReconcileRun(stack.settings, LivePlan(grace=timedelta(0), **options), run_id=f"20260101T00000{n}Z-n{n}")
    return run.execute().summary


def _get(stack, key: str) -> bytes:
    return stack.s3().get_object(Bucket=stack.settings.store.reports_bucket, Key=key)["Body"].read()


def test_three_nights_resolved_open_and_acknowledged(stack, corpus, capsys) -> None:
    _seed_and_ingest(stack, corpus)
    s, s3 = stack.settings, stack.s3()
    d5 = _item(stack, "u1", "d5").to_item()
    _put(stack, {**d5, layout.GSI1_PK_ATTR: layout.status_pk(Status.FAILED)})  # INDEX_DRIFT: repaired on night 2
    s3.put_object(Bucket=s.store.raw_bucket, Key="notes/left-open.txt", Body=b"x")  # BAD_KEY: left open
    s3.put_object(Bucket=s.store.raw_bucket, Key="notes/accepted.txt", Body=b"x")  # BAD_KEY: acknowledged
    drift = finding_id(Code.INDEX_DRIFT, "u1", "d5", None, None, layout.user_pk("u1"), layout.document_sk("d5"))
    left_open = finding_id(Code.BAD_KEY, None, None, s.store.raw_bucket, "notes/left-open.txt", None, None)
    accepted = finding_id(Code.BAD_KEY, None, None, s.store.raw_bucket, "notes/accepted.txt", None, None)

    first = _night(stack, 1)
    assert first.changes == {"new": 3, "open": 0, "acknowledged": 0, "resolved": 0, "unchecked": 0}
    html = _get(stack, first.reportPrefix + "report.html").decode()
    assert "3 findings: 1 error, 2 warnings." in html
    for code in (Code.INDEX_DRIFT, Code.BAD_KEY):  # each code present explained from its definition
        assert DEFINITIONS[code].remedy.replace("`", "&#96;") in html or DEFINITIONS[code].remedy in html
    assert DEFINITIONS[Code.ORPHAN_RESULT].meaning not in html  # codes not found are not explained
    assert "<dt>reason</dt>" in html and '{"reason"' not in html  # evidence as fields, not JSON
    assert s.store.table_name in html and s.store.raw_bucket in html and "grace window" in html
    assert _get(stack, first.reportPrefix + "report.pdf").startswith(b"%PDF-")

    second = _night(stack, 2, repair=True)
    assert second.changes == {"new": 0, "open": 3, "acknowledged": 0, "resolved": 0, "unchecked": 0}
    assert cli.main(["acknowledge", "--finding", accepted, "--by", "Ada Auditor", "--reason", "test fixture"]) == 0
    assert cli.main(["acknowledge", "--finding", accepted, "--by", "Eve", "--reason", "again"]) == 2  # write-once
    assert cli.main(["acknowledge", "--finding", "0" * 20, "--by", "Eve", "--reason", "no such"]) == 2

    third = _night(stack, 3)
    assert third.changes == {"new": 0, "open": 1, "acknowledged": 1, "resolved": 1, "unchecked": 0}
    ledger = pl.read_parquet(_get(stack, third.reportPrefix + LEDGER_FILE))
    rows = {r["findingId"]: r for r in ledger.iter_rows(named=True)}
    assert rows[drift]["state"] == "resolved" and rows[drift]["resolution"].startswith("repaired: rewrite item")
    assert rows[left_open]["state"] == "open" and rows[left_open]["nightsOpen"] == 3
    assert rows[left_open]["firstSeen"] == first.startedAt.replace(
        microsecond=first.startedAt.microsecond // 1000 * 1000
    )
    assert rows[accepted]["state"] == "acknowledged" and rows[accepted]["acknowledgedBy"] == "Ada Auditor"
    assert rows[accepted]["acknowledgedCaller"].startswith("arn:aws:")  # the caller's AWS identity beside the name
    html = _get(stack, third.reportPrefix + "report.html").decode()
    assert "Ada Auditor" in html and "test fixture" in html and "repaired: rewrite item" in html
    assert "open 3 nights" in html and "<svg" in html and "<script" not in html
    assert third.files[LEDGER_FILE] and third.files["report.pdf"]


def test_the_chain_of_signed_reports_verifies_and_names_what_breaks_it(stack, corpus, monkeypatch, capsys) -> None:
    from jobs.local.stack import bootstrap_endpoints
    from jobs.observability import CallMetrics
    from jobs.reconcile.report.provenance import ENV_SIGNING_KEY, SIGNATURE_FILE
    from jobs.reports import cli as reports
    from jobs.reports.pack import month_nights, write_pack
    from jobs.store.kms import Signatures, kms_client
    from jobs.store.s3 import Buckets

    signatures = Signatures(kms_client(stack.settings), CallMetrics())
    stack.settings = bootstrap_endpoints(stack.endpoints, stack.settings, signing=True)  # as `local up` does
    key = stack.settings.run.report_signing_key
    monkeypatch.setenv(ENV_SIGNING_KEY, key)  # the CLIs below read it, as the task definition sets it
    _seed_and_ingest(stack, corpus)
    s, s3, bucket = stack.settings, stack.s3(), stack.settings.store.reports_bucket
    s3.put_object(Bucket=s.store.raw_bucket, Key="notes/left-open.txt", Body=b"x")
    nights = [_night(stack, n) for n in (1, 2, 3)]
    stored = ReconcileSummary.model_validate_json(_get(stack, nights[2].reportPrefix + "summary.json"))
    assert stored.previousSummary == nights[1].reportPrefix + "summary.json"
    assert {"settingsDigest", "stack", "gitCommit"} <= set(stored.provenance)
    assert _get(stack, nights[2].reportPrefix + SIGNATURE_FILE)
    capsys.readouterr()

    assert reports.main(["verify"]) == 0
    assert "OK: 3 reports checked" in capsys.readouterr().out

    # The month's pack, once the month has ended, verifies on its own; a member changed inside it
    # does not (the month is not over yet: the pack is made as if on the next month's first day).
    month = f"{nights[0].startedAt:%Y-%m}"
    assert reports.main(["pack", "--month", month]) == 2  # not ended: refused
    after = date.fromordinal(month_nights(month, ZoneInfo("UTC")).until.toordinal() + 1)  # type: ignore[union-attr]
    outcome = write_pack(Buckets(s3, CallMetrics()), s, signatures, month, today=after)
    assert outcome.key is None and all("no report for this night" in p for p in outcome.problems)
    capsys.readouterr()

    # A forged summary under a fourth night's prefix: named, exit 1.
    forged_prefix = nights[2].reportPrefix.replace("-n3/", "-n4/").replace("03Z-", "04Z-")
    forged = stored.model_copy(update={"totalFindings": 0, "reportPrefix": forged_prefix})
    s3.put_object(Bucket=bucket, Key=forged_prefix + "summary.json", Body=forged.model_dump_json().encode())
    assert reports.main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"PROBLEM {forged_prefix}summary.json: unsigned" in out
    assert f"{forged_prefix}summary.json: out of chain" in out
    s3.delete_object(Bucket=bucket, Key=forged_prefix + "summary.json")

    # A night removed from the chain: the next night names it.
    s3.delete_object(Bucket=bucket, Key=nights[1].reportPrefix + "summary.json")
    assert reports.main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"{nights[1].reportPrefix}summary.json is missing (removed from the chain)" in out


def test_a_written_report_is_announced_in_a_few_readable_lines(stack, corpus) -> None:
    import json

    import boto3

    sns, sqs = boto3.client("sns"), boto3.client("sqs")
    topic = sns.create_topic(Name="reports-notice")["TopicArn"]
    queue = sqs.create_queue(QueueName="reports-notice")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    stack.settings = stack.settings.changed(reports_topic_arn=topic)
    _seed_and_ingest(stack, corpus)
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key="notes/stray.txt", Body=b"x")
    summary = _night(stack, 1)
    (received,) = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=2)["Messages"]
    notice = json.loads(received["Body"])
    assert notice["Subject"] == f"DocuFlow reconcile {summary.startedAt:%Y-%m-%d}: 1 finding: 0 errors, 1 warning"
    lines = notice["Message"].splitlines()
    assert lines[0] == "1 finding: 0 errors, 1 warning."
    assert "  BAD_KEY: 1" in lines
    assert f"Report: s3://{stack.settings.store.reports_bucket}/{summary.reportPrefix}report.html" in notice["Message"]
    assert len(notice["Message"]) < 1000
