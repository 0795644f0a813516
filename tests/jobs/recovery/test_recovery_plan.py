"""The pure decisions of a restore and of a rollback."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from jobs.contract import DocumentItem, FailureCode, Status, layout
from jobs.contract.actors import ActorKind, actor
from jobs.errors import RestoreRequestError
from jobs.recovery import plan
from jobs.recovery.rollback import Action, step

NOW = datetime(2026, 10, 1, 6, 0, tzinfo=UTC)
TABLE = layout.table_name("prod")
OPS = actor(ActorKind.RECOVERY, "rollback-test")


@dataclass(frozen=True)
class Export:
    where: str
    export_time: datetime
    incremental: bool = False
    table_arn: str | None = f"arn:aws:dynamodb:eu-west-1:1:table/{TABLE}"


@dataclass(frozen=True)
class Point:
    created: datetime
    completed: bool = True


def test_the_newest_full_export_of_this_table_at_or_before_the_time_is_chosen() -> None:
    nightly = [Export(f"e{d}", NOW - timedelta(days=d)) for d in (1, 2, 3)]
    others = [
        Export("changes", NOW - timedelta(hours=1), incremental=True),
        Export("other-table", NOW - timedelta(hours=2), table_arn="arn:aws:dynamodb:eu-west-1:1:table/other"),
    ]
    exports = [*nightly, *others]
    assert plan.choose_export(exports, None, TABLE, "x").where == "e1"
    assert plan.choose_export(exports, NOW - timedelta(days=1, seconds=1), TABLE, "x").where == "e2"
    assert plan.choose_export(exports, NOW - timedelta(days=2), TABLE, "x").where == "e2"  # at the time counts
    with pytest.raises(RestoreRequestError, match="the oldest is"):
        plan.choose_export(exports, NOW - timedelta(days=4), TABLE, "x")
    with pytest.raises(RestoreRequestError, match="no full export of"):
        plan.choose_export(others, None, TABLE, "x")


def test_only_completed_recovery_points_are_restored() -> None:
    points = [Point(NOW - timedelta(days=2)), Point(NOW - timedelta(days=1), completed=False)]
    assert plan.choose_point(points, None, TABLE).created == NOW - timedelta(days=2)
    with pytest.raises(RestoreRequestError, match="no completed"):
        plan.choose_point([Point(NOW, completed=False)], None, TABLE)


def test_pitr_restores_any_second_of_its_window_and_nothing_outside_it() -> None:
    earliest, latest = NOW - timedelta(days=35), NOW - timedelta(minutes=5)
    assert plan.pitr_time(None, earliest, latest) == latest
    assert plan.pitr_time(earliest, earliest, latest) == earliest
    for outside in (earliest - timedelta(seconds=1), latest + timedelta(seconds=1)):
        with pytest.raises(RestoreRequestError, match="outside the PITR window"):
            plan.pitr_time(outside, earliest, latest)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (TABLE, "is the live table"),
        ("docuflow-prod-documents-table-copy", "not a drill table name"),
        (layout.drill_table_name("dev", "x"), "not a drill table name"),  # another stage's
        (layout.drill_table_prefix("prod") + "no spaces", "not a drill table name"),
    ],
)
def test_a_drill_writes_only_a_drill_table_of_its_stage(target: str, message: str) -> None:
    with pytest.raises(RestoreRequestError, match=message):
        plan.check_target(target, "prod", TABLE)
    plan.check_target(layout.drill_table_name("prod", "20261001T060000Z-ab12"), "prod", TABLE)


def _item(**changes: object) -> DocumentItem:
    fields: dict[str, object] = {
        "userId": "u1",
        "documentId": "d1",
        "status": Status.PROCESSED,
        "createdAt": NOW - timedelta(days=3),
        "updatedAt": NOW - timedelta(days=3),
        "updatedBy": "ingest:night-1",
        "rawS3Uri": "s3://raw/raw/u1/d1/a.xml",
        "rawEtag": '"e1"',
        "resultEtag": '"r1"',
        "resultS3Uri": "s3://p/processed/u1/d1/result.json",
        "vendorName": "Good GmbH",
        "version": 3,
    }
    return DocumentItem.model_validate({**fields, **changes})


def test_a_rollback_step_per_kind_of_change() -> None:
    before = _item()
    # Only the item changed: put it back as it was, its version moving on.
    put = step(_item(vendorName="Bad", version=4, updatedAt=NOW), before, NOW, OPS)
    assert put.action == Action.PUT_BACK and put.write == before.evolve(version=5, updatedAt=NOW, updatedBy=OPS)
    # result.json rewritten too: reprocess, fenced on the result.json there now.
    again = step(_item(vendorName="Bad", version=4, resultEtag='"r2"'), before, NOW, OPS)
    assert again.action == Action.REPROCESS and again.write is not None
    assert (again.write.status, again.write.failureCode, again.write.attempts) == (
        Status.FAILED,
        FailureCode.INTERNAL.value,
        0,
    )
    assert (again.write.version, again.write.resultEtag, again.write.rawEtag) == (5, '"r2"', '"e1"')
    # Another upload processed in the window: reprocess the document from the restored item.
    assert step(_item(rawEtag='"e2"', version=4), before, NOW, OPS).action == Action.REPROCESS
    # No item before the deploy: delete; the same item: keep; what a rollback wrote: keep.
    gone = step(_item(version=4), None, NOW, OPS)
    assert gone.action == Action.DELETE and gone.write == _item(version=5, updatedAt=NOW, updatedBy=OPS)
    assert step(_item(version=9, updatedAt=NOW), before, NOW, OPS).action == Action.KEEP
    assert step(again.write, before, NOW + timedelta(minutes=1), OPS).action == Action.KEEP


def _deleted(at: datetime, by: str = "user:u1", **changes: object) -> DocumentItem:
    return _item(
        status=Status.DELETED,
        deletedAt=at,
        deletedBy=by,
        restoreStatus=Status.PROCESSED,
        hardDeleteAt=at + timedelta(days=30),
        **changes,
    )


def test_a_release_since_the_restore_point_stays_released_and_the_rest_is_put_back() -> None:
    held = _item(legalHoldAt=NOW - timedelta(days=2), legalHoldBy="operator:olga")
    live = _item(vendorName="Bad", version=6, updatedAt=NOW)  # released, then rewritten by the bad image
    put = step(live, held, NOW, OPS)
    assert put.action == Action.PUT_BACK and put.write is not None
    assert not put.write.held and put.write.vendorName == "Good GmbH"
    released = "legal hold by an operator (operator:olga) released after the restore point: it stays released"
    assert put.kept == (released,)


def test_lifecycle_attributes_a_machine_wrote_are_no_persons_decision() -> None:
    # The bad image wrote a delete of its own (deletedBy names it): rolled back like any write.
    live = _deleted(NOW, by="ingest:bad-image-run", version=4)
    put = step(live, _item(), NOW, OPS)
    assert put.action == Action.PUT_BACK and put.kept == ()
    assert put.write is not None and not put.write.user_deleted


def test_a_document_its_owner_deleted_before_the_restore_point_is_not_reprocessed() -> None:
    before = _deleted(NOW - timedelta(days=1))
    live = _deleted(NOW - timedelta(days=1), vendorName="Bad", resultEtag='"r2"', version=4)
    left = step(live, before, NOW, OPS)
    assert left.action == Action.LEAVE and left.write is None
    assert "a deleted document is not reprocessed" in left.kept[0]
    # Only its item changed: put back, still deleted.
    put = step(_deleted(NOW - timedelta(days=1), vendorName="Bad", version=4), before, NOW, OPS)
    assert put.action == Action.PUT_BACK and put.write is not None and put.write.user_deleted
