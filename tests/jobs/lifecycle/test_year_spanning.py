"""A document's whole life over eleven years, end to end on the local stack.

Invoices (standard, 5 years) and credit notes (compliance, 10 years) are ingested; some are
deleted, one restored, one held, one user erased; the stand-ins move the clock past the grace
and past both retention periods. After each step the table and every version and delete marker
in both buckets are listed and compared with what the rules say (`expected`, a restatement of
the rules document by document), and reconcile reports nothing but the faults planted for it.
The sibling scenarios run the same year through a held document a reviewer corrects, a hold
that set the S3 holds and lost its item write followed by the user's erasure, and a rollback
whose window spans a legal hold and an owner's delete.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest

from jobs.contract import DocumentItem, RetentionClass, Status, layout
from jobs.documents.actions import DocumentActions
from jobs.erasure.run import ErasureRun
from jobs.errors import ErasureUnknownUserError
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.local.standins.advance import advance
from jobs.local.standins.rules import next_midnight
from jobs.observability import CallMetrics
from jobs.reconcile.plans import LivePlan
from jobs.reconcile.rules.findings import Code, render
from jobs.reconcile.run import ReconcileRun
from jobs.recovery.drill import DrillOptions, DrillRun
from jobs.recovery.plan import Source
from jobs.recovery.rollback_run import RollbackOptions, RollbackRun, RollbackSummary
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from tests.jobs.lifecycle.lifecycle_helpers import (
    POLICY,
    credit_note,
    hold_versions_only,
    invoice,
    kinds,
    legal_holds,
    listed,
    put_raw,
)
from tests.jobs.recovery.recovery_helpers import BAD_VENDOR, corrupt, export
from tests.jobs.review.review_helpers import body, desk, upload

GRACE = timedelta(days=POLICY.grace_days)


@dataclass
class Doc:
    """What has happened to one document, as the test drove it."""

    user: str
    doc: str
    retention: RetentionClass
    review: bool = False  # a normalized invoice naming no seller: the ingest sends it to review
    status: Status = Status.PROCESSED  # while not deleted
    uploaded: datetime | None = None
    deleted: datetime | None = None
    held: bool = False  # its item says held
    versions_held: bool = False  # S3 holds its versions, whatever its item says
    released: datetime | None = None
    erased: bool = False
    rewrites: list[datetime] = field(default_factory=list)  # result.json versions after the ingest's

    @property
    def keys(self) -> tuple[str, str]:
        name = "invoice.json" if self.review else "invoice.xml"
        return layout.raw_key(self.user, self.doc, name), layout.result_key(self.user, self.doc)


def expected(docs: list[Doc], at: datetime) -> tuple[dict[str, str], Counter, Counter]:
    """The table (doc -> status, "held" suffixed) and each bucket's entries the rules leave at `at`."""
    items: dict[str, str] = {}
    raw: Counter = Counter()
    results: Counter = Counter()
    for d in docs:
        kept = d.held and d.released is None  # nothing expires or erases its item
        locked = kept or d.versions_held  # S3 refuses to delete its versions: lifecycle and erasure leave them
        if (d.erased and not locked) or d.uploaded is None:
            continue
        item_until, hidden_at, gone_at = _horizons(d, d.uploaded, kept, locked, at)
        if at < item_until:
            status = Status.DELETED.value if d.deleted is not None else d.status.value
            items[d.doc] = status + (" held" if kept else "")
        for counter, key, written in zip(
            (raw, results), d.keys, ([d.uploaded], [d.uploaded, *d.rewrites]), strict=True
        ):
            counter.update(_versions(key, written, locked, hidden_at, gone_at, at))
    return items, raw, results


def _horizons(
    d: Doc, uploaded: datetime, kept: bool, locked: bool, at: datetime
) -> tuple[datetime, datetime, datetime]:
    """Until when its item stays, when its objects are hidden (a delete marker on top), when gone."""
    retain_until = POLICY.retain_until(uploaded, d.retention)
    expires = next_midnight(retain_until)  # S3 rounds the lifecycle date up to midnight UTC
    if d.deleted is not None:  # deleted by its owner, never restored
        item_until, hidden_at = d.deleted + GRACE, d.deleted
        gone_at = next_midnight(d.deleted + GRACE)
    else:
        item_until, hidden_at, gone_at = retain_until, expires, next_midnight(expires + GRACE)
    never = datetime.max.replace(tzinfo=at.tzinfo)
    return (never if kept else item_until), hidden_at, (never if locked else gone_at)


