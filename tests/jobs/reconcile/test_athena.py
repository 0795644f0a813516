"""The athena engine: its adapters (botocore Stubber: Athena and table exports have no emulator) and
its orchestration against the local S3 server, with Athena played by DuckDB running the very
UNLOAD query the engine sends (Glue tables as DuckDB views over the same Parquet files).

What this cannot show, and only an AWS run does: IAM, the Glue SerDes and partition projection.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from botocore.stub import Stubber
from polars.testing import assert_frame_equal
from pydantic import ValidationError

from jobs.errors import ExitCode, ExportNotReadyError, ReconcileInputError, ReconcileQueryError, StoreAccessDeniedError
from jobs.observability import CallMetrics
from jobs.reconcile import cli
from jobs.reconcile.engines.athena import dt_of
from jobs.reconcile.plans import AthenaPlan, FilesPlan
from jobs.reconcile.rules import sql_rules as sql
from jobs.reconcile.run import ReconcileRun
from jobs.settings import JobSettings
from jobs.store.athena import AthenaQueries, QueryOutcome
from jobs.store.clients import athena_client, dynamodb_client
from jobs.store.polling import Polling
from jobs.store.table_export import TableExports, client_token

T = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)


# --- adapters ------------------------------------------------------------------------------------
def _athena(settings) -> tuple[AthenaQueries, Stubber]:
    client = athena_client(settings, region_name="eu-central-1")
    return AthenaQueries(client, "wg", "db", CallMetrics(), polling=Polling(1, 2, sleep=lambda _: None)), Stubber(
        client
    )


def _execution(state: str, reason: str | None = None, scanned: int = 0) -> dict[str, Any]:
    status: dict[str, Any] = {"State": state}
    if reason:
        status["StateChangeReason"] = reason
    return {
        "QueryExecution": {"QueryExecutionId": "q1", "Status": status, "Statistics": {"DataScannedInBytes": scanned}}
    }


def test_a_query_is_started_idempotently_in_the_workgroup_and_awaited() -> None:
    queries, stub = _athena(JobSettings())
    token = "t" * 40
    stub.add_response(
        "start_query_execution",
        {"QueryExecutionId": "q1"},
        {
            "QueryString": "SELECT 1",
            "ClientRequestToken": token,
            "QueryExecutionContext": {"Database": "db"},
            "WorkGroup": "wg",
        },
    )
    stub.add_response("get_query_execution", _execution("RUNNING"), {"QueryExecutionId": "q1"})
    stub.add_response("get_query_execution", _execution("SUCCEEDED", scanned=1234), {"QueryExecutionId": "q1"})
    with stub:
        assert queries.run("SELECT 1", token, "test") == QueryOutcome("q1", 1234, 0.0)
    stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("final", "message"),
    [
        (_execution("FAILED", "Query exhausted resources: Bytes scanned limit was exceeded"), "bytes-scanned cutoff"),
        (_execution("FAILED", "SYNTAX_ERROR: line 1:8: Column 'x' cannot be resolved"), "failed: SYNTAX_ERROR"),
        (_execution("CANCELLED"), "cancelled"),
        (_execution("RUNNING"), "stopped"),
    ],
)
def test_a_query_that_does_not_succeed_is_a_query_error(final: dict[str, Any], message: str) -> None:
    queries, stub = _athena(JobSettings())
    stub.add_response("start_query_execution", {"QueryExecutionId": "q1"})
    for _ in range(3 if final["QueryExecution"]["Status"]["State"] == "RUNNING" else 1):
        stub.add_response("get_query_execution", final)
    if final["QueryExecution"]["Status"]["State"] == "RUNNING":
        stub.add_response("stop_query_execution", {}, {"QueryExecutionId": "q1"})
    with stub, pytest.raises(ReconcileQueryError, match=message):
        queries.run("SELECT 1", "t" * 40, "test")


def test_aws_errors_come_out_as_domain_errors() -> None:
    queries, stub = _athena(JobSettings())
    stub.add_client_error("start_query_execution", "AccessDeniedException", "not allowed in workgroup wg")
    with stub, pytest.raises(StoreAccessDeniedError) as caught:
        queries.run("SELECT 1", "t" * 40, "test")
    assert type(caught.value.__cause__).__name__ == "ClientError"


def test_a_table_export_is_started_for_the_point_in_time_and_awaited() -> None:
    client = dynamodb_client(JobSettings(), region_name="eu-central-1")
    exports = TableExports(client, CallMetrics(), polling=Polling(1, 1, sleep=lambda _: None))
    arn = "arn:aws:dynamodb:eu-central-1:1:table/t/export/01-abc"
    stub = Stubber(client)
    stub.add_response(
        "export_table_to_point_in_time",
        {"ExportDescription": {"ExportArn": arn, "ExportStatus": "IN_PROGRESS"}},
        {
            "TableArn": "arn:table",
            "ExportTime": T,
            "ClientToken": client_token("arn:table", T),
            "S3Bucket": "b",
            "S3Prefix": "exports",
            "ExportFormat": "DYNAMODB_JSON",
            "ExportType": "FULL_EXPORT",
        },
    )
    stub.add_response("describe_export", {"ExportDescription": {"ExportArn": arn, "ExportStatus": "IN_PROGRESS"}})
    done = {
        "ExportArn": arn,
        "ExportStatus": "COMPLETED",
        "S3Bucket": "b",
        "S3Prefix": "exports",
        "ExportTime": T,
        "ItemCount": 3,
        "ExportManifest": "exports/AWSDynamoDB/01-abc/manifest-summary.json",
    }
    stub.add_response("describe_export", {"ExportDescription": done})
    with stub:
        assert exports.start("arn:table", T, "b", "exports/") == arn
        finished = exports.wait(arn)
    assert finished.directory == "s3://b/exports/AWSDynamoDB/01-abc/" and finished.item_count == 3
    assert (
        client_token("arn:table", T)
        == client_token("arn:table", T)
        != client_token("arn:table", T + timedelta(minutes=1))
    )
    stub.add_response(
        "describe_export",
        {"ExportDescription": {**done, "ExportStatus": "FAILED", "FailureCode": "X", "FailureMessage": "PITR off"}},
    )
    stub.add_response("describe_export", {"ExportDescription": {**done, "ExportStatus": "IN_PROGRESS"}})
    stub.add_response("describe_export", {"ExportDescription": {**done, "ExportStatus": "IN_PROGRESS"}})
    with stub:
        with pytest.raises(ExportNotReadyError, match="PITR off"):
            exports.wait(arn)
        with pytest.raises(ExportNotReadyError, match="still IN_PROGRESS"):
            exports.wait(arn)


def test_the_latest_restorable_time_is_read_and_incremental_exports_name_their_window() -> None:
    """Against botocore's Stubber (its model checks the requests): DynamoDB Local serves neither
    DescribeContinuousBackups nor exports (the local stack's stand-in answers them in the nightly
    tests, through the same adapter).
    """
    client = dynamodb_client(JobSettings(), region_name="eu-central-1")
    exports = TableExports(client, CallMetrics(), polling=Polling(1, 1, sleep=lambda _: None))
    stub = Stubber(client)
    recovery = {"PointInTimeRecoveryStatus": "ENABLED", "LatestRestorableDateTime": T}
    stub.add_response(
        "describe_continuous_backups",
        {
            "ContinuousBackupsDescription": {
                "ContinuousBackupsStatus": "ENABLED",
                "PointInTimeRecoveryDescription": recovery,
            }
        },
        {"TableName": "arn:table"},
    )
    start = T - timedelta(days=1)
    stub.add_response(
        "export_table_to_point_in_time",
        {
            "ExportDescription": {
                "ExportArn": "arn:aws:dynamodb:eu-central-1:1:table/t/export/02",
                "ExportStatus": "IN_PROGRESS",
            }
        },
        {
            "TableArn": "arn:table",
            "ClientToken": client_token("arn:table", T, start),
            "S3Bucket": "b",
            "S3Prefix": "exports",
            "ExportFormat": "DYNAMODB_JSON",
            "ExportType": "INCREMENTAL_EXPORT",
            "IncrementalExportSpecification": {
                "ExportFromTime": start,
                "ExportToTime": T,
                "ExportViewType": "NEW_IMAGE",
            },
        },
    )
    done = {
        "ExportArn": "arn:aws:dynamodb:eu-central-1:1:table/t/export/02",
        "ExportStatus": "COMPLETED",
        "S3Bucket": "b",
        "ExportManifest": "exports/AWSDynamoDB/02/manifest-summary.json",
        "ExportType": "INCREMENTAL_EXPORT",
        "IncrementalExportSpecification": {"ExportFromTime": start, "ExportToTime": T},
    }
    stub.add_response("describe_export", {"ExportDescription": done})
    off = {"PointInTimeRecoveryStatus": "DISABLED"}
    stub.add_response(
        "describe_continuous_backups",
        {"ContinuousBackupsDescription": {"ContinuousBackupsStatus": "ENABLED", "PointInTimeRecoveryDescription": off}},
    )
    with stub:
        assert exports.latest_restorable("arn:table") == T
        arn = exports.start_incremental("arn:table", start, T, "b", "exports/")
        assert exports.wait(arn).export_time == T  # an incremental export's time is its window's end
        with pytest.raises(ReconcileInputError, match="point-in-time recovery is not enabled"):
            exports.latest_restorable("arn:table")
    # Another window is another export, never the same token.
    assert client_token("arn:table", T, start) != client_token("arn:table", T, start + timedelta(seconds=1))
    assert client_token("arn:table", T, start) != client_token("arn:table", T)


def test_inventory_partitions_are_named_as_s3_inventory_names_them() -> None:
    assert dt_of("inventory/raw/docuflow-daily/2026-11-30T01-00Z/manifest.json") == "2026-11-30-01-00"


# --- the engine, with Athena played by DuckDB ------------------------------------------------------
class DuckAthena:
    """Executes what the engine sends Athena: the Glue tables are DuckDB views over the files
    AWS would have written; UNLOAD writes Parquet to the S3 location it names.
    """

    def __init__(self, stack, files: dict[str, list[Path]]) -> None:
        self.stack, self.sent = stack, []
        s = stack.settings
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone = 'UTC'").fetchall()
        self.con.execute(f'CREATE SCHEMA "{s.reconcile.glue_database}"').fetchall()
        struct = ", ".join(f'"{a}" STRUCT("{t}" VARCHAR)' for a, t in sql.export_columns(False).items())
        exports = ", ".join(f"'{p}'" for p in files["export"])
        self.con.execute(
            f'CREATE VIEW "{s.reconcile.glue_database}"."{s.reconcile.glue_export_table}" AS SELECT Item AS item, '
            f"'{files['export'][0].parent.parent.name}' AS export_id "
            f"FROM read_json([{exports}], format = 'newline_delimited', columns = {{'Item': 'STRUCT({struct})'}})"
        ).fetchall()
        for table, key in (
            (s.reconcile.glue_raw_inventory_table, "raw"),
            (s.reconcile.glue_processed_inventory_table, "processed"),
        ):
            listed = ", ".join(f"'{p}'" for p in files[key])
            self.con.execute(
                f'CREATE VIEW "{s.reconcile.glue_database}"."{table}" AS SELECT *, '
                f"'2026-11-30-01-00' AS dt FROM read_parquet([{listed}])"
            ).fetchall()
        self.results: dict[str, list[list[str | None]]] = {}

    def run(self, text: str, token: str, what: str) -> QueryOutcome:
        self.sent.append(text)
        unload = re.fullmatch(r"UNLOAD \((.*)\) TO '(s3://[^']+)' WITH \(.*\)", text, re.DOTALL)
        if unload:
            frame = pl.from_arrow(self.con.sql(sql.to_duckdb(unload.group(1))).to_arrow_table())
            bucket, _, prefix = unload.group(2)[5:].partition("/")
            buffer = io.BytesIO()
            frame.write_parquet(buffer)
            self.stack.s3().put_object(Bucket=bucket, Key=prefix + "part-0.parquet", Body=buffer.getvalue())
            return QueryOutcome(token, 1000, 0.1)
        rows = self.con.sql(sql.to_duckdb(text)).fetchall()
        self.results[token] = [[None if v is None else str(v) for v in row] for row in rows]
        return QueryOutcome(token, 10, 0.1)

    def rows(self, query_id: str) -> list[list[str | None]]:
        return self.results[query_id]


def _aws_layout(stack, tmp_path: Path) -> tuple[dict[str, list[Path]], AthenaPlan]:
    """A small state with findings, written where AWS writes it (export and Parquet inventories),
    uploaded to the local S3 server as the stack's buckets would hold it.
    """
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_engines import AS_OF, state

    from jobs.local.writers import export_line, write_export, write_inventory
    from jobs.reconcile.rules.frames import OBJECTS_SCHEMA
    from jobs.store.dynamo_wire import to_wire

    s = stack.settings
    items, raw, processed, _ = state()
    renamed = {"eq-raw": s.store.raw_bucket, "eq-processed": s.store.processed_bucket}
    text = "".join(export_line(to_wire(i)) for i in items)
    for old, new in renamed.items():
        text = text.replace(f"s3://{old}/", f"s3://{new}/")
    export = write_export(tmp_path / s.reconcile.export_bucket, "arn:aws:dynamodb:x:1:table/t", AS_OF, [text.encode()])
    files: dict[str, list[Path]] = {"export": sorted(export.glob("data/*.json.gz"))}
    manifests = []
    for key, rows in (("raw", raw), ("processed", processed)):
        bucket = s.store.raw_bucket if key == "raw" else s.store.processed_bucket
        frame = pl.DataFrame([{**r, "bucket": bucket} for r in rows], schema=OBJECTS_SCHEMA, orient="row")
        root = tmp_path / s.reconcile.inventory_bucket / s.reconcile.inventory_prefix.rstrip("/")
        manifest = write_inventory(root, bucket, T, [frame], "Parquet", s.reconcile.inventory_config_id)
        files[key] = [root / f["key"] for f in json.loads(manifest.read_text())["files"]]
        hive = manifest.parent.parent / "hive" / f"dt={dt_of(str(manifest))}" / "symlink.txt"
        hive.parent.mkdir(parents=True, exist_ok=True)
        hive.write_text(
            "\n".join(
                f"s3://{s.reconcile.inventory_bucket}/{s.reconcile.inventory_prefix}{f['key']}"
                for f in json.loads(manifest.read_text())["files"]
            )
        )
        manifests.append(manifest)
    client = stack.s3()
    for bucket_dir in (tmp_path / s.reconcile.export_bucket, tmp_path / s.reconcile.inventory_bucket):
        if bucket_dir.name not in [b["Name"] for b in client.list_buckets()["Buckets"]]:
            client.create_bucket(Bucket=bucket_dir.name)
        for path in (p for p in bucket_dir.rglob("*") if p.is_file()):
            client.put_object(
                Bucket=bucket_dir.name, Key=path.relative_to(bucket_dir).as_posix(), Body=path.read_bytes()
            )
    bucket = s.reconcile.export_bucket
    return files, AthenaPlan(
        dynamodb_export=f"s3://{bucket}/{export.relative_to(tmp_path / bucket).as_posix()}/",
        grace=timedelta(minutes=15),
    )


def _polars(stack, files: dict[str, list[Path]], tmp_path: Path) -> Any:
    s = stack.settings
    export_dir = files["export"][0].parent.parent
    inventory = tmp_path / s.reconcile.inventory_bucket / s.reconcile.inventory_prefix.rstrip("/")
    manifests = [
        str(next((inventory / b / s.reconcile.inventory_config_id).glob("*/manifest.json")))
        for b in (s.store.raw_bucket, s.store.processed_bucket)
    ]
    options = FilesPlan(
        dynamodb_export=str(export_dir),
        s3_inventories=tuple(manifests),
        grace=timedelta(minutes=15),
        write_report=False,
    )
    return ReconcileRun(s, options).execute()


def test_the_athena_engine_reports_what_polars_finds_and_only_summary_json_says_which_ran(
    stack, tmp_path: Path
) -> None:
    files, options = _aws_layout(stack, tmp_path)
    run = ReconcileRun(stack.settings, options)
    run.athena_queries = fake = DuckAthena(stack, files)  # type: ignore[misc]
    outcome = run.execute()
    by_polars = _polars(stack, files, tmp_path)
    assert_frame_equal(outcome.findings, by_polars.findings)
    assert outcome.findings.height > 20
    summary = outcome.summary
    assert (summary.engine, summary.engineStats["bytesScanned"], by_polars.summary.engine) == ("athena", 1010, "polars")
    sizes = ("itemCount", "rawObjectCount", "processedObjectCount")
    assert [getattr(summary, n) for n in sizes] == [getattr(by_polars.summary, n) for n in sizes]
    assert (
        f'FROM "{stack.settings.reconcile.glue_database}"."{stack.settings.reconcile.glue_export_table}" '
        "WHERE export_id = " in fake.sent[-1]
    )
    assert "WHERE dt = '2026-11-30-01-00'" in fake.sent[-1]
    keys = stack.keys(stack.settings.store.reports_bucket, summary.reportPrefix)
    assert {k.rsplit("/", 1)[-1] for k in keys} >= {"findings.parquet", "findings.csv", "report.html", "summary.json"}
    stored = json.loads(
        stack.s3()
        .get_object(Bucket=stack.settings.store.reports_bucket, Key=summary.reportPrefix + "summary.json")["Body"]
        .read()
    )
    assert stored["engine"] == "athena"
    parquet = (
        stack.s3()
        .get_object(Bucket=stack.settings.store.reports_bucket, Key=summary.reportPrefix + "findings.parquet")["Body"]
        .read()
    )
    assert hashlib.sha256(parquet).hexdigest() == stored["files"]["findings.parquet"]


@pytest.mark.parametrize("case", ["missing_partition", "export_in_progress", "query_fails", "bytes_cutoff"])
def test_bad_athena_inputs_exit_with_their_family_a_clear_message_and_no_report(
    stack, tmp_path: Path, monkeypatch, capsys, case: str
) -> None:
    files, options = _aws_layout(stack, tmp_path)
    s = stack.settings
    queries: Any = DuckAthena(stack, files)
    export = options.dynamodb_export
    message = {
        "missing_partition": "missing partition dt=",
        "export_in_progress": "still in progress",
        "query_fails": "failed: SYNTAX",
        "bytes_cutoff": "bytes-scanned cutoff",
    }[case]
    if case == "missing_partition":
        for key in stack.keys(s.reconcile.inventory_bucket, f"{s.reconcile.inventory_prefix}{s.store.raw_bucket}/"):
            if key.endswith("symlink.txt"):
                stack.s3().delete_object(Bucket=s.reconcile.inventory_bucket, Key=key)
    elif case == "export_in_progress":
        export = export.replace("AWSDynamoDB/", "AWSDynamoDB/not-done-")
    else:
        real, stub = _athena(s)
        stub.add_response("start_query_execution", {"QueryExecutionId": "q1"})
        reason = "SYNTAX_ERROR: line 1:1" if case == "query_fails" else "Bytes scanned limit was exceeded"
        stub.add_response("get_query_execution", _execution("FAILED", reason))
        stub.activate()
        queries = real
    monkeypatch.setattr(ReconcileRun, "athena_queries", property(lambda self: queries))
    capsys.readouterr()
    # A missing partition is bad input (2); an export not done yet or a failed query is transient:
    # the run may succeed later (3, jobs.errors' families).
    code = ExitCode.BAD_INPUT if case == "missing_partition" else ExitCode.UNAVAILABLE
    assert cli.main(["athena", "--dynamodb-export", export, "--grace", "0s"]) == code
    err = capsys.readouterr().err
    assert message in err, err
    assert not [k for k in stack.keys(s.store.reports_bucket) if k.endswith("summary.json")]


def test_the_mode_chooses_the_engine() -> None:
    def engine(argv: list[str]) -> str:
        return cli.plan_of(cli.parser().parse_args(argv)).engine_name

    assert engine(["athena"]) == "athena"
    assert engine(["live"]) == "polars"
    assert engine(["files", "--engine", "duckdb", "--dynamodb-export", "x", "--s3-inventory", "y"]) == "duckdb"
    with pytest.raises(ValidationError, match="Extra inputs"):
        AthenaPlan(deep=True)  # type: ignore[call-arg]
