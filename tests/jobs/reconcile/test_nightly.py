"""A week of nights on the local stack, each run by the scheduled command alone.

`python -m jobs reconcile nightly` finds the newest kept state, asks the table's exports from
the local stack's stand-in (DynamoDB Local has none: jobs/local/standins/exports.py), and keeps
tonight's state. The nights bring changes, deletes and re-creations, items changed several times
and items created and deleted within a night, one night is missed, and one re-anchors; and a
document's life (issue 22): a user erased (the erasure's marker stays in the table), an owner's
delete within its grace, a legal hold, an item past its retention whose raw object lifecycle
already hid, then deleted by TTL (the TTL stand-in at the night's date); and duplicate markers
(issue 26): a duplicate uploaded and flagged, a marker given up by its holder's delete, markers
left without their document (ORPHAN_MARKER) and a document left without its marker
(MISSING_MARKER). Every night's report must hold exactly the findings a run over a full export of
the table at the same time and the same inventories gives. The stand-in's clock moves a day per night; S3 Inventory's
daily reports are delivered by its own stand-in (jobs/local/standins/inventory.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from jobs.contract import DocumentItem, DuplicateKind, Status, layout
from jobs.documents.actions import DocumentActions
from jobs.erasure.run import ErasureRun
from jobs.errors import S3ObjectExistsError
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.local.standins import exports as export_standin
from jobs.local.standins import inventory as inventory_standin
from jobs.local.standins.ttl import expire_items
from jobs.observability import CallMetrics
from jobs.reconcile import cli
from jobs.reconcile.plans import AthenaPlan, FilesPlan, NightlyPlan
from jobs.reconcile.run import ReconcileRun
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client
from jobs.store.dynamo import DocumentTable
from jobs.store.dynamo_wire import from_wire, to_wire
from jobs.store.s3 import Buckets
from jobs.store.table_export import TableExports
from tests.jobs.reconcile.duck_athena import DuckAthenaChain

DAY = timedelta(days=1)


class Nights:
    """The stand-ins' clock, a day further each night, and the night's scheduled run."""

    def __init__(self, stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.stack, self.start, self.night = stack, layout.utc_now(), 0
        monkeypatch.setattr(export_standin, "clock", self.now)

    def now(self) -> datetime:
        return self.start + self.night * DAY + (layout.utc_now() - self.start)

    def settings(self) -> JobSettings:
        return JobSettings.from_env()

    def next(self) -> None:
        self.night += 1
        inventory_standin.deliver(self.settings(), self.now())  # what S3 Inventory does each night

    def scheduled(self, run_id: str | None = None) -> dict[str, Any]:
        """The scheduled command, and the summary of the report it wrote."""
        before = set(self.stack.keys(self.stack.settings.store.reports_bucket, layout.RECONCILIATION_PREFIX))
        if run_id is None:
            assert cli.main(["nightly"]) in (0, 1)
        else:
            ReconcileRun(self.settings(), NightlyPlan(), run_id=run_id).execute()
        (summary,) = [
            k
            for k in self.stack.keys(self.stack.settings.store.reports_bucket, layout.RECONCILIATION_PREFIX)
            if k not in before and k.endswith("summary.json")
        ]
        return json.loads(self._get(self.stack.settings.store.reports_bucket, summary))

    def first_state_edited(self, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """The first night, then its kept state's table-state.json rewritten by `edit`."""
        first = self.scheduled()["engineStats"]["night"]
        bucket, key = first["tableState"].removeprefix("s3://").split("/", 1)
        manifest_key = f"{key}/table-state.json"
        manifest = json.loads(self._get(bucket, manifest_key))
        self.stack.s3().put_object(Bucket=bucket, Key=manifest_key, Body=json.dumps(edit(manifest)).encode())

    def _get(self, bucket: str, key: str) -> bytes:
        return self.stack.s3().get_object(Bucket=bucket, Key=key)["Body"].read()

    def findings(self, summary: dict[str, Any]) -> pl.DataFrame:
        body = self._get(self.stack.settings.store.reports_bucket, summary["reportPrefix"] + "findings.parquet")
        return pl.read_parquet(body)

    def by_full_export(self, summary: dict[str, Any]) -> pl.DataFrame:
        """The same night from a full export of the table at the nightly table's time, with the
        same inventories (the table has not changed since the nightly run).
        """
        s = self.settings()
        client = dynamodb_client(s)
        export_standin.attach(client, s.reconcile.export_bucket, s.reconcile.export_prefix)
        exports = TableExports(client, CallMetrics())
        at = datetime.fromisoformat(summary["engineStats"]["night"]["tableAsOf"])
        full = exports.wait(
            exports.start(s.store.table_arn, at, s.reconcile.export_bucket, s.reconcile.export_prefix)
        ).directory
        options = FilesPlan(
            dynamodb_export=full,
            s3_inventories=(summary["inputs"]["raw"], summary["inputs"]["processed"]),
            write_report=False,
        )
        return ReconcileRun(s, options).execute().findings


