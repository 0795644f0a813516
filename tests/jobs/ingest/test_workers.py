"""The extraction pool survives workers that die: the run goes on, each document gets one retry."""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

import pytest

from jobs.ingest.workers import RestartingPool


def work(task: str, marker: str = "") -> str:
    """'die': the worker process exits mid-task; 'die-once': only the first time (a marker file)."""
    if task == "die" or (task == "die-once" and not Path(marker).exists()):
        if task == "die-once":
            Path(marker).touch()
        os._exit(9)
    if task == "raise":
        raise ValueError("a plain error in the task")
    return task.upper()


@pytest.fixture
def pool():  # noqa: ANN201
    with RestartingPool(work, 2, get_context("forkserver")) as pool:
        yield pool


def test_a_task_whose_worker_died_once_is_retried_on_a_new_pool(pool: RestartingPool[str], tmp_path: Path) -> None:
    assert pool.submit("die-once", str(tmp_path / "died")).result(timeout=60) == "DIE-ONCE"
    assert pool.restarts == 1
    assert pool.submit("ok").result(timeout=60) == "OK"


def test_a_poison_task_fails_and_later_tasks_still_run(pool: RestartingPool[str]) -> None:
    with pytest.raises(BrokenProcessPool):
        pool.submit("die").result(timeout=60)
    assert pool.restarts == 2  # its retry broke the new pool as well
    assert [pool.submit(t).result(timeout=60) for t in ("a", "b", "c")] == ["A", "B", "C"]


def test_an_error_raised_by_the_task_is_passed_on_without_a_restart(pool: RestartingPool[str]) -> None:
    with pytest.raises(ValueError, match="plain error"):
        pool.submit("raise").result(timeout=60)
    assert pool.restarts == 0
