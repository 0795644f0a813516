"""Recovering from our own mistake: a bad image wrote wrong items, and result.json files, for a while.

The stage is backed up (a full export) just before the deploy. The bad image then writes as the
pipeline would (conditional puts, fenced result.json writes) but with wrong values: items of
earlier documents changed alone or with their result.json, and the documents that arrived during
the deploy processed wrongly; more uploads wait unprocessed. Recovery: restore the table as of
before the deploy (the drill, into a new table), roll the live table back to it for every item
changed since (`python -m jobs rollback`), replay the window (`ingest backfill`). It ends with a
clean deep reconcile, every document present, and nothing the bad image wrote left.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta

from jobs.contract import layout
from jobs.contract.actors import ActorKind, actor_kind
from jobs.demo.corpus import generate
from jobs.demo.seed import upload
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.observability import CallMetrics
from jobs.reconcile import LivePlan, ReconcileRun
from jobs.recovery import rollback_cli
from jobs.recovery.drill import DrillOptions, DrillRun
from jobs.recovery.plan import Source
from jobs.store.s3 import Buckets
from tests.jobs.recovery.recovery_helpers import BAD_VENDOR, corrupt, export, ingest


def test_restore_to_before_a_bad_deploy_roll_back_replay_and_every_document_is_back(stack, capsys) -> None:
    earlier = list(generate(3, 10, bad_ratio=0.0, review_ratio=0.0, seed=31))
    ingest(stack, earlier)
    export(stack)  # the nightly backup, before the deploy
    before = {(i.userId, i.documentId): i for i in stack.items()}
    rows_before = len(stack.raw_items())  # the documents and their duplicate markers
    time.sleep(0.01)
    deployed = layout.utc_now()
    time.sleep(0.01)

    # The bad image at work: documents that arrive are processed wrongly, earlier ones rewritten.
    arrived = list(generate(2, 3, bad_ratio=0.0, review_ratio=0.0, seed=37))
    ingest(stack, arrived)
    items = {(i.userId, i.documentId): i for i in stack.items()}
    with_invoice = sorted(k for k, i in before.items() if i.vendorName)
    item_only, with_result = with_invoice[:2], with_invoice[2:4]
    for key in item_only:
        corrupt(stack, items[key], result_too=False)
    for key in [*with_result, *((d.user_id, d.document_id) for d in arrived)]:
        corrupt(stack, items[key], result_too=True)
    waiting = list(generate(2, 2, bad_ratio=0.0, review_ratio=0.0, seed=41))
    upload(stack.s3(), stack.settings.store.raw_bucket, waiting)  # not processed before the rollback
    assert sum(i.vendorName == BAD_VENDOR for i in stack.items()) == 7

    # 1. Restore as of before the deploy into a new table (the drill, from the backup).
    restored = DrillRun(stack.settings, DrillOptions(source=Source.EXPORT, as_of=deployed)).execute().report
    assert restored.itemCount == rows_before and restored.restorePoint < deployed
    # 2. Roll back every item changed since the deploy.
    argv = ["--restored-table", restored.restoredTable, "--since", layout.format_ts(deployed)]
    assert rollback_cli.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["actions"] == {"PUT_BACK": 2, "REPROCESS": 2, "DELETE": 3} and summary["changedSince"] == 0
    # Each removal is on record as the rollback's: the version it removed names the rollback.
    removed = [c for c in stack.stream_changes() if c.event == "REMOVE"]
    assert sorted(c.sort_key for c in removed) == sorted(layout.document_sk(d.document_id) for d in arrived)
    assert {actor_kind(c.old_updated_by or "") for c in removed} == {ActorKind.RECOVERY}
    rolled_back = {(i.userId, i.documentId): i.to_item() for i in stack.items()}
    assert rollback_cli.main(argv) == 0  # a rerun finds what it wrote and leaves it
    assert json.loads(capsys.readouterr().out)["actions"] == {"KEEP": 4}
    assert {(i.userId, i.documentId): i.to_item() for i in stack.items()} == rolled_back
    # 3. Replay the window: a backfill of raw/.
    IngestRun(stack.settings.changed(extract_workers=1), BackfillPlan()).execute()

    outcome = ReconcileRun(stack.settings, LivePlan(deep=True, grace=timedelta(0))).execute()
    assert outcome.summary.totalFindings == 0, outcome.findings.to_dicts()
    final = {(i.userId, i.documentId): i for i in stack.items()}
    every = {(d.user_id, d.document_id) for d in (*earlier, *arrived, *waiting)}
    assert set(final) == every  # every document present, and nothing else
    assert not [k for k, i in final.items() if i.vendorName == BAD_VENDOR]
    for key, item in before.items():  # the earlier documents say what they said before the deploy
        assert (final[key].status, final[key].vendorName, final[key].totalAmount) == (
            item.status,
            item.vendorName,
            item.totalAmount,
        )
    buckets = Buckets(stack.s3(), CallMetrics())
    for user_id, document_id in every:
        body = buckets.get_bytes(stack.settings.store.processed_bucket, layout.result_key(user_id, document_id))
        assert BAD_VENDOR.encode() not in body
