"""Adding a scheduled job is one new package and its entry in jobs/registry.py, nothing else.

On a copy of the tree, the test writes `jobs/hello/` (its declaration `job.py`, its task role's
builder `policy.py`, its CLI) and adds the package's entry to `jobs/registry.py` (its import and
its line in JOBS). Without touching any other file it then sees, in that copy:
- `python -m jobs --help` list the command, and the command run in a run context, which publishes
  the metrics it declares to CloudWatch (moto's), ManualRuns for a run a person started and
  Heartbeat for one the schedule started;
- the Pulumi program (under the mocks, with the real stack file) build its task definition, its
  role with the builder's statements, its log group, its schedule, its heartbeat alarm on the
  alert topic (a nightly schedule) and a dashboard widget for each metric it publishes;
- the import contracts place and fence the package (they read the registry), and catch it
  importing boto3;
- the architecture tests that every package is placed in the contracts still pass.
Any of these needing another file to change fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.contract.metrics import Metric, namespace
from jobs.settings import env_name
from jobs.store.clients import cloudwatch_client
from tests.conftest import Stack

REPO_ROOT = Path(__file__).resolve().parents[2]
# What the copy needs: the jobs, the Pulumi program and its stack files, the contracts and the
# tests that read them.
COPIED = ("jobs", "components", "tests/architecture", "tests/components")
COPIED_FILES = ("__main__.py", "Pulumi.yaml", "Pulumi.dev.yaml", ".importlinter", "pytest.ini")

PACKAGE = {
    "__init__.py": '"""An example scheduled job: it greets, every night at 03:00."""\n',
    "job.py": '''
        """The hello job and its nightly task, as the registry lists it."""

        from __future__ import annotations

        from jobs.contract.metrics import Metric
        from jobs.hello.policy import hello_task_policy
        from jobs.runtime.registry import JobSpec, Schedule, TaskSize, TaskSpec

        JOB = JobSpec(
            "hello",
            "jobs.hello.cli",
            "greet, every night",
            subcommands=("greet",),
            publishes="hello",
            metrics=(Metric.ITEMS_CHANGED,),
            tasks=(
                TaskSpec(
                    "hello",
                    ("hello", "greet"),
                    hello_task_policy,
                    TaskSize(256, 512),
                    Schedule("hello", "cron(0 3 * * ? *)"),
                ),
            ),
        )
    ''',
    "policy.py": '''
        """The hello task's role: it reads the documents table."""

        from __future__ import annotations

        from jobs.contract.iam import Policy, TaskResources, document, statement


        def hello_task_policy(resources: TaskResources) -> Policy:
            return document(statement("ReadTable", ["dynamodb:GetItem"], [resources.table_arn]))
    ''',
    "cli.py": '''
        """`python -m jobs hello greet`."""

        from __future__ import annotations

        import argparse

        from jobs.contract.metrics import Datum, Metric
        from jobs.hello.job import JOB
        from jobs.runtime.context import Cli, RunContext, run_job


        def parser() -> argparse.ArgumentParser:
            p = argparse.ArgumentParser(prog="python -m jobs hello")
            p.add_argument("mode", choices=["greet"])
            return p


        def _run(context: RunContext, mode: str) -> int:
            print(f"hello from run {context.run_id}")
            context.record("hello", [Datum(metric=Metric.ITEMS_CHANGED, value=2)])
            return 0


        CLI = Cli(JOB, parser, lambda args: str(args.mode), _run)


        def main(argv: list[str]) -> int:
            return run_job(CLI, argv)
    ''',
}

PROGRAM_PROBE = """
import json
from tests.components.program import run_as_main, stack_config
recorded = run_as_main({**stack_config("dev"), "docuflow:stage": "hello"})
print(json.dumps([{"typ": r.typ, "name": r.name, "inputs": r.inputs} for r in recorded], default=str))
"""


def _copy_tree(root: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "data")
    for folder in COPIED:
        shutil.copytree(REPO_ROOT / folder, root / folder, ignore=ignore)
    for name in COPIED_FILES:
        shutil.copy(REPO_ROOT / name, root / name)


def _add_the_job(root: Path) -> None:
    package = root / "jobs" / "hello"
    package.mkdir()
    for name, text in PACKAGE.items():
        (package / name).write_text(textwrap.dedent(text).lstrip())
    registry = root / "jobs" / "registry.py"
    text = registry.read_text()
    ingest = "from jobs.ingest import job as ingest_job\n"
    text = text.replace(ingest, "from jobs.hello import job as hello_job\n" + ingest, 1)
    text = text.replace("    ingest_job.JOB,\n", "    ingest_job.JOB,\n    hello_job.JOB,\n", 1)
    assert "hello_job.JOB" in text
    registry.write_text(text)


def _run(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "1000", "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=240, check=False
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("add-a-job")
    _copy_tree(root)
    _add_the_job(root)
    return root


def _published(stack: Stack, metric: Metric) -> float:
    cloudwatch = cloudwatch_client(stack.settings)
    stats = cloudwatch.get_metric_statistics(
        Namespace=namespace(stack.settings.stage),
        MetricName=metric.value,
        Dimensions=[{"Name": "Job", "Value": "hello"}, {"Name": "Stage", "Value": stack.settings.stage}],
        StartTime=datetime(2000, 1, 1, tzinfo=UTC),
        EndTime=datetime(2100, 1, 1, tzinfo=UTC),
        Period=86400,
        Statistics=["Sum"],
    )
    return sum(point["Sum"] for point in stats["Datapoints"])


def test_its_cli_is_listed_and_runs_publishing_its_metrics(tree: Path, stack: Stack) -> None:
    listed = _run(tree, "-m", "jobs", "--help")
    assert listed.returncode == 0 and "hello" in listed.stdout and "greet, every night" in listed.stdout
    ran = _run(tree, "-m", "jobs", "hello", "greet")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.startswith("hello from run ")
    # A person's run of a scheduled job: ManualRuns, never its heartbeat.
    assert (_published(stack, Metric.MANUAL_RUNS), _published(stack, Metric.HEARTBEAT)) == (1, 0)
    assert _published(stack, Metric.ITEMS_CHANGED) == 2
    scheduled = _run(tree, "-m", "jobs", "hello", "greet", env={env_name("scheduled_time"): "2026-12-03T03:00:00Z"})
    assert scheduled.returncode == 0, scheduled.stderr[-2000:]
    assert (_published(stack, Metric.MANUAL_RUNS), _published(stack, Metric.HEARTBEAT)) == (1, 1)


def test_the_stack_builds_its_task_definition_role_log_group_and_schedule(tree: Path) -> None:
    done = _run(tree, "-c", PROGRAM_PROBE)
    assert done.returncode == 0, done.stderr[-3000:]
    recorded = json.loads(done.stdout.strip().splitlines()[-1])
    by_name = {r["name"]: r for r in recorded}
    (task,) = [
        r for r in recorded if r["typ"] == "aws:ecs/taskDefinition:TaskDefinition" and r["name"].endswith("-hello")
    ]
    (container,) = json.loads(task["inputs"]["containerDefinitions"])
    assert container["command"] == ["hello", "greet"]
    assert (task["inputs"]["cpu"], task["inputs"]["memory"]) == ("256", "512")
    policy = json.loads(by_name["docuflow-hello-hello-task-policy"]["inputs"]["policy"])
    assert [s["Action"] for s in policy["Statement"] if s["Sid"] == "ReadTable"] == [["dynamodb:GetItem"]]
    assert any(r["inputs"].get("name") == "/docuflow/hello/hello" for r in recorded if r["typ"].endswith("LogGroup"))
    schedules = [r for r in recorded if r["typ"] == "aws:scheduler/schedule:Schedule"]
    (schedule,) = [s for s in schedules if s["inputs"]["name"] == "docuflow-hello-hello"]
    assert schedule["inputs"]["scheduleExpression"] == "cron(0 3 * * ? *)"
    alarm = "aws:cloudwatch/metricAlarm:MetricAlarm"
    alarms = {r["inputs"]["name"]: r["inputs"] for r in recorded if r["typ"] == alarm and "name" in r["inputs"]}
    beat = alarms["docuflow-hello-hello-heartbeat"]
    assert (beat["metricName"], beat["dimensions"]) == ("Heartbeat", {"Job": "hello", "Stage": "hello"})
    assert beat["alarmActions"] == alarms["docuflow-hello-ingest-heartbeat"]["alarmActions"]
    (board,) = [r for r in recorded if r["typ"] == "aws:cloudwatch/dashboard:Dashboard"]
    titles = {w["properties"].get("title") for w in json.loads(board["inputs"]["dashboardBody"])["widgets"]}
    assert {
        "hello: ItemsChanged",
        "hello: Heartbeat",
        "hello: ManualRuns",
        "hello: duration (s) against its window",
    } <= titles


def test_the_import_contracts_place_and_fence_it(tree: Path) -> None:
    from tests.architecture.test_boundaries import lint_imports

    assert all(lint_imports(tree).values())
    placed = _run(tree, "-m", "pytest", "-q", "-p", "no:xdist", "tests/architecture/test_boundaries.py", "-k", "placed")
    assert placed.returncode == 0, placed.stdout[-3000:]
    breach = tree / "jobs" / "hello" / "breach.py"
    breach.write_text("import boto3\n")
    try:
        verdicts = lint_imports(tree)
    finally:
        breach.unlink()
    assert not verdicts["Only the store (and the dev stack) imports boto3, botocore or the boto3 type stubs"]