def _item(stack: Any, doc: str) -> DocumentItem:
    key = {layout.PK_ATTR: layout.user_pk("u1"), layout.SK_ATTR: layout.document_sk(doc)}
    raw = stack.dynamodb().get_item(TableName=stack.settings.store.table_name, Key=to_wire(key))["Item"]
    return DocumentItem.from_item(from_wire(raw))


def _put(stack: Any, item: DocumentItem | dict[str, Any]) -> None:
    wire = item.to_item() if isinstance(item, DocumentItem) else item
    stack.dynamodb().put_item(TableName=stack.settings.store.table_name, Item=to_wire(wire))


def _delete(stack: Any, doc: str) -> None:
    key = {layout.PK_ATTR: layout.user_pk("u1"), layout.SK_ATTR: layout.document_sk(doc)}
    stack.dynamodb().delete_item(TableName=stack.settings.store.table_name, Key=to_wire(key))


def _changed(item: DocumentItem, **changes: Any) -> DocumentItem:
    return item.model_copy(update={"version": item.version + 1, "updatedBy": "operator:nightly-test", **changes})


# Documents whose life the week moves on (the erased user's is ERASED's only one). Uploads of
# d0's file after d0 was ingested, they are its duplicates and hold no marker.
LIFE = ("ldel", "lheld", "lkept")
ERASED = "u2"


def _marker_nights(stack: Any) -> dict[int, list[tuple[str, str, str]]]:
    """The marker findings each night, (code, documentId, kind), from the markers the seeded
    documents hold: d1 deleted behind the jobs' back (nights 1 and 6) leaves its own (d1, d2 and
    d3 share an invoice: which of them holds its marker is the ingest's race), d5 deleted on
    night 4 its two; d6's invoice marker goes on night 5. The twin of d7 (night 1) and d7's
    owner's delete (night 2), which gives its markers up, leave none.
    """

    def orphans(doc: str) -> list[tuple[str, str, str]]:
        return [("ORPHAN_MARKER", doc, kind.value) for kind in _item(stack, doc).held_markers]

    d1, d5, d6 = orphans("d1"), orphans("d5"), [("MISSING_MARKER", "d6", DuplicateKind.INVOICE.value)]
    assert d1 and len(d5) == 2
    nights = {0: [], 1: d1, 2: [], 4: d5, 5: d5 + d6, 6: d1 + d5 + d6, 7: d5 + d6}
    return {night: sorted(found) for night, found in nights.items()}


def _marker_findings(findings: pl.DataFrame) -> list[tuple[str, str, str]]:
    markers = findings.filter(pl.col("code").str.ends_with("_MARKER"))
    kinds = [json.loads(e)["kind"] for e in markers.get_column("evidence")]
    return sorted(zip(markers.get_column("code"), markers.get_column("documentId"), kinds, strict=True))


def _seed(stack: Any, corpus: Path) -> None:
    paths = sorted((corpus / "einvoice" / "ubl").glob("*.xml"))
    documents = [("u1", f"d{i}", path) for i, path in enumerate(paths)]
    # d0 first, so it (not one of its copies) holds the markers of their content and invoice.
    for uploads in (documents, [("u1", doc, paths[0]) for doc in LIFE] + [(ERASED, "e0", paths[0])]):
        for user, doc, path in uploads:
            key = layout.raw_key(user, doc, path.name)
            stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=path.read_bytes())
        IngestRun(stack.settings, BackfillPlan()).execute()


class _Life:
    """The owner's and the operator's actions and the erasure, as their jobs run them."""

    def __init__(self, stack: Any) -> None:
        s, metrics = stack.settings, CallMetrics()
        self.settings, self.table = s, DocumentTable(stack.dynamodb(), s.store.table_name, s.store.index_name, metrics)
        self.buckets = Buckets(stack.s3(), metrics)
        self.actions = DocumentActions(
            self.table, self.buckets, s.store.raw_bucket, s.store.processed_bucket, s.store.retention
        )

    def erase(self, user: str) -> None:
        ErasureRun(self.settings, self.table, self.buckets, CallMetrics()).execute(user)


