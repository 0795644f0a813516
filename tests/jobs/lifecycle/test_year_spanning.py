"""A document's whole life over eleven years, end to end on the local stack.

Invoices (standard, 5 years) and credit notes (compliance, 10 years) are ingested; some are
deleted, one restored, one held, one user erased; the stand-ins move the clock past the grace
and past both retention periods. After each step the table and every version and delete marker
in both buckets are listed and compared with what the rules say (`expected`, a restatement of
the rules document by document), and reconcile reports nothing but the faults planted for it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.contract import RetentionClass, Status, layout
from jobs.documents.actions import DocumentActions
from jobs.erasure.run import ErasureRun
from jobs.ingest.run import IngestOptions, IngestRun
from jobs.local.standins.advance import advance
from jobs.local.standins.rules import next_midnight
from jobs.observability import CallMetrics
from jobs.reconcile.findings import Code, render
from jobs.reconcile.run import ReconcileOptions, ReconcileRun
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets
from tests.jobs.lifecycle.lifecycle_helpers import POLICY, credit_note, invoice, kinds, listed, put_raw

GRACE = timedelta(days=POLICY.grace_days)


@dataclass
class Doc:
    """What has happened to one document, as the test drove it."""

    user: str
    doc: str
    retention: RetentionClass
    uploaded: datetime | None = None
    deleted: datetime | None = None
    held: bool = False
    released: datetime | None = None
    erased: bool = False

    @property
    def keys(self) -> tuple[str, str]:
        return layout.raw_key(self.user, self.doc, "invoice.xml"), layout.result_key(self.user, self.doc)


def expected(docs: list[Doc], at: datetime) -> tuple[dict[str, str], Counter, Counter]:
    """The table (doc -> status, "held" suffixed) and each bucket's entries the rules leave at `at`."""
    items: dict[str, str] = {}
    raw: Counter = Counter()
    results: Counter = Counter()
    for d in docs:
        if d.erased or d.uploaded is None:
            continue
        retain_until = POLICY.retain_until(d.uploaded, d.retention)
        expires = next_midnight(retain_until)  # S3 rounds the lifecycle date up to midnight UTC
        if d.deleted is not None:  # deleted by its owner, never restored
            item_until, hidden_at = d.deleted + GRACE, d.deleted
            gone_at = next_midnight(d.deleted + GRACE)
        else:
            item_until, hidden_at, gone_at = retain_until, expires, next_midnight(expires + GRACE)
        if d.held and d.released is None:
            item_until, gone_at = datetime.max.replace(tzinfo=at.tzinfo), datetime.max.replace(tzinfo=at.tzinfo)
        if at < item_until:
            status = Status.DELETED.value if d.deleted is not None else Status.PROCESSED.value
            items[d.doc] = status + (" held" if d.held and d.released is None else "")
        for counter, key in zip((raw, results), d.keys, strict=True):
            if at < hidden_at:
                counter[(key, "v*")] += 1
            elif at < gone_at:
                counter[(key, "v")] += 1
                counter[(key, "m*")] += 1
    return items, raw, results


class Life:
    """The stack, the jobs and the clock of the scenario."""

    def __init__(self, stack, ledger) -> None:
        stack.settings = stack.settings.model_copy(update={"retention": POLICY})
        self.stack, self.ledger = stack, ledger
        s, metrics = stack.settings, CallMetrics()
        table = DocumentTable(stack.dynamodb(), s.table_name, s.index_name, metrics)
        buckets = Buckets(stack.s3(), metrics)
        self.actions = DocumentActions(table, buckets, s.raw_bucket, s.processed_bucket, POLICY)
        self.erasure = ErasureRun(s, table, buckets, metrics)
        self.now = layout.utc_now()

    def ingest(self, docs: list[Doc]) -> None:
        for d in docs:
            put_raw(self.stack, d.user, d.doc, credit_note() if d.retention == RetentionClass.COMPLIANCE else invoice())
        IngestRun(self.stack.settings, IngestOptions(backfill=True)).execute()
        for item in self.stack.items():
            for d in docs:
                if (d.user, d.doc) == (item.userId, item.documentId):
                    d.uploaded = item.createdAt
                    assert item.retentionClass is d.retention

    def advance(self, to: datetime) -> None:
        self.now = to
        advance(self.stack.settings, to, self.stack.dynamodb(), self.stack.s3(), self.ledger)

    def findings(self) -> set[tuple[str, str]]:
        """A live --deep reconcile judged at the scenario's clock: (code, documentId) pairs."""
        run = ReconcileRun(self.stack.settings, ReconcileOptions(grace=timedelta(0), deep=True, write_report=False))
        at = max(self.now, layout.utc_now())
        wide = run.engine().find(lambda _taken: run.params(at)).wide
        return set(render(wide).select("code", "documentId").iter_rows())

    def check(self, docs: list[Doc]) -> None:
        s = self.stack.settings
        items = {i.documentId: i.status.value + (" held" if i.held else "") for i in self.stack.items()}
        actual = (items, kinds(listed(self.stack, s.raw_bucket)), kinds(listed(self.stack, s.processed_bucket)))
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
        assert self.findings() == set()  # reconcile knows the lifecycle: nothing to report


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
    s3.put_object_tagging(Bucket=s.processed_bucket, Key=layout.result_key("alice", "a1"), Tagging=wrong)
    assert life.findings() == {(Code.RETENTION_TAG_MISMATCH, "a1")}
    s3.put_object_tagging(Bucket=s.processed_bucket, Key=layout.result_key("alice", "a1"), Tagging=right)

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
    (version,) = s3.list_object_versions(Bucket=s.raw_bucket, Prefix=layout.raw_document_prefix("alice", "a3"))[
        "Versions"
    ]
    where = {"Bucket": s.raw_bucket, "Key": version["Key"], "VersionId": version["VersionId"]}
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
        e.key.startswith(layout.raw_document_prefix("bob", "b1")) for e in listed(stack, stack.settings.raw_bucket)
    )

    # Past the standard retention: invoices are hidden and their items gone; a3 stays, held.
    assert a1.uploaded is not None
    life.advance(a1.uploaded + timedelta(days=POLICY.standard_days + 2))
    life.check(docs)
    # Past its grace too: the invoices' versions are gone; the held a3 keeps its versions.
    life.advance(life.now + GRACE + timedelta(days=2))
    life.check(docs)

    # The hold is released: a3 goes back to its schedule, long over, and goes at the next run.
    life.actions.release("alice", "a3", "operator:legal")
    a3.released = life.now
    life.advance(life.now + timedelta(days=1))
    life.check(docs)

    # Past the compliance retention and its grace: nothing is left but the erasure's receipt.
    life.advance(a1.uploaded + timedelta(days=POLICY.compliance_days) + GRACE + timedelta(days=3))
    life.check(docs)
    assert stack.items() == []
    assert listed(stack, stack.settings.raw_bucket) == listed(stack, stack.settings.processed_bucket) == []
    receipts = stack.s3().list_objects_v2(
        Bucket=stack.settings.reports_bucket, Prefix=layout.erasure_receipts_prefix("carol")
    )
    assert receipts["KeyCount"] == 1