def _versions(
    key: str, written: list[datetime], locked: bool, hidden_at: datetime, gone_at: datetime, at: datetime
) -> Counter:
    """The entries of one key at `at`: "v" a version, "v*" the current one, "m*" a current delete marker."""
    entries: Counter = Counter()
    # A version a later one replaced is noncurrent from then: gone after the grace, unless held.
    for successor in written[1:]:
        if locked or at < next_midnight(successor + GRACE):
            entries[(key, "v")] += 1
    if at < hidden_at:
        entries[(key, "v*")] += 1
    elif at < gone_at:
        entries[(key, "v")] += 1
        entries[(key, "m*")] += 1
    return entries


class Life:
    """The stack, the jobs and the clock of the scenario."""

    def __init__(self, stack, ledger) -> None:
        stack.settings = stack.settings.changed(retention=POLICY)
        self.stack, self.ledger = stack, ledger
        s, metrics = stack.settings, CallMetrics()
        table = DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics)
        buckets = Buckets(stack.s3(), metrics)
        self.table = table
        self.actions = DocumentActions(table, buckets, s.store.raw_bucket, s.store.processed_bucket, POLICY)
        self.erasure = ErasureRun(s, table, buckets, metrics)
        self.now = layout.utc_now()

    def ingest(self, docs: list[Doc]) -> None:
        for d in docs:
            if d.review:
                upload(self.stack, d.user, d.doc, body(invoiceNumber=d.doc))
            else:
                put_raw(
                    self.stack, d.user, d.doc, credit_note() if d.retention == RetentionClass.COMPLIANCE else invoice()
                )
        IngestRun(self.stack.settings, BackfillPlan()).execute()
        for item in self.stack.items():
            for d in docs:
                if (d.user, d.doc) == (item.userId, item.documentId):
                    d.uploaded = item.createdAt
                    assert item.retentionClass is d.retention

    def item(self, d: Doc) -> DocumentItem:
        found = self.table.get(d.user, d.doc)
        assert found is not None, d
        return found

    def corrupt(self, d: Doc) -> None:
        """What a bad image writes over the document's item (its result.json left as it is)."""
        corrupt(self.stack, self.item(d), result_too=False)

    def backup_and_deploy(self) -> datetime:
        """The nightly backup, then the deploy starts: its start (the restore point)."""
        export(self.stack)
        time.sleep(1.1)  # S3 stamps versions to the second: what follows is after the restore point
        return layout.utc_now()

    def rollback(self, since: datetime) -> RollbackSummary:
        """The drill restores the table as of `since` from the backup; the rollback puts it back."""
        s = self.stack.settings
        restored = DrillRun(s, DrillOptions(source=Source.EXPORT, as_of=since)).execute()
        return RollbackRun(s, RollbackOptions(restored.report.restoredTable, since)).execute()

    def advance(self, to: datetime) -> None:
        self.now = to
        advance(self.stack.settings, to, self.stack.dynamodb(), self.stack.s3(), self.ledger)

    def findings(self) -> set[tuple[str, str]]:
        """A live --deep reconcile judged at the scenario's clock: (code, documentId) pairs."""
        run = ReconcileRun(self.stack.settings, LivePlan(grace=timedelta(0), deep=True, write_report=False))
        at = max(self.now, layout.utc_now())
        wide = run.plan.setup(run).engine.find(lambda _taken: run.params(at)).wide
        return set(render(wide).select("code", "documentId").iter_rows())

    def check(self, docs: list[Doc], findings: frozenset[tuple[str, str]] = frozenset()) -> None:
        """The table, every version and delete marker, and the duplicate markers are what the
        rules leave now; reconcile reports nothing (or the `findings` a step planted).
        """
        s = self.stack.settings
        items = {i.documentId: i.status.value + (" held" if i.held else "") for i in self.stack.items()}
        actual = (
            items,
            kinds(listed(self.stack, s.store.raw_bucket)),
            kinds(listed(self.stack, s.store.processed_bucket)),
        )
        # Until the stand-ins move it, the scenario's clock is the real one.
        assert actual == expected(docs, max(self.now, layout.utc_now()))
        # Duplicate markers: exactly those of the live documents, gone with deletes, TTL, erasure.
        live = {
            (i.documentId, k, d)
            for i in self.stack.items()
            if i.status != Status.DELETED
            for k, d in i.held_markers.items()
        }
        assert {(m.documentId, m.kind, m.digest) for m in self.stack.markers()} == live
        assert self.findings() == findings  # reconcile knows the lifecycle: nothing else to report

    def past_retention_then_release(self, docs: list[Doc], held: Doc) -> None:
        """Past the standard retention and its grace, each step checked (the held document stays
        through both); then its hold is released: back on its schedule, long over, it goes at the
        next run.
        """
        first = min(d.uploaded for d in docs if d.uploaded is not None)
        self.advance(max(self.now, first + timedelta(days=POLICY.standard_days + 2)))
        self.check(docs)
        self.advance(self.now + GRACE + timedelta(days=2))
        self.check(docs)
        self.actions.release(held.user, held.doc, "operator:legal")
        held.released, held.versions_held = self.now, False
        self.advance(self.now + timedelta(days=1))
        self.check(docs)


