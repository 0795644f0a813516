"""Who changed a document item: the actor every writer names in the item's `updatedBy`.

An actor is `{kind}:{id}` (`ingest:20261201T0200Z-1a2b`, `reviewer:alice`), written in the same
request as the change, so the table stream (and the audit log built from it) says who made every
version. Deletions by DynamoDB's TTL carry no item write: the stream record's `userIdentity`
(`principalId` `dynamodb.amazonaws.com`, type `Service`) names them, and `TTL_PRINCIPAL` is that
identity for whoever reads the stream.
"""

from __future__ import annotations

import re
from enum import StrEnum

from jobs.errors import InvalidIdError


class ActorKind(StrEnum):
    INGEST = "ingest"  # a run of the ingest job, by run id
    REPAIR = "repair"  # reconcile --repair, by run id
    REVIEWER = "reviewer"  # a person working the review queue
    USER = "user"  # the document's owner (delete, restore)
    OPERATOR = "operator"  # a person acting for the platform (legal hold)
    ERASURE = "erasure"  # a GDPR erasure run, by run id
    LIFECYCLE = "lifecycle"  # the retention job's hard delete after the grace period, by run id
    RECOVERY = "recovery"  # a rollback after a bad deploy (python -m jobs rollback), by run id


TTL_PRINCIPAL = "dynamodb.amazonaws.com"

_ACTOR = re.compile(r"^(?P<kind>[a-z]+):(?P<id>[^\s:][^\s]{0,199})$")


def actor(kind: ActorKind, ident: str) -> str:
    """The `updatedBy` value of `kind` acting as `ident` (validated like a stored one)."""
    return check_actor(f"{kind.value}:{ident}")


def check_actor(value: str) -> str:
    """`value` when it is a well-formed actor; InvalidIdError (a ValueError, for the
    models that validate with it) naming what is wrong otherwise.
    """
    match = _ACTOR.match(value)
    if match is None:
        raise InvalidIdError(f"actor {value!r} is not '<kind>:<id>' (an id of 1-200 characters, no spaces)")
    kinds = {k.value for k in ActorKind}
    if match["kind"] not in kinds:
        raise InvalidIdError(f"actor kind {match['kind']!r} is not one of {sorted(kinds)}")
    return value


def actor_kind(value: str) -> ActorKind:
    return ActorKind(check_actor(value).split(":", 1)[0])