def _week(stack: Any, clock: Callable[[], datetime]) -> list[Callable[[], None]]:
    """Each night's changes, written before that night's run (`clock`: the nights' date)."""
    s, s3 = stack.settings, stack.s3()
    kept: dict[str, DocumentItem] = {}
    life = _Life(stack)

    def night1() -> None:
        d7 = _item(stack, "d7").rawS3Uri.split("/", 3)[3]
        s3.copy_object(
            Bucket=s.store.raw_bucket,
            Key=layout.raw_key("u1", "twin", "t.xml"),
            CopySource=f"{s.store.raw_bucket}/{d7}",
        )
        IngestRun(s, BackfillPlan()).execute()  # the twin: d7's duplicate, no marker of its own
        assert _item(stack, "twin").reviewReasons == ["DUPLICATE_CONTENT:d7", "DUPLICATE_INVOICE:d7"]
        life.erase(ERASED)  # the user's items and versions go; the erasure's marker stays
        kept["d1"] = _item(stack, "d1")
        _delete(stack, "d1")  # its objects stay: ORPHAN_RESULT, UNPROCESSED_RAW
        d2 = _item(stack, "d2")
        for status in (Status.PROCESSING, Status.FAILED, Status.PROCESSED):  # changed several times
            d2 = _changed(d2, status=status)
            _put(stack, d2)
        s3.put_object(Bucket=s.store.raw_bucket, Key=layout.raw_key("u1", "new1", "a.xml"), Body=b"<Invoice/>")

    def night2() -> None:
        life.actions.delete("u1", "ldel", "user:u1")  # within its grace: hidden, no finding
        life.actions.delete("u1", "d7", "user:u1")  # its markers given up in the delete's transaction
        assert {m.documentId for m in stack.markers()} == {f"d{i}" for i in range(7)}
        _put(stack, _changed(kept["d1"], vendorName="Back Again GmbH"))  # re-created
        brief = _changed(_item(stack, "d3"), documentId="brief")
        _put(stack, brief.model_copy(update={"rawS3Uri": layout.s3_uri(s.store.raw_bucket, "raw/u1/brief/x.xml")}))
        _delete(stack, "brief")  # created and deleted within the night
        s3.delete_object(Bucket=s.store.raw_bucket, Key=_item(stack, "d3").rawS3Uri.split("/", 3)[3])  # MISSING_RAW

    def night3() -> None:  # the night whose run is missed
        _put(stack, _changed(_item(stack, "d4"), status=Status.PROCESSING, leaseOwner="gone", leaseExpiresAt=None))

    def night4() -> None:
        life.actions.hold("u1", "lheld", "operator:legal")  # no TTL while held, no finding
        _delete(stack, "d5")

    def night5() -> None:
        # Past its retention at the nights' date (its TTL too), the raw object already hidden by
        # lifecycle: no MISSING_RAW. The TTL stand-in removes the item two nights later. (Ahead
        # of the real clock: DynamoDB Local itself deletes items whose TTL passed in real time.)
        over = _changed(_item(stack, "lkept"), retainUntil=layout.utc_now() + 2 * DAY)
        _put(stack, over)
        s3.delete_object(Bucket=s.store.raw_bucket, Key=over.rawS3Uri.split("/", 3)[3])
        d6 = _item(stack, "d6")
        _put(stack, {**d6.to_item(), layout.GSI1_PK_ATTR: layout.status_pk(Status.FAILED)})  # INDEX_DRIFT
        _put(stack, _changed(_item(stack, "d4"), status=Status.PROCESSED, leaseOwner=None))  # no longer stuck
        digest = _item(stack, "d6").invoiceMarker
        assert digest is not None
        marker = {layout.PK_ATTR: layout.user_pk("u1"), layout.SK_ATTR: layout.marker_sk(DuplicateKind.INVOICE, digest)}
        stack.dynamodb().delete_item(TableName=s.store.table_name, Key=to_wire(marker))  # MISSING_MARKER

    def night6() -> None:
        _delete(stack, "d1")

    def night7() -> None:
        _put(stack, _changed(kept["d1"], vendorName="Third Time GmbH"))
        # DynamoDB's TTL at the night's date: lkept goes (a delete in tonight's export); ldel's
        # grace and everyone's retention run on.
        assert expire_items(stack.dynamodb(), s.store.table_name, clock()) == 1

    return [night1, night2, night3, night4, night5, night6, night7]


