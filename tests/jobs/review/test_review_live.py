"""The review queue worked on the live local stack: claim, correct, settle, and every refusal."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from jobs.contract import Status, layout
from jobs.documents.actions import DocumentActions
from jobs.documents.queries import list_documents
from jobs.errors import ReviewConflictError, ReviewRefusedError
from jobs.local.standins.advance import advance
from jobs.observability import CallMetrics
from jobs.review.desk import ReviewDesk
from jobs.store.clients import dynamodb_client, s3_client
from jobs.store.dynamo import DocumentTable
from jobs.store.dynamo_wire import to_wire
from jobs.store.s3 import Buckets
from tests.jobs.review.review_helpers import body, desk, in_review, ingest, item_of, result_of, upload

REPO_ROOT = Path(__file__).resolve().parents[3]


def review(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobs", "review", *args],
        env=os.environ.copy(),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_claim_correct_settle_through_the_cli_shows_the_corrections_everywhere(stack) -> None:
    waiting = in_review(stack)
    assert waiting.status == Status.REVIEW_REQUIRED and waiting.reviewReasons == ["MISSING_FIELD:vendorName"]
    machine, _ = result_of(stack, "u1", "d1")
    who = ("--user", "u1", "--doc", "d1", "--reviewer", "alice")
    assert review("claim", *who).returncode == 0
    done = review("correct", *who, "--set", "vendor=Acme GmbH", "--set", "date=02.03.2026")
    assert done.returncode == 0, done.stderr

    item = item_of(stack, "u1", "d1")
    assert (item.vendorName, item.invoiceDate, item.status) == ("Acme GmbH", date(2026, 3, 2), Status.REVIEW_REQUIRED)
    assert item.reviewReasons == [] and item.updatedBy == "reviewer:alice"
    result, etag = result_of(stack, "u1", "d1")
    assert item.resultEtag == etag  # the item names the result.json its action wrote
    # The machine's reading is kept; the corrections stand beside it.
    assert result.invoice == machine.invoice and result.validation == machine.validation
    assert [(c.field, c.before, c.after, c.by) for c in result.review.corrections] == [
        ("vendorName", None, "Acme GmbH", "reviewer:alice"),
        ("invoiceDate", "2026-03-01", "2026-03-02", "reviewer:alice"),
    ]
    assert result.current_invoice.vendorName == "Acme GmbH" and result.review.validation.status == Status.PROCESSED

    assert review("settle", *who).returncode == 0
    item = item_of(stack, "u1", "d1")
    assert (item.status, item.leaseOwner, item.vendorName) == (Status.PROCESSED, None, "Acme GmbH")
    result, _ = result_of(stack, "u1", "d1")
    assert result.review.settled.by == "reviewer:alice"
    assert result.review.settled.acceptedReasons == [] and result.current_status == Status.PROCESSED
    # The dashboard: off the review queue, the corrected values in the user's list.
    queue = list_documents(stack.settings, user_id=None, status=Status.REVIEW_REQUIRED)
    assert queue.items == []
    (listed,) = list_documents(stack.settings, user_id="u1", status=None).items
    assert listed.vendorName == "Acme GmbH" and listed.invoiceDate == date(2026, 3, 2)
    # The audit trail: each version the reviewer wrote names the reviewer.
    versions = [c for c in stack.stream_changes() if c.old_status == Status.REVIEW_REQUIRED]
    assert len(versions) == 3 and versions[-1].new_status == Status.PROCESSED


def _unchanged(stack, before: Any, etag: str) -> None:
    assert item_of(stack, before.userId, before.documentId) == before
    assert result_of(stack, before.userId, before.documentId)[1] == etag


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("correct", "--set", "date=2026-02-30"), "no such date"),
        (("correct", "--set", "currency=ABC"), "'ABC' is not an ISO 4217 currency code"),
        (("correct", "--set", "vendor=\u200b"), r"vendorName '\u200b' has no visible characters"),
        (("correct", "--set", "colour=blue"), "unknown field 'colour'"),
        (("correct", "--set", "total=12", "--set", "currency=EURO"), "ISO 4217"),
        (("claim", "--doc", "ok"), "'ok' is PROCESSED, not in review"),
        (("claim", "--user", "u2"), "user 'u2' has no document 'd1'"),  # another user's document
        (("settle", "--reviewer", "bob"), "claimed by reviewer:alice"),
        (("claim", "--reviewer", "bob"), "claimed by reviewer:alice until"),
        (("release", "--reviewer", "bob"), "not claimed by reviewer:bob"),
        (("claim", "--reviewer", "al ice"), "reviewer 'al ice'"),
        (("claim", "--doc", "../d1"), "documentId"),
    ],
)
def test_bad_input_gets_one_line_exit_2_and_changes_nothing(stack, args: tuple[str, ...], says: str) -> None:
    in_review(stack)
    upload(stack, "u2", "d2", body())
    upload(stack, "u1", "ok", body(vendorName="Fine AG", invoiceNumber="OK-1"))
    ingest(stack)
    ReviewDesk.from_settings(stack.settings).claim("u1", "d1", "alice")
    before = {d: item_of(stack, u, d) for u, d in (("u1", "d1"), ("u1", "ok"), ("u2", "d2"))}
    etags = {d: result_of(stack, i.userId, d)[1] for d, i in before.items()}
    defaults = {"--user": "u1", "--doc": "d1", "--reviewer": "alice"}
    action, rest = args[0], list(args[1:])
    for flag, value in defaults.items():
        if flag not in rest:
            rest += [flag, value]
    done = review(action, *rest)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    for doc, item in before.items():
        _unchanged(stack, item, etags[doc])


def test_fifty_concurrent_claims_of_one_document_exactly_one_wins(stack) -> None:
    in_review(stack)
    start = threading.Barrier(50)

    def claim(n: int) -> str:
        desk_ = ReviewDesk.from_settings(stack.settings)
        start.wait()
        try:
            desk_.claim("u1", "d1", f"r{n}")
            return "won"
        except (ReviewRefusedError, ReviewConflictError) as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(50) as pool:
        outcomes = list(pool.map(claim, range(50)))
    assert outcomes.count("won") == 1, outcomes
    winner = item_of(stack, "u1", "d1")
    assert winner.leaseOwner == f"reviewer:r{outcomes.index('won')}" and winner.version == 3


def test_an_expired_claim_is_taken_over(stack) -> None:
    in_review(stack)
    now = layout.utc_now()
    clock = [now]

    def at(settings: Any) -> ReviewDesk:
        metrics = CallMetrics()
        table = DocumentTable(dynamodb_client(settings), settings.store.table_name, settings.store.index_name, metrics)
        return ReviewDesk(settings, table, Buckets(s3_client(settings), metrics), clock=lambda: clock[0])

    desk_ = at(stack.settings)
    desk_.claim("u1", "d1", "alice")
    with pytest.raises(ReviewRefusedError, match="claimed by reviewer:alice"):
        desk_.claim("u1", "d1", "bob")
    clock[0] = now + timedelta(seconds=stack.settings.review.review_lease_seconds)
    assert desk_.claim("u1", "d1", "bob").item.leaseOwner == "reviewer:bob"
    with pytest.raises(ReviewRefusedError, match="claimed by reviewer:bob"):
        desk_.correct("u1", "d1", "alice", ["vendor=Late"])


def test_a_repeated_correction_changes_nothing_the_second_time(stack) -> None:
    in_review(stack)
    desk_ = desk(stack)
    desk_.claim("u1", "d1", "alice")
    first = desk_.correct("u1", "d1", "alice", ["vendor=Acme"]).item
    _, etag = result_of(stack, "u1", "d1")
    again = desk_.correct("u1", "d1", "alice", ["vendor=Acme"]).item
    assert again == first and result_of(stack, "u1", "d1")[1] == etag


class Interleaved(Buckets):
    """Runs `between` once, right after the action's result.json write and before its item write."""

    def __init__(self, stack, between: Any) -> None:
        super().__init__(s3_client(stack.settings), CallMetrics())
        self.between = between

    def put_fenced(self, *args: Any, **kwargs: Any) -> str | None:
        etag = super().put_fenced(*args, **kwargs)
        between, self.between = self.between, None
        if between is not None:
            between()
        return etag


