"""After a bad deploy: what to do with each item changed since, given its restored version (pure).

The restored table holds the items as they were before the deploy (a drill table restored as of
then). Every live item changed since then is compared with its restored version:

- KEEP: the same item except for its version (a change undone already, or marked for
  reprocessing by an earlier run of the rollback): nothing to do, so a rerun changes nothing;
- PUT_BACK: the same upload and the same result.json, only the item was changed: the item as it
  was, written over the changed one (its version moves on, so no writer's condition is fooled);
- REPROCESS: result.json was written again, or the raw object is another upload: the item as it
  was, marked for reprocessing (FAILED + INTERNAL, attempts reset: what the ingest re-claims), and
  pointing at the result.json that exists now, which the replay's fenced write replaces;
- DELETE: no item before the deploy: the bad image made it; the replay makes it again from raw/.
  Its last version first names the rollback (a DeleteItem carries no actor: the REMOVE record's
  old image is what the change log reads the remover from), then it goes while still that version.

- LEAVE: a person's decision since the restore point that any write would reverse: the owner's
  (or an operator's) delete, whose item and hidden objects stay as they are until the grace ends,
  or a restore of a document deleted before the restore point. Nothing is written.

A person's decision is never undone: the rollback undoes the bad image's writes, and a person is
not the bad image. The lifecycle attributes tell who decided what and when (`deletedAt`/
`deletedBy`, `legalHoldAt`/`legalHoldBy`, written with the decision, and kept by every later
writer, the bad image included). A legal hold placed (or released) since the restore point is
carried onto whatever the step writes, so a held document keeps its hold and has no TTL; a held
document the bad image made is marked for reprocessing instead of deleted. Every step that
leaves a decision as it is names it (`kept`, one line each), for the plan and the run summary.
An erasure since the restore point left no item to compare and no version to bring back: the
rollback only rewrites live items and never re-creates one from the restored table.

Then the window is replayed (`ingest backfill`, or the arrival queue): every document gets the
good image's item and result.json. Items the bad image deleted have no live version to compare;
the replay claims their raw objects as new documents. A reviewer's decision made since the
restore point is lost for reprocessed documents, which go back to review.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from jobs.contract import DocumentItem
from jobs.reconcile.repair import reprocess
from jobs.recovery.decisions import at, by_person, deleted_by_person, who


class Action(StrEnum):
    KEEP = "KEEP"
    PUT_BACK = "PUT_BACK"
    REPROCESS = "REPROCESS"
    DELETE = "DELETE"
    LEAVE = "LEAVE"


@dataclass(frozen=True)
class Step:
    action: Action
    live: DocumentItem
    write: DocumentItem | None  # what goes over the live item (PUT_BACK, REPROCESS; DELETE: its signed last version)
    kept: tuple[str, ...] = ()  # the person's decisions since the restore point left as they are, one line each

    def left_alone(self) -> dict[str, object]:
        """The document, what the step does around the decisions it keeps, and why (summaries)."""
        return {
            "userId": self.live.userId,
            "documentId": self.live.documentId,
            "action": self.action.value,
            "reasons": list(self.kept),
        }


REASON = "rolled back after a bad deploy"


def step(live: DocumentItem, restored: DocumentItem | None, now: datetime, actor: str) -> Step:
    """What to do with one live item changed since the restore point; `actor` signs the writes."""
    deletion, hold = _deletion_since(live, restored), _hold_since(live, restored)
    kept = tuple(reason for reason in (deletion, hold) if reason)
    if deletion:
        return Step(Action.LEAVE, live, None, kept)
    if restored is None:
        if hold and live.held:  # the bad image made it, a person held it: it stays, made again by the replay
            return _marked_or_kept(live, reprocess(live, REASON, now, actor), kept)
        return Step(Action.DELETE, live, live.evolve(version=live.version + 1, updatedAt=now, updatedBy=actor))
    if hold:
        restored = restored.evolve(legalHoldAt=live.legalHoldAt, legalHoldBy=live.legalHoldBy)
    if _same(live, restored):
        return Step(Action.LEAVE if kept else Action.KEEP, live, None, kept)
    if _same_upload(live, restored) and live.resultEtag == restored.resultEtag:
        put_back = restored.evolve(version=live.version + 1, updatedAt=now, updatedBy=actor)
        return Step(Action.PUT_BACK, live, put_back, kept)
    if restored.user_deleted:
        # Deleted by a person before the restore point and still deleted: reprocessing would take
        # it out of its delete (and a DELETED item is not claimed again), so a person decides.
        reason = (
            f"deleted by {who(restored.deletedBy)} before the restore point; its upload or result.json changed "
            "since: a deleted document is not reprocessed"
        )
        return Step(Action.LEAVE, live, None, (*kept, reason))
    # reprocess() moves the version on from the one it is given: the live one, which the put
    # is conditional on.
    before = restored.evolve(version=live.version, resultEtag=live.resultEtag, updatedBy=actor)
    return _marked_or_kept(live, reprocess(before, REASON, now, actor), kept)


def _marked_or_kept(live: DocumentItem, marked: DocumentItem, kept: tuple[str, ...]) -> Step:
    if _same(live, marked):  # marked by an earlier rollback
        return Step(Action.LEAVE if kept else Action.KEEP, live, None, kept)
    return Step(Action.REPROCESS, live, marked, kept)


def _deletion_since(live: DocumentItem, restored: DocumentItem | None) -> str | None:
    """Why the document's deleted (or no longer deleted) state is a person's decision made since
    the restore point, or None. A write of the restored version would undo it: it stays.
    """
    if deleted_by_person(live) and (restored is None or restored.deletedAt != live.deletedAt):
        return (
            f"deleted by {who(live.deletedBy)} at {at(live.deletedAt)}, after the restore point: it stays "
            f"deleted, its objects hidden, until its grace ends at {at(live.hardDeleteAt)}"
        )
    if restored is not None and deleted_by_person(restored) and not live.user_deleted and _same_upload(live, restored):
        return (
            f"restored after the restore point (deleted by {who(restored.deletedBy)} at "
            f"{at(restored.deletedAt)}, before it): it stays restored"
        )
    return None


def _hold_since(live: DocumentItem, restored: DocumentItem | None) -> str | None:
    """Why the document's legal hold (or its release) is a person's decision made since the
    restore point, or None. It is carried onto what the rollback writes.
    """
    before = restored.legalHoldAt if restored is not None else None
    if live.legalHoldAt == before:
        return None
    if live.held and by_person(live.legalHoldBy):
        return (
            f"legal hold placed by {who(live.legalHoldBy)} at {at(live.legalHoldAt)}, after the restore point: "
            "it stays (no TTL)"
        )
    if restored is not None and restored.held and not live.held:
        return f"legal hold by {who(restored.legalHoldBy)} released after the restore point: it stays released"
    return None


def _same_upload(live: DocumentItem, restored: DocumentItem) -> bool:
    return (live.rawS3Uri, live.rawEtag) == (restored.rawS3Uri, restored.rawEtag)


def _same(live: DocumentItem, restored: DocumentItem) -> bool:
    ignore = {"version", "updatedAt", "updatedBy"}
    return {k: v for k, v in live.to_item().items() if k not in ignore} == {
        k: v for k, v in restored.to_item().items() if k not in ignore
    }
