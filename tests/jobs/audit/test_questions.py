"""The audit questions: DuckDB over the local log, Athena (played by DuckDB running the very text
the engine sends it), and an independent Python reading of the same log agree record for record;
the CLI prints one JSON object; bad options get one line and exit 2.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest
from audit_helpers import INGEST, REVIEWER, T0, log_rows, reference, ttl_removal, write_varied_day
from botocore.stub import Stubber

from jobs.audit import questions
from jobs.audit.cli import main
from jobs.audit.engines import AthenaAudit, local_engine
from jobs.audit.log import ChangeLog
from jobs.contract import layout
from jobs.contract.audit import TTL_ACTOR, Anomaly
from jobs.errors import AuditQueryError
from jobs.observability import CallMetrics
from jobs.settings import JobSettings
from jobs.sql import to_duckdb
from jobs.store.athena import AthenaQueries, QueryOutcome
from jobs.store.clients import athena_client
from jobs.store.polling import Polling
from jobs.store.s3 import Buckets


class DuckAthena:
    """Plays Athena: the trail database's `changes` table is a DuckDB view over the same files."""

    def __init__(self, database: str, files: list[Path]) -> None:
        self.sent: list[str] = []
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone = 'UTC'").fetchall()
        self.con.execute(f'CREATE SCHEMA "{database}"').fetchall()
        listed = ", ".join(f"'{p}'" for p in files)
        self.con.execute(
            f'CREATE VIEW "{database}"."{layout.GLUE_CHANGES_TABLE}" AS SELECT * FROM '
            f"read_parquet([{listed}], hive_partitioning = true, hive_types = {{'dt': VARCHAR}})"
        ).fetchall()
        self.results: dict[str, list[list[str | None]]] = {}

    def run(self, text: str, token: str, what: str) -> QueryOutcome:
        self.sent.append(text)
        rows = self.con.execute(to_duckdb(text)).fetchall()
        self.results[token] = [[None if v is None else str(v) for v in row] for row in rows]
        return QueryOutcome(token, 0, 0.0)

    def rows(self, query_id: str) -> list[list[str | None]]:
        return self.results[query_id]


@pytest.fixture
def day(stack):
    write_varied_day(stack)
    stack.audit_flush()
    ttl_removal(stack)
    stack.audit_flush()
    return stack


def _buckets(stack) -> Buckets:
    return Buckets(stack.s3(), CallMetrics())


def test_every_engine_reads_the_log_as_the_reference_does(day, tmp_path: Path) -> None:
    expected = reference(log_rows(day))
    files = ChangeLog(_buckets(day), day.settings.audit.audit_bucket).stage(tmp_path)
    athena = AthenaAudit(DuckAthena(day.settings.audit.trail_database, files), day.settings.audit.trail_database)  # type: ignore[arg-type]
    with local_engine(_buckets(day), day.settings, None) as local:
        for user, doc in {(r.userId, r.documentId) for r in expected if r.userId}:
            want = [r for r in expected if (r.userId, r.documentId) == (user, doc)]
            assert questions.history(local, user, doc).records == want, (user, doc)
            assert questions.history(athena, user, doc).records == want, (user, doc)
    assert (
        athena._queries.sent[0].startswith("WITH copies AS")
        and f'"{day.settings.audit.trail_database}"' in athena._queries.sent[0]
    )


def test_a_timeline_names_each_version_its_actor_and_what_changed(day) -> None:
    with local_engine(_buckets(day), day.settings, None) as engine:
        d1 = questions.history(engine, "u1", "d1").records
        expired = questions.history(engine, "u1", "expired").records
        odd = {
            r.documentId: r.anomaly
            for doc in ("noversion", "anonymous", "badtime")
            for r in questions.history(engine, "u2", doc).records
        }
    assert [(r.version, r.actor, r.statusBefore, r.statusAfter) for r in d1] == [
        (1, INGEST, None, "PROCESSING"),
        (2, INGEST, "PROCESSING", "REVIEW_REQUIRED"),
        (3, REVIEWER, "REVIEW_REQUIRED", "PROCESSED"),
        (4, INGEST, "PROCESSED", "PROCESSING"),
    ]
    assert d1[1].changed == ["status", "vendorName"] and d1[3].changed == ["status", "rawEtag"]
    assert [r.time for r in d1] == [
        T0,
        T0 + timedelta(minutes=10),
        T0 + timedelta(minutes=30),
        T0 + timedelta(minutes=40),
    ]
    # The TTL deletion was delivered twice: once in the timeline, its copies counted.
    assert [(r.eventName, r.version, r.actor, r.deliveries) for r in expired][-1] == ("REMOVE", 2, TTL_ACTOR, 2)
    assert odd == {"noversion": Anomaly.NO_VERSION, "anonymous": Anomaly.NO_ACTOR, "badtime": Anomaly.BAD_TIME}