def _interleaved_desk(stack, between: Any) -> ReviewDesk:
    table = DocumentTable(
        dynamodb_client(stack.settings), stack.settings.store.table_name, stack.settings.store.index_name, CallMetrics()
    )
    return ReviewDesk(stack.settings, table, Interleaved(stack, between))


def test_a_correction_racing_a_reupload_is_told_and_leaves_nothing_behind(stack) -> None:
    in_review(stack)
    desk(stack).claim("u1", "d1", "alice")

    def reupload() -> None:  # the new upload is claimed and finished between the two writes
        upload(stack, "u1", "d1", body(vendorName="Fresh GmbH", invoiceNumber="R-2"))
        ingest(stack)

    with pytest.raises(ReviewConflictError, match="changed since it was read"):
        _interleaved_desk(stack, reupload).correct("u1", "d1", "alice", ["vendor=Stale AG"])
    item = item_of(stack, "u1", "d1")
    result, etag = result_of(stack, "u1", "d1")
    assert (item.status, item.vendorName, item.invoiceNumber) == (Status.PROCESSED, "Fresh GmbH", "R-2")
    assert item.resultEtag == etag and result.review is None and result.invoice.vendorName == "Fresh GmbH"


def test_a_correction_that_loses_to_a_claim_takes_its_result_back(stack) -> None:
    in_review(stack)
    desk(stack).claim("u1", "d1", "alice")
    _, before = result_of(stack, "u1", "d1")

    def bob_takes_it_over() -> None:  # alice's claim ran out and bob claimed the document
        item = item_of(stack, "u1", "d1")
        stack.dynamodb().put_item(
            TableName=stack.settings.store.table_name,
            Item=to_wire(
                item.evolve(version=item.version + 1, updatedBy="reviewer:bob", leaseOwner="reviewer:bob").to_item()
            ),
        )

    with pytest.raises(ReviewConflictError):
        _interleaved_desk(stack, bob_takes_it_over).correct("u1", "d1", "alice", ["vendor=Lost AG"])
    result, etag = result_of(stack, "u1", "d1")
    assert result.review is None and etag == before  # put back (moto's ETag is the bytes' MD5)
    assert item_of(stack, "u1", "d1").vendorName is None
    # bob builds on what the item knows, and the re-upload after him is processed as usual
    desk(stack).correct("u1", "d1", "bob", ["vendor=Bob GmbH"])
    assert result_of(stack, "u1", "d1")[0].current_invoice.vendorName == "Bob GmbH"


