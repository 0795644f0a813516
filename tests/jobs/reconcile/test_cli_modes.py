"""The reconcile's modes as subcommands and plans (issue 37): each mode takes only its own
options, an invalid combination cannot be built, the old flags still run with a deprecation
line, and a SIGTERM stops the run before it writes anything (143).
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
from jobs.reconcile.plans import AthenaPlan, AuditCheck, FilesPlan, LivePlan, NightlyPlan
from jobs.reconcile.run import ReconcileOptions, ReconcileRun


def test_each_subcommand_builds_its_plan_with_its_own_options() -> None:
    assert cli.parse_options(["live", "--deep", "--segments", "4", "--grace", "0s"]) == LivePlan(
        deep=True, segments=4, grace=timedelta(0)
    )
    files = cli.parse_options(["files", "--engine", "duckdb", "--dynamodb-export", "e", "--s3-inventory", "m"])
    assert files == FilesPlan(engine="duckdb", dynamodb_export="e", s3_inventories=("m",))
    assert cli.parse_options(["nightly", "--audit-log", "--audit-window", "3d", "--repair"]) == NightlyPlan(
        audit=AuditCheck(window=timedelta(days=3)), repair=True
    )
    assert cli.parse_options(["athena", "--nightly", "--no-report"]) == AthenaPlan(nightly=True, write_report=False)


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
    ("argv", "plan", "new"),
    [
        ([], LivePlan(), "reconcile live"),
        (["--nightly", "--repair"], NightlyPlan(repair=True), "reconcile nightly"),
        (["--nightly", "--engine", "athena"], AthenaPlan(nightly=True), "reconcile athena --nightly"),
        (["--source", "files", "--dynamodb-export", "e", "--s3-inventory", "m"], None, "reconcile files"),
        (["--engine", "duckdb", "--dynamodb-export", "e", "--s3-inventory", "m"], None, "reconcile files"),
    ],
)
def test_the_old_flags_still_name_their_plan_with_a_deprecation_line(argv, plan, new, capsys, monkeypatch) -> None:
    monkeypatch.delenv("DOCUFLOW_RECONCILE_ENGINE", raising=False)
    got = cli.parse_options(argv)
    if plan is not None:
        assert got == plan
    err = capsys.readouterr().err
    assert err.startswith("deprecated:") and f"`{new}" in err, err
    assert got == ReconcileOptions(**_old(argv)).plan() if argv else True


def _old(argv: list[str]) -> dict[str, object]:
    """The flags as ReconcileOptions fields (what programmatic callers of the old spelling pass)."""
    fields: dict[str, object] = {}
    it = iter(argv)
    for flag in it:
        name = flag.removeprefix("--").replace("-", "_")
        if name in ("nightly", "repair"):
            fields[name] = True
        elif name == "s3_inventory":
            fields["s3_inventories"] = (next(it),)
        else:
            fields[name] = next(it)
    return fields


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
