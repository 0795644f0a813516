"""Reconcile against the live local stack: one discrepancy of every kind, files, repair, reports."""

from __future__ import annotations

import functools
import hashlib
import json
import operator
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.httpsession import URLLib3Session
from polars.testing import assert_frame_equal
from reconcile_helpers import export_changes, export_state, s3_location, scan

from jobs.contract import DocumentItem, ResultDocument, Status, layout
from jobs.errors import ReconcileInputError, S3ObjectExistsError
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.reconcile import cli
from jobs.reconcile.inputs.export import export_manifest
from jobs.reconcile.plans import FilesPlan, LivePlan, Plan
from jobs.reconcile.report.written import SUMMARY_FILE, ReconcileSummary, sha256
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.run import ReconcileRun
from jobs.store.clients import s3_client
from jobs.store.dynamo_wire import from_wire, to_wire
from jobs.store.s3 import Buckets

NOW = timedelta(0)
KEY_COLUMNS = ["code", "userId", "documentId", "bucket", "key"]


def _seed_and_ingest(stack, corpus: Path) -> dict[str, str]:
    """Eight UBL invoices for two users, ingested; returns documentId -> raw key."""
    s3 = stack.s3()
    keys = {}
    for i, path in enumerate(sorted((corpus / "einvoice" / "ubl").glob("*.xml"))):
        key = layout.raw_key(f"u{i % 2}", f"d{i}", path.name)
        s3.put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=path.read_bytes())
        keys[f"d{i}"] = key
    IngestRun(stack.settings, BackfillPlan()).execute()
    return keys


def _item(stack, user: str, doc: str) -> DocumentItem:
    raw = stack.dynamodb().get_item(
        TableName=stack.settings.store.table_name,
        Key=to_wire({layout.PK_ATTR: layout.user_pk(user), layout.SK_ATTR: layout.document_sk(doc)}),
    )["Item"]
    return DocumentItem.from_item(from_wire(raw))


def _put(stack, item: dict) -> None:
    stack.dynamodb().put_item(TableName=stack.settings.store.table_name, Item=to_wire(item))


def _inject(stack, keys: dict[str, str]) -> list[tuple[str, str | None, str | None, str, str | None]]:
    """One discrepancy of every kind; returns the findings (code, user, doc, bucket, key) expected."""
    s, s3 = stack.settings, stack.s3()
    raw_b, proc_b = s.store.raw_bucket, s.store.processed_bucket
    for doc in ("d1", "d2", "d3", "d4", "d5", "d6", "d7"):
        user = f"u{int(doc[1:]) % 2}"
        assert _item(stack, user, doc).status in (Status.PROCESSED, Status.REVIEW_REQUIRED), doc
    # ORPHAN_RESULT (+ the raw object it names, with no item: UNPROCESSED_RAW until repaired).
    original = ResultDocument.from_json_bytes(
        s3.get_object(Bucket=proc_b, Key=layout.result_key("u0", "d0"))["Body"].read()
    )
    orphan_raw = layout.raw_key("u9", "orphan1", "invoice.xml")
    s3.copy_object(Bucket=raw_b, Key=orphan_raw, CopySource={"Bucket": raw_b, "Key": keys["d0"]})
    orphan = original.model_copy(
        update={
            "userId": "u9",
            "documentId": "orphan1",
            "source": original.source.model_copy(update={"key": orphan_raw}),
        }
    )
    s3.put_object(Bucket=proc_b, Key=layout.result_key("u9", "orphan1"), Body=orphan.to_json_bytes())
    # MISSING_RESULT: d1's result.json is gone.
    s3.delete_object(Bucket=proc_b, Key=layout.result_key("u1", "d1"))
    # UNPROCESSED_RAW: a new upload no run has seen.
    new_raw = layout.raw_key("u1", "new1", "invoice.xml")
    s3.put_object(Bucket=raw_b, Key=new_raw, Body=b"<Invoice/>")
    # MISSING_RAW: d2's raw object is gone.
    s3.delete_object(Bucket=raw_b, Key=keys["d2"])
    # STALE_RESULT: d3's raw object was replaced after processing.
    s3.put_object(Bucket=raw_b, Key=keys["d3"], Body=b"<Invoice>changed</Invoice>")
    # STUCK_PROCESSING: d4's claim died a day ago.
    d4 = _item(stack, "u0", "d4")
    stuck = d4.model_copy(
        update={
            "status": Status.PROCESSING,
            "leaseOwner": "dead-host:1:run",
            "leaseExpiresAt": layout.utc_now() - timedelta(days=1),
            "version": d4.version + 1,
        }
    )
    _put(stack, stuck.to_item())
    # INDEX_DRIFT: d5's index key says FAILED.
    d5 = _item(stack, "u1", "d5").to_item()
    _put(stack, {**d5, layout.GSI1_PK_ATTR: layout.status_pk(Status.FAILED)})
    # KEY_MISMATCH: d6 points at d7's result.json.
    d6 = _item(stack, "u0", "d6")
    _put(stack, d6.model_copy(update={"resultS3Uri": layout.s3_uri(proc_b, layout.result_key("u1", "d7"))}).to_item())
    # SUMMARY_MISMATCH (--deep): d7's vendor differs from its result.json.
    d7 = _item(stack, "u1", "d7")
    _put(stack, d7.model_copy(update={"vendorName": "Someone Else GmbH"}).to_item())
    # BAD_KEY: objects outside the layout, one per bucket.
    s3.put_object(Bucket=raw_b, Key="notes/readme.txt", Body=b"x")
    bad_result = layout.result_key("u1", "d7").rsplit("/", 1)[0] + "/extra.json"
    s3.put_object(Bucket=proc_b, Key=bad_result, Body=b"{}")
    return [
        (Code.BAD_KEY, None, None, proc_b, bad_result),
        (Code.BAD_KEY, None, None, raw_b, "notes/readme.txt"),
        (Code.INDEX_DRIFT, "u1", "d5", None, None),
        (Code.KEY_MISMATCH, "u0", "d6", None, None),
        (Code.MISSING_RAW, "u0", "d2", raw_b, keys["d2"]),
        (Code.MISSING_RESULT, "u1", "d1", proc_b, layout.result_key("u1", "d1")),
        (Code.ORPHAN_RESULT, "u9", "orphan1", proc_b, layout.result_key("u9", "orphan1")),
        (Code.STALE_RESULT, "u1", "d3", raw_b, keys["d3"]),
        (Code.STUCK_PROCESSING, "u0", "d4", None, None),
        (Code.UNPROCESSED_RAW, "u1", "new1", raw_b, new_raw),
        (Code.UNPROCESSED_RAW, "u9", "orphan1", raw_b, orphan_raw),
    ]