def test_a_week_of_nights_gives_the_findings_of_a_full_export_every_night(
    stack: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCUFLOW_RECONCILE_REANCHOR_DAYS", "6")  # night 6 re-anchors
    _seed(stack, corpus)
    markers = _marker_nights(stack)
    nights = Nights(stack, monkeypatch)
    inventory_standin.deliver(nights.settings(), nights.now())
    plans = [nights.scheduled()["engineStats"]["night"]]
    assert plans[0]["anchor"] and "no table state" in plans[0]["reason"]
    codes: set[str] = set()
    for number, changes in enumerate(_week(stack, nights.now), 1):
        changes()
        nights.next()
        if number == 3:
            continue  # missed: the next night brings two nights forward
        summary = nights.scheduled()
        plans.append(summary["engineStats"]["night"])
        findings = nights.findings(summary)
        assert_frame_equal(findings, nights.by_full_export(summary), check_row_order=True)
        codes |= set(findings.get_column("code").to_list())
        documents = findings.get_column("documentId").to_list()
        assert "brief" not in documents
        assert not {"ldel", "lheld", "e0"} & set(documents) and ERASED not in findings.get_column("userId").to_list()
        # lkept is quiet while its item stands; once TTL deleted it, its result.json is an orphan
        # (it is: the delete came through the incremental export).
        lkept = findings.filter(pl.col("documentId") == "lkept").get_column("code").to_list()
        assert lkept == (["ORPHAN_RESULT"] if number == 7 else []), (number, lkept)
        assert _marker_findings(findings) == markers[number], number
        assert not {"twin", "d7"} & set(documents)
    exports = [(bool(p["anchor"]), len(p["changes"])) for p in plans]
    assert exports == [(True, 0), (False, 1), (False, 1), (False, 2), (False, 1), (True, 0), (False, 1)]
    assert "re-anchored every 6 days" in plans[5]["reason"]
    assert codes >= {"ORPHAN_RESULT", "UNPROCESSED_RAW", "MISSING_RAW", "STUCK_PROCESSING", "INDEX_DRIFT"}
    assert codes >= {"ORPHAN_MARKER", "MISSING_MARKER"}
    kept = [
        k
        for k in stack.keys(nights.settings().reconcile.state_bucket, "table-state/")
        if k.endswith("table-state.json")
    ]
    assert len(kept) == 7
    # The nights between anchors kept earlier states' data files rather than write them again.
    listed = [json.loads(nights._get(nights.settings().reconcile.state_bucket, k))["files"] for k in sorted(kept)]
    assert not any(f["state"] for f in listed[0]) and not any(f["state"] for f in listed[5])  # the anchors
    assert any(f["state"] for files in listed[1:5] for f in files) and any(f["state"] for f in listed[6])


def test_a_failed_night_leaves_the_previous_state_newest(
    stack: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed(stack, corpus)
    nights = Nights(stack, monkeypatch)
    inventory_standin.deliver(nights.settings(), nights.now())
    first = nights.scheduled(run_id="20260101T000000Z-first")["engineStats"]["night"]
    _delete(stack, "d2")
    nights.next()
    # The report's key is taken (a rerun of the same run id): the run fails after its exports.
    with pytest.raises(S3ObjectExistsError):
        nights.scheduled(run_id="20260101T000000Z-first")
    states = [
        k
        for k in stack.keys(nights.settings().reconcile.state_bucket, "table-state/")
        if k.endswith("table-state.json")
    ]
    assert states == [first["tableState"].split("/", 3)[3] + "/table-state.json"]
    again = nights.scheduled()["engineStats"]["night"]
    assert again["state"] == first["tableState"] and len(again["changes"]) == 1


def test_the_athena_engine_merges_an_iceberg_table_and_finds_what_the_polars_chain_finds(
    stack: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same week through the athena engine, Athena played by DuckDB (the Iceberg table a
    DuckDB table, the MERGE and the rules the very statements Athena gets), night by night
    against the polars engine's chain.
    """
    monkeypatch.setenv("DOCUFLOW_RECONCILE_REANCHOR_DAYS", "6")
    _seed(stack, corpus)
    markers = _marker_nights(stack)
    nights = Nights(stack, monkeypatch)
    athena = DuckAthenaChain(stack, nights.settings())

    def both(number: int) -> dict[str, Any]:
        by_polars = ReconcileRun(nights.settings(), NightlyPlan(write_report=False)).execute()
        run = ReconcileRun(nights.settings(), AthenaPlan(nightly=True, write_report=False))
        run.athena_queries = athena  # type: ignore[assignment]
        on_athena = run.execute()
        assert_frame_equal(on_athena.findings, by_polars.findings)
        assert _marker_findings(on_athena.findings) == markers[number], number
        assert on_athena.summary.itemCount == by_polars.summary.itemCount
        return on_athena.summary.engineStats["night"]  # type: ignore[return-value]

    inventory_standin.deliver(nights.settings(), nights.now())
    plans = [both(0)]
    for number, changes in enumerate(_week(stack, nights.now), 1):
        changes()
        nights.next()
        if number != 3:  # the missed night
            plans.append(both(number))
    exports = [(bool(p["anchor"]), len(p["changes"])) for p in plans]
    assert exports == [(True, 0), (False, 1), (False, 1), (False, 2), (False, 1), (True, 0), (False, 1)]
    merges = [q for q in athena.sent if q.startswith("MERGE INTO")]
    assert len(merges) == 6
    state_rows = athena.con.execute(
        f'SELECT count(*) FROM "{nights.settings().reconcile.glue_database}".'
        f'"{nights.settings().reconcile.glue_state_table}" '
        f"WHERE pk = '{layout.STATE_ROW_PK}'"
    ).fetchone()
    assert state_rows == (1,)


def test_the_nightly_polars_run_checks_held_documents_versions_as_a_live_run_does(
    stack: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held document uploaded again without a hold: its new version could be deleted. The
    nightly run (the schedule's) reports it, from the held items of the table it judged; a run
    over the same files without S3's versions cannot.
    """
    _seed(stack, corpus)
    _Life(stack).actions.hold("u1", "lheld", "operator:legal")
    raw_key = _item(stack, "lheld").rawS3Uri.split("/", 3)[3]
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=raw_key, Body=b"<Invoice/>")  # no hold
    nights = Nights(stack, monkeypatch)
    inventory_standin.deliver(nights.settings(), nights.now())
    summary = nights.scheduled()
    held = nights.findings(summary).filter(pl.col("documentId") == "lheld")
    assert "LEGAL_HOLD_MISSING" in held.get_column("code").to_list()
    by_files = nights.by_full_export(summary)
    assert "LEGAL_HOLD_MISSING" not in by_files.get_column("code").to_list()


def test_a_state_kept_before_the_marker_columns_makes_the_night_re_anchor(
    stack: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read as holding no marker, the state would report every marker beside its document as an
    ORPHAN_MARKER; refused, the night starts over from a full export and finds what it gives.
    """
    _seed(stack, corpus)
    nights = Nights(stack, monkeypatch)
    inventory_standin.deliver(nights.settings(), nights.now())
    nights.first_state_edited(
        lambda manifest: manifest
        | {"columns": [c for c in manifest["columns"] if c not in ("contentMarker", "invoiceMarker")]}
    )
    nights.next()
    summary = nights.scheduled()
    night = summary["engineStats"]["night"]
    assert night["anchor"] and night["state"] is None and not night["changes"]
    findings = nights.findings(summary)
    assert_frame_equal(findings, nights.by_full_export(summary), check_row_order=True)
    assert not findings.filter(pl.col("code").str.ends_with("_MARKER")).height


def test_a_state_listing_a_file_about_to_expire_makes_the_night_re_anchor(
    stack: Any, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state kept under a longer expiry than the stack now has (its settings shortened) may list
    a data file the lifecycle removes before the night reads it: the night starts over instead.
    """
    _seed(stack, corpus)
    nights = Nights(stack, monkeypatch)
    inventory_standin.deliver(nights.settings(), nights.now())
    expiry = timedelta(days=nights.settings().reconcile.table_state_days)
    written = (layout.utc_now() - expiry + timedelta(hours=12)).isoformat()

    def aged(manifest: dict[str, Any]) -> dict[str, Any]:
        manifest["files"][0]["writtenAt"] = written
        return manifest

    nights.first_state_edited(aged)
    nights.next()
    summary = nights.scheduled()
    night = summary["engineStats"]["night"]
    assert night["anchor"] and night["state"] is None and not night["changes"]
    assert_frame_equal(nights.findings(summary), nights.by_full_export(summary), check_row_order=True)
