"""A reconcile stopped by a real SIGTERM inside its engine stage (in-process, so the run
context's handler hears it) stops there, between partitions, instead of judging every partition
first: a long engine stage cannot outlast the task's 120 s stop timeout. Exit 143, no report,
no temporary files left; the rerun judges the night.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from jobs.errors import ExitCode
from jobs.reconcile import cli as reconcile_cli
from jobs.reconcile.engines import partitions
from tests.jobs.reconcile.reconcile_helpers import export_state
from tests.jobs.recovery.recovery_helpers import processed_stage

HANDLER_GRACE = 0.5  # the handler hands the stop to a thread of its own


def _reports(stack: Any) -> list[str]:
    return stack.keys(stack.settings.store.reports_bucket, "reconciliation/")


def _spills() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("docuflow-reconcile-*")}


def test_a_sigterm_in_the_engine_stops_it_between_partitions(
    stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    processed_stage(stack, docs=12, seed=41)
    state = export_state(stack, tmp_path, "Parquet", rows_per_file=2)
    monkeypatch.setattr(partitions, "ROWS_PER_PARTITION", 2)  # a partition per two items: many
    argv = ["files", "--dynamodb-export", state.export]
    for manifest in state.manifests:
        argv += ["--s3-inventory", manifest]
    judged: list[int] = []
    read = partitions._Spill.read

    def counted(self: Any, number: int, schema: Any) -> Any:
        judged.append(number)
        return read(self, number, schema)

    def stop_at_the_first_judge(original: Any) -> Any:
        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not sent:
                sent.append(True)
                os.kill(os.getpid(), signal.SIGTERM)  # while the table's chunks are spilled and judged
                time.sleep(HANDLER_GRACE)
                judged.clear()
            return original(self, *args, **kwargs)

        return wrapped

    sent: list[bool] = []
    before = _spills()
    monkeypatch.setattr(partitions._Spill, "read", counted)
    with monkeypatch.context() as patch:
        patch.setattr(partitions._Run, "judge", stop_at_the_first_judge(partitions._Run.judge))
        assert reconcile_cli.main(argv) == ExitCode.SIGTERM
    assert sent and judged == []  # not one partition judged after the stop arrived
    assert _reports(stack) == []  # no report, no summary: nothing half-written
    assert _spills() == before  # the partitions' files went with their directory

    assert reconcile_cli.main(argv) in (ExitCode.SUCCESS, ExitCode.FINDINGS)
    assert len(set(judged)) > 2 and _reports(stack) != []  # the rerun judges every partition
