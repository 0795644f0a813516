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

Then the window is replayed (`ingest --backfill`, or the arrival queue): every document gets the
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


class Action(StrEnum):
    KEEP = "KEEP"
    PUT_BACK = "PUT_BACK"
    REPROCESS = "REPROCESS"
    DELETE = "DELETE"


@dataclass(frozen=True)
class Step:
    action: Action
    live: DocumentItem
    write: DocumentItem | None  # what goes over the live item (PUT_BACK, REPROCESS; DELETE: its signed last version)


REASON = "rolled back after a bad deploy"


def step(live: DocumentItem, restored: DocumentItem | None, now: datetime, actor: str) -> Step:
    """What to do with one live item changed since the restore point; `actor` signs the writes."""
    if restored is None:
        return Step(Action.DELETE, live, live.evolve(version=live.version + 1, updatedAt=now, updatedBy=actor))
    # reprocess() moves the version on from the one it is given: the live one, which the put
    # is conditional on.
    before = restored.evolve(version=live.version, resultEtag=live.resultEtag, updatedBy=actor)
    marked = reprocess(before, REASON, now, actor)
    if _same(live, restored) or _same(live, marked):
        return Step(Action.KEEP, live, None)  # as it was, or marked by an earlier rollback
    same_upload = (live.rawS3Uri, live.rawEtag) == (restored.rawS3Uri, restored.rawEtag)
    if same_upload and live.resultEtag == restored.resultEtag:
        return Step(Action.PUT_BACK, live, restored.evolve(version=live.version + 1, updatedAt=now, updatedBy=actor))
    return Step(Action.REPROCESS, live, marked)


def _same(live: DocumentItem, restored: DocumentItem) -> bool:
    ignore = {"version", "updatedAt", "updatedBy"}
    return {k: v for k, v in live.to_item().items() if k not in ignore} == {
        k: v for k, v in restored.to_item().items() if k not in ignore
    }
