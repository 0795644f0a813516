"""The reconcile's modes as subcommands and plans (issue 37): each mode takes only its own
options, an invalid combination cannot be built, the old flag spellings are refused (issue 45),
a report records its plan and reports written before read alike, and a SIGTERM stops the run
before it writes anything (143).
"""

from __future__ import annotations

import os
import signal
from datetime import timedelta

import pytest
from pydantic import ValidationError

from jobs.contract import layout
from jobs.errors import ExitCode
from jobs.reconcile import cli
from jobs.reconcile.chain.coverage import Recorded, excluded
from jobs.reconcile.plans import AthenaPlan, AuditCheck, FilesPlan, LivePlan, NightlyPlan, Plan
from jobs.reconcile.run import ReconcileRun


def _plan(argv: list[str]) -> Plan:
    return cli.plan_of(cli.parser().parse_args(argv))


def test_each_subcommand_builds_its_plan_with_its_own_options() -> None:
    assert _plan(["live", "--deep", "--segments", "4", "--grace", "0s"]) == LivePlan(
        deep=True, segments=4, grace=timedelta(0)
    )
    files = _plan(["files", "--engine", "duckdb", "--dynamodb-export", "e", "--s3-inventory", "m"])
    assert files == FilesPlan(engine="duckdb", dynamodb_export="e", s3_inventories=("m",))
    assert _plan(["nightly", "--audit-log", "--audit-window", "3d", "--repair"]) == NightlyPlan(
        audit=AuditCheck(window=timedelta(days=3)), repair=True
    )
    assert _plan(["athena", "--nightly", "--no-report"]) == AthenaPlan(nightly=True, write_report=False)


@pytest.mark.parametrize(
    "argv",
    [
        ["athena", "--deep"],  # Athena reads no result.json
        ["athena", "--audit-log"],
        ["nightly", "--engine", "duckdb"],  # duckdb is a files engine only
        ["live", "--dynamodb-export", "e"],
        ["nightly", "--segments", "4"],
        ["files", "--s3-inventory", "m"],  # no table
        ["files", "--engine", "duckdb", "--table-state", "s", "--s3-inventory", "m"],
        ["live", "--audit-window", "1d"],  # a window without the check
        ["live", "--segments", "65"],
    ],
)
def test_what_a_mode_does_not_read_is_refused_with_exit_2(argv: list[str], capsys) -> None:
    assert cli.main(argv) == ExitCode.BAD_INPUT
    assert "error:" in capsys.readouterr().err


def test_invalid_combinations_cannot_be_built() -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        AthenaPlan(deep=True)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="Extra inputs"):
        NightlyPlan(engine="duckdb")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        FilesPlan(engine="athena", dynamodb_export="e", s3_inventories=("m",))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="new location"):
        FilesPlan(dynamodb_export="e", s3_inventories=("m",), table_state="s/", write_table_state="s")
    with pytest.raises(ValidationError, match="s3://"):
        AthenaPlan(dynamodb_export="/tmp/export")
    with pytest.raises(ValidationError):
        LivePlan(grace=timedelta(seconds=-1))
    with pytest.raises(ValidationError):
        AuditCheck(window=timedelta(0))
    with pytest.raises(ValidationError, match="frozen"):
        LivePlan().deep = True  # type: ignore[misc]


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--nightly", "--repair"],
        ["--nightly", "--engine", "athena"],
        ["--source", "files", "--dynamodb-export", "e", "--s3-inventory", "m"],
        ["--engine", "duckdb", "--dynamodb-export", "e", "--s3-inventory", "m"],
    ],
)
def test_the_old_flag_spellings_are_refused(argv: list[str], capsys) -> None:
    assert cli.main(argv) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "error:" in err and "deprecated" not in err


# The flat record every report carried before its plan was recorded (summary.json's `options`).
_FLAT = {
    "dynamodb_export": None,
    "s3_inventories": [],
    "table_state": None,
    "write_table_state": None,
    "repair": False,
    "grace": 900.0,
    "stuck_after": 21600.0,
    "retention": 7776000.0,
    "fail_on": "error",
    "segments": None,
    "write_report": True,
    "audit_window": None,
}


@pytest.mark.parametrize(
    ("plan", "flat"),
    [
        (
            LivePlan(deep=True),
            {"source": "live", "engine": "polars", "deep": True, "nightly": False, "audit_log": False},
        ),
        (
            FilesPlan(engine="duckdb", dynamodb_export="e", s3_inventories=("m",)),
            {"source": "files", "engine": "duckdb", "deep": False, "nightly": False, "audit_log": False},
        ),
        (
            NightlyPlan(audit=AuditCheck(window=timedelta(days=3))),
            {"source": "files", "engine": "polars", "deep": False, "nightly": True, "audit_log": True},
        ),
        (
            AthenaPlan(nightly=True),
            {"source": "athena", "engine": "athena", "deep": False, "nightly": True, "audit_log": False},
        ),
    ],
)
def test_a_report_records_its_plan_and_older_records_read_alike(plan: Plan, flat: dict[str, object]) -> None:
    """The record is the plan itself, read back whole; a report written before (the flat record)
    reads as the same run, so its coverage (what the ledger carries, what the report says was not
    looked for) is unchanged.
    """
    record = plan.record()
    assert record["mode"] == plan.mode
    assert type(plan).model_validate({k: v for k, v in record.items() if k != "mode"}) == plan
    old = {**_FLAT, **flat}
    assert Recorded.of(record) == Recorded.of(old)
    engine = str(flat["engine"])
    assert excluded(record, engine) == excluded(old, engine)


def test_sigterm_stops_the_run_before_it_writes_anything(stack, monkeypatch, capsys) -> None:
    """The signal arrives while the engine reads: the run ends at the next clean point with 143,
    no report and no metrics of a night it did not finish.
    """
    engine_find = cli.ReconcileRun.params

    def signalled(self: ReconcileRun, as_of):  # the engine asks for its parameters once it has read
        os.kill(os.getpid(), signal.SIGTERM)
        return engine_find(self, as_of)

    monkeypatch.setattr(ReconcileRun, "params", signalled)
    capsys.readouterr()
    assert cli.main(["live", "--grace", "0s"]) == ExitCode.SIGTERM
    assert "stopped: stopped by SIGTERM" in capsys.readouterr().err
    assert not stack.keys(stack.settings.store.reports_bucket, layout.RECONCILIATION_PREFIX)
    # The handler was the run's only: the default one is back once the run ended.
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