def _frame(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(
        [(str(r[0]), *r[1:]) for r in rows], schema=dict.fromkeys(KEY_COLUMNS, pl.String), orient="row"
    ).sort(KEY_COLUMNS, nulls_last=True)


def _keys(findings: pl.DataFrame) -> pl.DataFrame:
    return findings.select(KEY_COLUMNS).sort(KEY_COLUMNS, nulls_last=True)


def _run(stack, plan: type[Plan] = LivePlan, **options) -> tuple:
    options.setdefault("grace", NOW)
    outcome = ReconcileRun(stack.settings, plan(**options)).execute()
    return outcome.summary, outcome.findings, outcome.exit_code


def test_every_discrepancy_is_found_live_and_from_files_and_repair_leaves_only_unfixable(
    stack, corpus, tmp_path
) -> None:
    keys = _seed_and_ingest(stack, corpus)
    summary, clean, code = _run(stack)
    assert clean.height == 0 and code == 0, clean
    expected = _inject(stack, keys)

    summary, live, code = _run(stack)
    assert code == 1
    assert_frame_equal(_keys(live), _frame(expected))
    assert summary.counts[Code.UNPROCESSED_RAW] == 2 and summary.counts[Code.SUMMARY_MISMATCH] == 0
    stale = live.filter(pl.col("code") == Code.STALE_RESULT).row(0, named=True)
    evidence = json.loads(stale["evidence"])
    assert evidence["itemEtag"] != evidence["objectEtag"]
    mismatch = json.loads(live.filter(pl.col("code") == Code.KEY_MISMATCH).row(0, named=True)["evidence"])
    assert mismatch["problems"] == "resultS3Uri does not name this document's result.json"

    # --deep adds the summary mismatch, nothing else.
    _, deep, _ = _run(stack, deep=True, write_report=False)
    assert_frame_equal(
        _keys(deep),
        _frame(
            [
                *expected,
                (
                    Code.SUMMARY_MISMATCH,
                    "u1",
                    "d7",
                    stack.settings.store.processed_bucket,
                    layout.result_key("u1", "d7"),
                ),
            ]
        ),
    )
    fields = json.loads(deep.filter(pl.col("code") == Code.SUMMARY_MISMATCH).row(0, named=True)["evidence"])["fields"]
    assert fields == "vendorName"

    # The same state exported to files (CSV and Parquet inventories, local and in S3) gives the
    # same findings.
    for fmt in ("CSV", "Parquet"):
        local = export_state(stack, tmp_path / fmt, fmt)
        for exported in (local, local.in_s3(stack, tmp_path / fmt) if fmt == "CSV" else local):
            for engine in ("polars", "duckdb"):  # duckdb: the Athena engine's SQL, run locally
                _, from_files, _ = _run(
                    stack,
                    FilesPlan,
                    engine=engine,
                    dynamodb_export=exported.export,
                    s3_inventories=tuple(exported.manifests),
                    write_report=False,
                )
                assert_frame_equal(from_files, live)

    # Repair fixes what it safely can; the next run shows only what repair leaves by design.
    summary, _, _ = _run(stack, repair=True)
    outcomes = {(r.code, r.documentId): r.outcome for r in summary.repairs}
    assert outcomes == {
        (Code.ORPHAN_RESULT, "orphan1"): "applied",
        (Code.MISSING_RESULT, "d1"): "applied",
        (Code.STUCK_PROCESSING, "d4"): "applied",
        (Code.INDEX_DRIFT, "d5"): "applied",
        (Code.MISSING_RAW, "d2"): "applied",  # the DELETED tombstone
        # Re-queued for the next drain (orphan1's raw object too: no item tracks it until then).
        (Code.UNPROCESSED_RAW, "new1"): "applied",
        (Code.UNPROCESSED_RAW, "orphan1"): "applied",
    }
    _, after, code = _run(stack)
    unfixable = [e for e in expected if e[0] in (Code.STALE_RESULT, Code.KEY_MISMATCH, Code.BAD_KEY)]
    # Re-queued, not yet drained: still reported until the next ingest has processed it.
    unfixable.append(
        (
            Code.UNPROCESSED_RAW,
            "u1",
            "new1",
            stack.settings.store.raw_bucket,
            layout.raw_key("u1", "new1", "invoice.xml"),
        )
    )
    assert_frame_equal(_keys(after), _frame(unfixable))
    # The items marked for reprocessing are what the next ingest re-claims.
    for user, doc in (("u1", "d1"), ("u0", "d4")):
        item = _item(stack, user, doc)
        assert (item.status, item.failureCode, item.attempts) == (Status.FAILED, "INTERNAL", 0)
    IngestRun(stack.settings, BackfillPlan()).execute()
    assert _item(stack, "u1", "d1").status == Status.PROCESSED
    assert _item(stack, "u0", "d4").status == Status.PROCESSED


def test_a_table_state_kept_in_s3_and_brought_forward_finds_what_the_live_run_finds(stack, corpus, tmp_path) -> None:
    """Night 0 keeps the table in S3; the discrepancies happen; night 1 reads that state plus an
    incremental export of the changes (new, changed and deleted items) and keeps its own.
    """
    keys = _seed_and_ingest(stack, corpus)
    before = scan(stack)
    root = f"s3://{stack.settings.store.reports_bucket}/table-state"
    local0 = export_state(stack, tmp_path / "n0", "Parquet")
    since = export_manifest(local0.export, None).export_time  # the changes start exactly at the state's time
    night0 = local0.in_s3(stack, tmp_path / "n0")
    _, _, code = _run(
        stack,
        FilesPlan,
        dynamodb_export=night0.export,
        s3_inventories=tuple(night0.manifests),
        write_table_state=f"{root}/n0/",
        write_report=False,
    )
    assert code == 0
    expected = _inject(stack, keys)
    stack.dynamodb().delete_item(
        TableName=stack.settings.store.table_name,
        Key=to_wire({layout.PK_ATTR: layout.user_pk("u1"), layout.SK_ATTR: layout.document_sk("d7")}),
    )
    expected.append(
        (Code.ORPHAN_RESULT, "u1", "d7", stack.settings.store.processed_bucket, layout.result_key("u1", "d7"))
    )
    expected.append((Code.UNPROCESSED_RAW, "u1", "d7", stack.settings.store.raw_bucket, keys["d7"]))
    # The item went behind the jobs' back: the duplicate markers it held are left without it.
    left = [m for m in stack.markers() if (m.userId, m.documentId) == ("u1", "d7")]
    assert left, "d7 held its duplicate markers"
    expected += [(Code.ORPHAN_MARKER, "u1", "d7", None, None) for _ in left]
    changes = export_changes(stack, tmp_path / "n1", before, since)
    night1 = export_state(stack, tmp_path / "n1", "Parquet").in_s3(stack, tmp_path / "n1")
    summary, live, _ = _run(stack, write_report=False)
    assert_frame_equal(_keys(live), _frame(expected))
    summary, forward, code = _run(
        stack,
        FilesPlan,
        table_state=f"{root}/n0/",
        dynamodb_export=s3_location(tmp_path / "n1", changes),
        s3_inventories=tuple(night1.manifests),
        write_table_state=f"{root}/n1/",
        write_report=False,
    )
    assert code == 1
    assert_frame_equal(forward, live)
    assert summary.inputs["table"] == f"{root}/n0 + {s3_location(tmp_path / 'n1', changes)}"
    kept = json.loads(
        stack.s3()
        .get_object(Bucket=stack.settings.store.reports_bucket, Key="table-state/n1/table-state.json")["Body"]
        .read()
    )
    assert kept["itemCount"] == len(scan(stack))
    # Written once, in S3 too: a second run to the same location is refused before it reads.
    with pytest.raises(ReconcileInputError, match="written once"):
        _run(
            stack,
            FilesPlan,
            table_state=f"{root}/n0/",
            dynamodb_export=s3_location(tmp_path / "n1", changes),
            s3_inventories=tuple(night1.manifests),
            write_table_state=f"{root}/n1/",
            write_report=False,
        )


def _lose_each_first_response(client, operation: str) -> list[str]:
    """Every `operation` request's first attempt reaches the server and is applied, then its
    response is lost (a read timeout): botocore resends it, as it would on AWS.
    """
    session, lost = URLLib3Session(), []

    def hook(request, **_kwargs) -> None:
        if request.url not in lost:
            lost.append(request.url)
            session.send(request)
            raise ReadTimeoutError(endpoint_url=request.url)

    client.meta.events.register(f"before-send.s3.{operation}", hook)
    return lost


def test_write_once_puts_whose_responses_were_lost_are_the_runs_own_writes(stack, corpus, tmp_path) -> None:
    """Every write-once put of a run (the table state's data files and table-state.json, the
    report's files and summary.json) is applied and its response lost: botocore's resend meets
    the run's own bytes (412), which is a success, not someone else's state or report.
    """
    _seed_and_ingest(stack, corpus)
    state = export_state(stack, tmp_path, "Parquet").in_s3(stack, tmp_path)
    location = f"s3://{stack.settings.store.reports_bucket}/table-state/lost/"
    options = FilesPlan(
        dynamodb_export=state.export,
        s3_inventories=tuple(state.manifests),
        write_table_state=location,
        grace=NOW,
    )
    run = ReconcileRun(stack.settings, options)
    client = s3_client(stack.settings)
    lost = _lose_each_first_response(client, "PutObject")
    run.buckets = Buckets(client, CallMetrics())  # type: ignore[misc]
    summary = run.execute().summary
    written = stack.keys(stack.settings.store.reports_bucket, "table-state/lost/") + stack.keys(
        stack.settings.store.reports_bucket, summary.reportPrefix
    )
    assert {k.rsplit("/", 1)[-1] for k in written} >= {"table-state.json", "summary.json", "findings.parquet"}
    assert len(lost) == len(written)  # every write lost its first response
    kept = json.loads(
        stack.s3()
        .get_object(Bucket=stack.settings.store.reports_bucket, Key="table-state/lost/table-state.json")["Body"]
        .read()
    )
    assert kept["itemCount"] == summary.itemCount == len(scan(stack))


def test_report_is_complete_checksummed_and_never_overwritten(stack, corpus) -> None:
    _seed_and_ingest(stack, corpus)
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key="stray.bin", Body=b"x")
    run = ReconcileRun(stack.settings, LivePlan(grace=NOW), run_id="20260101T000000Z-fixed")
    first = run.execute().summary
    s3 = stack.s3()
    bucket = stack.settings.store.reports_bucket
    for name, digest in first.files.items():
        assert sha256(s3.get_object(Bucket=bucket, Key=first.reportPrefix + name)["Body"].read()) == digest
    stored = ReconcileSummary.model_validate_json(
        s3.get_object(Bucket=bucket, Key=first.reportPrefix + SUMMARY_FILE)["Body"].read()
    )
    assert stored.counts[Code.BAD_KEY] == 1 and stored.snapshotTimes and stored.files == first.files
    html = s3.get_object(Bucket=bucket, Key=first.reportPrefix + "report.html")["Body"].read().decode()
    assert "BAD_KEY" in html and "<svg" not in html  # no history yet
    parquet = pl.read_parquet(s3.get_object(Bucket=bucket, Key=first.reportPrefix + "findings.parquet")["Body"].read())
    assert parquet.get_column("code").to_list() == ["BAD_KEY"]

    # Same run id again (e.g. a retried task): refused, the first report untouched.
    with pytest.raises(S3ObjectExistsError):
        ReconcileRun(stack.settings, LivePlan(grace=NOW), run_id="20260101T000000Z-fixed").execute()
    again = s3.get_object(Bucket=bucket, Key=first.reportPrefix + SUMMARY_FILE)["Body"].read()
    assert ReconcileSummary.model_validate_json(again) == stored

    # A later run charts the history of earlier ones; reproducible findings files.
    second = ReconcileRun(stack.settings, LivePlan(grace=NOW)).execute().summary
    html2 = s3.get_object(Bucket=bucket, Key=second.reportPrefix + "report.html")["Body"].read().decode()
    assert "<svg" in html2 and first.runId in html2
    assert second.files["findings.parquet"] == first.files["findings.parquet"]
    # findings.csv carries each finding's life from the ledger: the same finding, a night older.
    csv2 = s3.get_object(Bucket=bucket, Key=second.reportPrefix + "findings.csv")["Body"].read().decode()
    assert csv2.splitlines()[0].startswith("findingId,state,firstSeen,nightsOpen,") and ",open," in csv2


