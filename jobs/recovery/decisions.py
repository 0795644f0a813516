"""Whose decision a change was: what a rollback or an undelete leaves as it is (pure).

Recovery undoes what a bad deploy or a bad role wrote; a person's decision made meanwhile is not
that, and stays: an owner's (or an operator's) delete or restore, an operator's legal hold or its
release. The item says who decided: the lifecycle attributes written with the decision
(`deletedBy`, `legalHoldBy`, jobs.contract.actors), which every later writer keeps.
"""

from __future__ import annotations

from datetime import datetime

from jobs.contract import DocumentItem, layout
from jobs.contract.actors import ActorKind, actor_kind

# The actors that are people: what they decided stays decided.
PERSONS = frozenset({ActorKind.USER, ActorKind.OPERATOR, ActorKind.REVIEWER})


def by_person(who: str | None) -> bool:
    return who is not None and actor_kind(who) in PERSONS


def who(actor: str | None) -> str:
    """The actor as a reason reads it: `its owner (user:u1)`, `an operator (operator:olga)`."""
    kind = actor_kind(actor) if actor else None
    if kind is None:
        return "someone"
    return f"its owner ({actor})" if kind is ActorKind.USER else f"an operator ({actor})"


def at(when: datetime | None) -> str:
    return layout.format_ts(when) if when else "an unknown time"


def deleted_by_person(item: DocumentItem) -> bool:
    """Deleted by its owner or an operator (not a vanished upload's tombstone)."""
    return item.user_deleted and by_person(item.deletedBy)