def test_eleven_years_of_documents(stack, tmp_path) -> None:
    life = Life(stack, tmp_path / "ledger.json")
    std, comp = RetentionClass.STANDARD, RetentionClass.COMPLIANCE
    a1, a2, a3, ac = Doc("alice", "a1", std), Doc("alice", "a2", std), Doc("alice", "a3", std), Doc("alice", "ac", comp)
    b1, bc = Doc("bob", "b1", std), Doc("bob", "bc", comp)
    c1, cc = Doc("carol", "c1", std), Doc("carol", "cc", comp)
    docs = [a1, a2, a3, ac, b1, bc, c1, cc]
    life.ingest(docs)
    assert len(stack.markers()) == 2 * len(docs)  # each document holds its two identities
    life.check(docs)
    # A planted fault: a1's result.json tagged for the wrong class. Reconcile reports it, only it.
    s3, s = stack.s3(), stack.settings
    wrong = {"TagSet": [{"Key": layout.RETENTION_TAG, "Value": "compliance"}]}
    right = {"TagSet": [{"Key": layout.RETENTION_TAG, "Value": "standard"}]}
    s3.put_object_tagging(Bucket=s.store.processed_bucket, Key=layout.result_key("alice", "a1"), Tagging=wrong)
    assert life.findings() == {(Code.RETENTION_TAG_MISMATCH, "a1")}
    s3.put_object_tagging(Bucket=s.store.processed_bucket, Key=layout.result_key("alice", "a1"), Tagging=right)

    # The owners delete a2 and b1; alice restores a2 within its grace. An operator holds a3.
    life.actions.delete("alice", "a2", "user:alice")
    life.actions.delete("bob", "b1", "user:bob")
    a2.deleted = b1.deleted = layout.utc_now()
    life.check(docs)
    life.actions.restore("alice", "a2", "user:alice")
    a2.deleted = None
    life.actions.hold("alice", "a3", "operator:legal")
    a3.held = True
    life.check(docs)
    # A planted fault: one of a3's versions loses its hold. Reconcile reports it, only it.
    (version,) = s3.list_object_versions(Bucket=s.store.raw_bucket, Prefix=layout.raw_document_prefix("alice", "a3"))[
        "Versions"
    ]
    where = {"Bucket": s.store.raw_bucket, "Key": version["Key"], "VersionId": version["VersionId"]}
    s3.put_object_legal_hold(**where, LegalHold={"Status": "OFF"})
    assert life.findings() == {(Code.LEGAL_HOLD_MISSING, "a3")}
    s3.put_object_legal_hold(**where, LegalHold={"Status": "ON"})
    assert {i.documentId for i in stack.items() if i.status == Status.DELETED} == {"b1"}

    # Carol is erased: nothing of hers is left.
    assert life.erasure.execute("carol").outcome == "erased"
    c1.erased = cc.erased = True
    life.check(docs)

    # Past the grace of bob's delete: b1's item, versions and markers are gone for good.
    life.advance(b1.deleted + GRACE + timedelta(days=2))
    life.check(docs)
    assert not any(
        e.key.startswith(layout.raw_document_prefix("bob", "b1"))
        for e in listed(stack, stack.settings.store.raw_bucket)
    )

    # Past the standard retention and its grace: the invoices go; a3 stays, held, until released.
    life.past_retention_then_release(docs, a3)
    assert a1.uploaded is not None

    # Past the compliance retention and its grace: nothing is left but the erasure's receipt.
    life.advance(a1.uploaded + timedelta(days=POLICY.compliance_days) + GRACE + timedelta(days=3))
    life.check(docs)
    assert stack.items() == []
    assert listed(stack, stack.settings.store.raw_bucket) == listed(stack, stack.settings.store.processed_bucket) == []
    receipts = stack.s3().list_objects_v2(
        Bucket=stack.settings.store.reports_bucket, Prefix=layout.erasure_receipts_prefix("carol")
    )
    assert receipts["KeyCount"] == 1