def test_cli_exit_codes_grace_and_bad_files(stack, tmp_path, capsys) -> None:
    s3 = stack.s3()
    assert cli.main(["live", "--no-report"]) == 0
    # A fresh upload is within the default 15-minute grace period: not judged yet.
    s3.put_object(Bucket=stack.settings.store.raw_bucket, Key=layout.raw_key("u1", "fresh", "a.xml"), Body=b"x")
    assert cli.main(["live", "--no-report"]) == 0
    assert cli.main(["live", "--no-report", "--grace", "0s", "--fail-on", "error"]) == 0  # a warning only
    assert cli.main(["live", "--grace", "0s", "--fail-on", "warning"]) == 1
    assert "UNPROCESSED_RAW" in capsys.readouterr().out

    exported = export_state(stack, tmp_path / "ok")
    assert cli.main([*exported.argv(), "--no-report", "--grace", "0s", "--fail-on", "warning"]) == 1
    # Bad inputs: a clear message and exit 2.
    broken = tmp_path / "ok" / f"{stack.settings.stage}-exports" / "broken"
    broken.mkdir()
    (broken / "manifest-summary.json").write_text("{not json")
    cases = {
        "is not JSON": [
            "files",
            "--dynamodb-export",
            str(broken),
            *functools.reduce(operator.iadd, (["--s3-inventory", m] for m in exported.manifests), []),
        ],
        "no --s3-inventory manifest": [
            "files",
            "--dynamodb-export",
            exported.export,
            "--s3-inventory",
            exported.manifests[1],
        ],
        "cannot read": [
            "files",
            "--dynamodb-export",
            str(tmp_path / "missing"),
            *functools.reduce(operator.iadd, (["--s3-inventory", m] for m in exported.manifests), []),
        ],
    }
    data_file = next((Path(exported.manifests[0]).parent.parent / "data").glob("*.csv.gz"))
    data_file.write_bytes(b"\x1f\x8bnot really gzip")
    manifest = json.loads(Path(exported.manifests[0]).read_text())  # a manifest that agrees with it
    manifest["files"][0].update(
        size=data_file.stat().st_size, MD5checksum=hashlib.md5(data_file.read_bytes()).hexdigest()
    )
    Path(exported.manifests[0]).write_text(json.dumps(manifest))
    cases["not valid gzip"] = exported.argv()
    for fragment, argv in cases.items():
        capsys.readouterr()
        assert cli.main([*argv, "--no-report"]) == 2, fragment
        assert fragment in capsys.readouterr().err, fragment
    assert cli.main(["files"]) == 2  # files without files: an option error


def test_unreachable_stack_is_exit_3(stack, monkeypatch, capsys) -> None:
    """AWS unreachable is 3 in every job (jobs.errors.ExitCode), the reconcile included."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")
    monkeypatch.setenv("DOCUFLOW_RETRY_ATTEMPTS", "1")
    assert cli.main(["live", "--no-report"]) == 3
    assert "error:" in capsys.readouterr().err
