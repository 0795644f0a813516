"""An ARCHIVED failure (the raw object was in GLACIER when a run read it) is retried, and waiting
for a restore costs no attempt: a document is never dead-lettered for having been archived.
"""

from __future__ import annotations

from jobs.contract import FailureCode, Status
from jobs.ingest.plan import Action
from tests.jobs.ingest.test_plan import existing, run


def test_an_archived_failure_is_claimed_again_without_counting_an_attempt() -> None:
    decision = run(existing(Status.FAILED, failureCode=FailureCode.ARCHIVED.value, attempts=3), max_attempts=3)
    assert decision.action == Action.CLAIM
    assert decision.claim is not None and decision.claim.attempts == 3


def test_other_failures_still_count_and_end_as_dead_letters() -> None:
    internal = run(existing(Status.FAILED, failureCode=FailureCode.INTERNAL.value, attempts=1))
    assert internal.claim is not None and internal.claim.attempts == 2
    spent = run(existing(Status.FAILED, failureCode=FailureCode.INTERNAL.value, attempts=3), max_attempts=3)
    assert spent.action == Action.DEAD_LETTER