def test_a_correction_landed_before_a_reupload_is_superseded_by_it(stack) -> None:
    in_review(stack)
    desk_ = desk(stack)
    desk_.claim("u1", "d1", "alice")
    desk_.correct("u1", "d1", "alice", ["vendor=Acme", "total=120.00"])
    upload(stack, "u1", "d1", body(vendorName="Fresh GmbH"))
    ingest(stack)
    item = item_of(stack, "u1", "d1")
    result, etag = result_of(stack, "u1", "d1")
    assert (item.status, item.vendorName, item.totalAmount) == (Status.PROCESSED, "Fresh GmbH", Decimal("119.00"))
    assert item.resultEtag == etag and result.review is None
    with pytest.raises(ReviewRefusedError, match="PROCESSED, not in review"):
        desk_.correct("u1", "d1", "alice", ["vendor=Late"])


def test_result_json_is_read_as_the_item_knows_it_not_as_a_loser_left_it(stack) -> None:
    in_review(stack)
    desk_ = desk(stack)
    desk_.claim("u1", "d1", "alice")
    # A writer that lost could not take its bytes back: they sit on top of the item's version.
    result, _ = result_of(stack, "u1", "d1")
    foreign = result.model_copy(update={"invoice": result.invoice.model_copy(update={"invoiceNumber": "BOGUS"})})
    stack.s3().put_object(
        Bucket=stack.settings.store.processed_bucket, Key=layout.result_key("u1", "d1"), Body=foreign.to_json_bytes()
    )
    desk_.correct("u1", "d1", "alice", ["vendor=Acme"])
    now, etag = result_of(stack, "u1", "d1")
    assert now.invoice.invoiceNumber == "R-1" and now.current_invoice.vendorName == "Acme"
    assert item_of(stack, "u1", "d1").resultEtag == etag


def test_every_result_version_a_review_writes_for_a_held_document_is_held_and_outlives_lifecycle(
    stack, tmp_path: Path
) -> None:
    in_review(stack)
    s = stack.settings
    metrics = CallMetrics()
    table = DocumentTable(dynamodb_client(s), s.store.table_name, s.store.index_name, metrics)
    actions = DocumentActions(
        table, Buckets(s3_client(s), metrics), s.store.raw_bucket, s.store.processed_bucket, s.store.retention
    )
    actions.hold("u1", "d1", "operator:legal")
    desk_ = desk(stack)
    desk_.claim("u1", "d1", "alice")
    desk_.correct("u1", "d1", "alice", ["vendor=Acme GmbH"])
    desk_.correct("u1", "d1", "alice", ["vendor=Acme AG"])
    desk_.settle("u1", "d1", "alice")
    s3, key = stack.s3(), layout.result_key("u1", "d1")

    def versions() -> list[dict[str, Any]]:
        return s3.list_object_versions(Bucket=s.store.processed_bucket, Prefix=key)["Versions"]

    written = versions()
    assert len(written) == 4  # the ingest's, two corrections, the settlement
    for v in written:
        hold = s3.get_object_legal_hold(Bucket=s.store.processed_bucket, Key=key, VersionId=v["VersionId"])
        assert hold["LegalHold"].get("Status") == "ON", v
    # Past the grace period the noncurrent versions would be deleted, were they not held.
    past_grace = layout.utc_now() + timedelta(days=s.store.retention.grace_days + 2)
    moved = advance(s, past_grace, stack.dynamodb(), s3, tmp_path / "ledger.json")
    assert moved.objects.versions_deleted == 0 and moved.objects.held_skipped >= 3
    assert [v["VersionId"] for v in versions()] == [v["VersionId"] for v in written]
