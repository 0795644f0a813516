"""The extraction pool survives workers that die: the run goes on, each document gets one retry."""

from __future__ import annotations

import os
import time
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

import pytest

from jobs.ingest.workers import RestartingPool


def work(task: str, marker: str = "") -> str:
    """'die': the worker process exits mid-task; 'die-once': only the first time (a marker file);
    'hang': never returns; 'die-late': notes each start in the marker file, dies a second later.
    """
    if task == "hang":
        time.sleep(3600)
    if task == "die-late":
        with Path(marker).open("a") as starts:
            starts.write("started\n")
        time.sleep(1.0)
        os._exit(9)
    if task == "die" or (task == "die-once" and not Path(marker).exists()):
        if task == "die-once":
            Path(marker).touch()
        os._exit(9)
    if task == "raise":
        raise ValueError("a plain error in the task")
    return task.upper()


@pytest.fixture
def pool():
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


def test_an_abandoned_task_is_not_retried_when_its_worker_dies(pool: RestartingPool[str], tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    task = pool.submit("die-late", str(starts))
    with pytest.raises(FutureTimeout):
        task.result(timeout=0.5)
    assert task.cancel()  # the caller gave up on it, as the ingest does after its timeout
    assert pool.submit("after").result(timeout=60) == "AFTER"
    time.sleep(1.5)  # its worker dies meanwhile and the pool is replaced
    assert starts.read_text().count("started") == 1


def test_shutdown_does_not_wait_for_an_abandoned_task() -> None:
    pool = RestartingPool(work, 1, get_context("forkserver"))
    task = pool.submit("hang")
    with pytest.raises(FutureTimeout):
        task.result(timeout=0.5)
    task.cancel()
    started = time.monotonic()
    pool.shutdown()
    assert time.monotonic() - started < 10