def test_a_held_document_a_reviewer_corrects_keeps_every_version_through_the_year(stack, tmp_path) -> None:
    life = Life(stack, tmp_path / "ledger.json")
    std = RetentionClass.STANDARD
    r1, r2 = Doc("rita", "r1", std, review=True), Doc("rita", "r2", std, review=True)
    docs = [r1, r2]
    for d in docs:
        d.status = Status.REVIEW_REQUIRED
    life.ingest(docs)
    life.check(docs)
    life.actions.hold("rita", "r1", "operator:legal")
    r1.held = True
    life.check(docs)

    # A reviewer corrects both (two corrections, then the settlement): three result.json versions
    # each, r1's written under its hold, r2's not (the witness the grace rule applies to).
    reviewer = desk(stack)
    for d in docs:
        reviewer.claim(d.user, d.doc, "vera")
        for vendor in ("Acme GmbH", "Acme AG"):
            reviewer.correct(d.user, d.doc, "vera", [f"vendor={vendor} {d.doc}"])
            d.rewrites.append(layout.utc_now())
        reviewer.settle(d.user, d.doc, "vera")
        d.rewrites.append(layout.utc_now())
        d.status = Status.PROCESSED
    life.check(docs)
    held_versions = legal_holds(stack, "rita", "r1")
    assert len(held_versions) == 1 + 4 and all(held_versions.values())  # raw, and result.json's four

    # Past the corrections' grace: r2's replaced versions are gone, r1's all stay.
    life.advance(life.now + GRACE + timedelta(days=2))
    life.check(docs)
    assert legal_holds(stack, "rita", "r1") == held_versions  # the same versions, each still held
    life.past_retention_then_release(docs, r1)
    assert stack.items() == [] and listed(stack, stack.settings.store.processed_bucket) == []


def test_a_half_done_hold_then_the_users_erasure_keeps_the_held_versions_with_their_item(stack, tmp_path) -> None:
    life = Life(stack, tmp_path / "ledger.json")
    std, comp = RetentionClass.STANDARD, RetentionClass.COMPLIANCE
    d1, d2, dc, e1 = Doc("dave", "d1", std), Doc("dave", "d2", std), Doc("dave", "dc", comp), Doc("erin", "e1", std)
    docs = [d1, d2, dc, e1]
    life.ingest(docs)
    life.check(docs)
    # The hold set d1's S3 holds, then lost its item write: the versions are held, the item not.
    assert hold_versions_only(stack, "dave", "d1") == 2
    d1.versions_held = True
    life.check(docs)

    # Dave is erased: the run ends, and its receipt names what S3's hold keeps (with the item).
    done = life.erasure.execute("dave")
    assert done.outcome == "erased" and done.receipt is not None
    kept = [(k.documentId, k.legalHoldBy, k.versions, k.itemKept) for k in done.receipt.kept]
    assert kept == [("d1", None, 2, True)]
    assert done.receipt.deleted.documents == 2  # d2, dc
    d1.erased = d2.erased = dc.erased = True
    life.check(docs)

    # The hold run again completes on the item the erasure kept; the year goes by around it.
    assert life.actions.hold("dave", "d1", "operator:legal").item.held
    d1.held = True
    life.check(docs)
    life.past_retention_then_release(docs, d1)
    # Released, and past its retention, d1 went at the lifecycle's next run: nothing of dave is
    # stored (the erasure's marker expired too), and the one receipt stays.
    with pytest.raises(ErasureUnknownUserError):
        life.erasure.execute("dave")
    assert stack.keys(stack.settings.store.reports_bucket, layout.erasure_receipts_prefix("dave")) != []


def test_a_rollback_across_a_hold_and_an_owners_delete_leaves_both_and_the_year_goes_on(stack, tmp_path) -> None:
    life = Life(stack, tmp_path / "ledger.json")
    std = RetentionClass.STANDARD
    p1, p2, p3 = Doc("pat", "p1", std), Doc("pat", "p2", std), Doc("pat", "p3", std)
    docs = [p1, p2, p3]
    life.ingest(docs)
    life.check(docs)
    deployed = life.backup_and_deploy()

    # Inside the window: an operator holds p1, which the bad image then rewrites; the bad image
    # rewrites p2, which its owner then deletes, and p3.
    life.actions.hold("pat", "p1", "operator:legal")
    p1.held = True
    life.corrupt(p1)
    life.corrupt(p2)
    life.actions.delete("pat", "p2", "user:pat")
    p2.deleted = layout.utc_now()
    life.corrupt(p3)
    # The bad image's items disagree with their result.json: reconcile says so, nothing else.
    life.check(docs, frozenset({(Code.SUMMARY_MISMATCH, "p1"), (Code.SUMMARY_MISMATCH, "p3")}))

    summary = life.rollback(deployed)
    assert summary.actions == {"LEAVE": 1, "PUT_BACK": 2}
    left = {e["documentId"]: str(e["reasons"]) for e in summary.leftAlone}
    assert set(left) == {"p1", "p2"} and "legal hold" in left["p1"] and "deleted by its owner" in left["p2"]
    assert [life.item(d).vendorName != BAD_VENDOR for d in (p1, p3)] == [True, True]
    assert life.item(p2).deletedBy == "user:pat" and life.item(p1).legalHoldBy == "operator:legal"
    life.check(docs)

    # Past p2's grace: gone for good; then the year goes on, p1 held until released.
    life.advance(p2.deleted + GRACE + timedelta(days=2))
    life.check(docs)
    life.past_retention_then_release(docs, p1)
    assert stack.items() == []