def test_what_one_actor_changed_in_a_period(day, capsys: pytest.CaptureFixture[str]) -> None:
    since, until = layout.format_ts(T0 + timedelta(minutes=20)), layout.format_ts(T0 + timedelta(hours=1))
    assert main(["actor", "--actor", REVIEWER, "--since", since, "--until", until]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["question"] == "actor" and answer["engine"] == "duckdb"
    assert [(r["documentId"], r["version"], r["statusAfter"]) for r in answer["records"]] == [("d1", 3, "PROCESSED")]
    # The ingest run's writes before the window are not in it; those after it are.
    assert main(["actor", "--actor", INGEST, "--since", since, "--until", until]) == 0
    assert [(r["documentId"], r["version"]) for r in json.loads(capsys.readouterr().out)["records"]] == [("d1", 4)]


def test_history_prints_one_json_object_oldest_first(day, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--user", "u1", "--doc", "gone"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["userId"], answer["documentId"], answer["count"], answer["anomalies"]) == ("u1", "gone", 3, 0)
    assert [(r["eventName"], r["version"]) for r in answer["records"]] == [("INSERT", 1), ("MODIFY", 2), ("REMOVE", 2)]
    first = answer["records"][0]
    assert {"version", "actor", "time", "statusAfter", "changed", "eventId", "sequenceNumber"} <= set(first)
    assert first["time"] == layout.format_ts(T0 + timedelta(minutes=2))


def test_an_empty_log_answers_with_no_records(stack, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--user", "nobody", "--doc", "nothing"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == []


@pytest.mark.parametrize(
    "argv",
    [
        ["history", "--user", "a/b", "--doc", "d"],
        ["history", "--user", "u"],
        ["actor", "--actor", "nobody", "--since", "2026-01-01", "--until", "2026-01-02"],
        ["actor", "--actor", "ingest:x", "--since", "2026-01-02", "--until", "2026-01-01"],
        ["actor", "--actor", "ingest:x", "--since", "2026-01-01T10:00:00", "--until", "2026-01-02"],
        ["--engine", "spark", "history", "--user", "u", "--doc", "d"],
    ],
)
def test_bad_options_get_one_line_and_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("python -m jobs audit")


def test_athena_pages_through_results_and_a_failed_query_is_an_audit_error() -> None:
    settings = JobSettings()
    client = athena_client(settings, region_name="eu-central-1")
    queries = AthenaQueries(client, "wg", "db", CallMetrics(), polling=Polling(1, 2, sleep=lambda _: None))
    header = {"Data": [{"VarCharValue": "eventid"}]}
    stub = Stubber(client)
    stub.add_response("start_query_execution", {"QueryExecutionId": "q1"})
    stub.add_response(
        "get_query_execution", {"QueryExecution": {"QueryExecutionId": "q1", "Status": {"State": "SUCCEEDED"}}}
    )
    stub.add_response(
        "get_query_results", {"ResultSet": {"Rows": [header, {"Data": [{"VarCharValue": "a"}]}]}, "NextToken": "t"}
    )
    stub.add_response(
        "get_query_results", {"ResultSet": {"Rows": [{"Data": [{}]}]}}, {"QueryExecutionId": "q1", "NextToken": "t"}
    )
    stub.add_response("start_query_execution", {"QueryExecutionId": "q2"})
    stub.add_response(
        "get_query_execution",
        {
            "QueryExecution": {
                "QueryExecutionId": "q2",
                "Status": {"State": "FAILED", "StateChangeReason": "TABLE_NOT_FOUND"},
            }
        },
    )
    engine = AthenaAudit(queries, "db")
    with stub:
        assert engine.rows("SELECT 1") == [["a"], [None]]
        with pytest.raises(AuditQueryError, match="TABLE_NOT_FOUND"):
            engine.rows("SELECT 2")
    stub.assert_no_pending_responses()
