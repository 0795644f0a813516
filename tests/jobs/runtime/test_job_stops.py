"""Every job stops cleanly on SIGTERM: a real SIGTERM, sent to this process while a job's CLI runs
(in-process, so the handler the run context installs is the one that hears it), ends the run at
its next clean point with exit 143, having written nothing half-way. The ingest's drain is
tests/reliability/test_signals.py (a `python -m jobs ingest` child with extraction workers).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from jobs.contract import Status, layout
from jobs.contract.metrics import Job, Metric, namespace
from jobs.documents import cli as documents_cli
from jobs.erasure import cli as erasure_cli
from jobs.erasure.run import ErasureRun
from jobs.errors import ExitCode
from jobs.recovery import cli as drill_cli
from jobs.recovery import rollback_cli
from jobs.recovery.restore import Restore
from jobs.recovery.rollback_run import RollbackRun
from jobs.runtime.context import RunContext, run_in_context
from jobs.runtime.signals import StopFlag
from jobs.store.clients import cloudwatch_client
from jobs.store.s3 import Buckets
from tests.jobs.recovery.recovery_helpers import export, processed_stage, reports, scan, tables

HANDLER_GRACE = 0.5  # the handler hands the stop to a thread of its own


def sigterm_during(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, *, after: bool = False) -> None:
    """SIGTERM to this process when `owner.name` is first called (before it runs, or after)."""
    original = getattr(owner, name)
    sent: list[bool] = []

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not sent and not after:
            _sigterm(sent)
        result = original(*args, **kwargs)
        if not sent and after:
            _sigterm(sent)
        return result

    monkeypatch.setattr(owner, name, wrapped)


def _sigterm(sent: list[bool]) -> None:
    sent.append(True)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(HANDLER_GRACE)


def _metric(stack: Any, job: Job, metric: Metric) -> list[float]:
    cloudwatch = cloudwatch_client(stack.settings)
    stats = cloudwatch.get_metric_statistics(
        Namespace=namespace(stack.settings.stage),
        MetricName=metric.value,
        Dimensions=[{"Name": "Job", "Value": job.value}, {"Name": "Stage", "Value": stack.settings.stage}],
        StartTime=layout.utc_now().replace(year=2000),
        EndTime=layout.utc_now().replace(year=2100),
        Period=86400,
        Statistics=["Sum"],
    )
    return [point["Sum"] for point in stats["Datapoints"]]


def test_a_stop_outside_run_job_is_sigterms_code_and_handlers_are_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)

    def body(context: RunContext) -> int:
        assert signal.getsignal(signal.SIGTERM) is not before  # the context's handler
        context.stop.request(signal.SIGINT)
        context.stop.check("in the body")
        return 0

    assert run_in_context("example", body) == ExitCode.SIGINT
    assert signal.getsignal(signal.SIGTERM) is before
    flag = StopFlag()
    heard: list[str] = []
    flag.request()
    flag.on_stop(heard.append)  # registered after the stop: told at once
    assert heard == ["stopped by SIGTERM"] and flag.exit_code == ExitCode.SIGTERM


def test_a_stopped_erasure_exits_143_and_a_rerun_resumes_it(stack) -> None:
    seeded = processed_stage(stack, docs=6, seed=31)
    user = seeded[0].user_id
    with pytest.MonkeyPatch.context() as patch:
        sigterm_during(patch, Buckets, "delete_versions", after=True)  # after its first batch
        patch.setattr("jobs.erasure.run.DELETE_BATCH", 2)
        assert erasure_cli.main(["--user", user]) == ExitCode.SIGTERM
    marker = _erasure_marker(stack, user)
    assert marker is not None and marker.state == "RUNNING" and marker.counts.versions >= 1  # counted, resumable
    assert erasure_cli.main(["--user", user]) == ExitCode.SUCCESS
    assert [i for i in stack.items() if i.userId == user] == []
    assert _metric(stack, Job.ERASURE, Metric.HEARTBEAT) == [1.0]  # the stopped run was no heartbeat


def _erasure_marker(stack: Any, user: str) -> Any:
    from jobs.runtime.stores import document_table

    return document_table(stack.settings).erasure_marker(user)


def test_a_document_action_stopped_before_it_began_changes_nothing(stack) -> None:
    doc = processed_stage(stack, docs=3, seed=32)[0]
    before = stack.items()
    with pytest.MonkeyPatch.context() as patch:
        sigterm_during(patch, RunContext, "__post_init__")  # while the context is made
        assert documents_cli.main(["delete", "--user", doc.user_id, "--doc", doc.document_id]) == ExitCode.SIGTERM
    assert stack.items() == before and Status.DELETED not in {i.status for i in before}  # untouched
    assert documents_cli.main(["delete", "--user", doc.user_id, "--doc", doc.document_id]) == ExitCode.SUCCESS
    assert _metric(stack, Job.DOCUMENTS, Metric.ITEMS_CHANGED) == [1.0]  # the stopped run published nothing


def test_a_drill_stopped_after_its_restore_drops_its_table_and_says_it_missed(
    stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    processed_stage(stack, docs=4, seed=33)
    export(stack)
    before = tables(stack)
    sigterm_during(monkeypatch, Restore, "execute", after=True)
    assert drill_cli.main([]) == ExitCode.SIGTERM
    assert "was dropped" in capsys.readouterr().err
    assert tables(stack) == before and reports(stack) == {}
    assert _metric(stack, Job.DRILL, Metric.TARGETS_MISSED) == [1.0]


def test_a_rollback_stopped_before_it_writes_writes_nothing(stack, monkeypatch: pytest.MonkeyPatch) -> None:
    processed_stage(stack, docs=4, seed=34)
    live = scan(stack, stack.settings.store.table_name)
    restored = layout.drill_table_name(stack.settings.stage, "stop")
    stack.dynamodb().create_table(
        TableName=restored,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key in ("PK", "SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    )
    sigterm_during(monkeypatch, RollbackRun, "_changed_since", after=True)
    since = layout.format_ts(layout.utc_now().replace(year=2020))
    assert rollback_cli.main(["--restored-table", restored, "--since", since]) == ExitCode.SIGTERM
    assert scan(stack, stack.settings.store.table_name) == live


def test_the_erasure_run_takes_the_stop_between_passes(stack) -> None:
    seeded = processed_stage(stack, docs=2, seed=35)
    context = RunContext.of(stack.settings)
    stop: Callable[[int], None] = lambda _n: context.stop.request()  # noqa: E731
    run = ErasureRun(
        stack.settings, context.table(), Buckets(stack.s3(), context.calls), context.calls,
        between_passes=stop, stop=context.stop,
    )  # fmt: skip
    with pytest.raises(Exception, match="stopped by SIGTERM"):
        run.execute(seeded[0].user_id)
