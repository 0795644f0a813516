"""The conditional writes of the document table, as values: a put or a delete guarded by its
condition (an item's version, a lease, a marker's holder), groups that land together in one
transaction, and how a group ended. The builders say which condition each write of the jobs
takes; `jobs.store.dynamo.DocumentTable` sends them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from jobs.contract import DocumentItem, Status, layout
from jobs.contract.duplicates import DuplicateKind, DuplicateMarker, marker_key
from jobs.contract.erasure import ErasureMarker
from jobs.store.dynamo_wire import to_wire

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import DeleteTypeDef, PutTypeDef, TransactWriteItemTypeDef


class Storable(Protocol):
    """What a put writes: a document item, a duplicate marker or a user's erasure marker
    (jobs.contract).
    """

    def to_item(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ConditionalPut:
    item: Storable
    condition: str
    names: dict[str, str]
    values: dict[str, Any]
    # A lost condition hands back the item it met (a marker's holder), instead of only "lost".
    return_old: bool = False

    @cached_property
    def stored(self) -> dict[str, Any]:
        """The item as written (built once: packing a request reads its key, sending it all)."""
        return self.item.to_item()

    @property
    def key(self) -> tuple[str, str]:
        return self.stored[layout.PK_ATTR], self.stored[layout.SK_ATTR]

    def request(self, table_name: str) -> TransactWriteItemTypeDef:
        put: PutTypeDef = {
            "TableName": table_name,
            "Item": to_wire(self.stored),
            "ConditionExpression": self.condition,
            "ExpressionAttributeNames": self.names,
        }
        if self.values:
            put["ExpressionAttributeValues"] = self.values
        if self.return_old:
            put["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return {"Put": put}


@dataclass(frozen=True)
class ConditionalDelete:
    """Delete one item (a document's, a duplicate marker, a user's erasure marker) only while
    `condition` holds.
    """

    item_key: dict[str, str]
    condition: str
    names: dict[str, str]
    values: dict[str, Any]
    return_old: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return self.item_key[layout.PK_ATTR], self.item_key[layout.SK_ATTR]

    def request(self, table_name: str) -> TransactWriteItemTypeDef:
        delete: DeleteTypeDef = {
            "TableName": table_name,
            "Key": to_wire(self.item_key),
            "ConditionExpression": self.condition,
            "ExpressionAttributeNames": self.names,
        }
        if self.values:
            delete["ExpressionAttributeValues"] = self.values
        if self.return_old:
            delete["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return {"Delete": delete}


Write = ConditionalPut | ConditionalDelete


@dataclass(frozen=True)
class WriteGroup:
    """Conditional writes that land together or not at all (one transaction)."""

    writes: tuple[Write, ...]


@dataclass(frozen=True)
class GroupOutcome:
    """How a group ended: landed, or lost, with the writes that lost their condition (by index in
    the group) and the item each met when it asked for it (None otherwise, or when none was there).
    """

    lost: dict[int, dict[str, Any] | None] = field(default_factory=dict)

    @property
    def landed(self) -> bool:
        return not self.lost


def delete_if_version(key: dict[str, str], expected_version: int) -> ConditionalDelete:
    """Delete the item only if it is still the version that was read (nobody wrote it since)."""
    return ConditionalDelete(key, "#v = :v", {"#v": "version"}, {":v": {"N": str(expected_version)}})


def release_delete(claim: DocumentItem) -> ConditionalDelete:
    """Remove a claim item outright, while the claim still holds (as `finish_put` conditions)."""
    held = finish_put(claim, claim.leaseOwner or "", claim.version)
    return ConditionalDelete(claim.key(), held.condition, held.names, held.values)


def erasure_put(marker: ErasureMarker, expected_version: int | None) -> ConditionalPut:
    """Write an erasure marker over the version read (None: only where there is none)."""
    return claim_put(marker, expected_version)


def claim_put(item: Storable, expected_version: int | None) -> ConditionalPut:
    if expected_version is None:
        return ConditionalPut(item, "attribute_not_exists(#pk)", {"#pk": layout.PK_ATTR}, {})
    return version_put(item, expected_version)


def version_put(item: Storable, expected_version: int) -> ConditionalPut:
    """Put `item` over the version its writer read (a reviewer's action, a claim)."""
    return ConditionalPut(item, "#v = :v", {"#v": "version"}, {":v": {"N": str(expected_version)}})


def finish_put(item: DocumentItem, owner: str, expected_version: int) -> ConditionalPut:
    return ConditionalPut(
        item,
        "#v = :v AND #owner = :owner AND #st = :processing",
        {"#v": "version", "#owner": "leaseOwner", "#st": "status"},
        {
            ":v": {"N": str(expected_version)},
            ":owner": {"S": owner},
            ":processing": {"S": Status.PROCESSING.value},
        },
    )


def marker_put(marker: DuplicateMarker, takes_over_from: str | None = None) -> ConditionalPut:
    """Hold an identity: the marker is put if absent or already this document's (or, taking over
    a marker whose holder no longer holds it, only if it still names that holder). A lost
    condition hands back the marker it met: its holder is the document this one duplicates.
    """
    if takes_over_from is not None:
        return ConditionalPut(
            marker, "#doc = :holder", {"#doc": "documentId"}, {":holder": {"S": takes_over_from}}, return_old=True
        )
    return ConditionalPut(
        marker,
        "attribute_not_exists(#pk) OR #doc = :me",
        {"#pk": layout.PK_ATTR, "#doc": "documentId"},
        {":me": {"S": marker.documentId}},
        return_old=True,
    )


def marker_release(user_id: str, kind: DuplicateKind, digest: str, document_id: str) -> ConditionalDelete:
    """Give an identity up: delete its marker only while it names this document."""
    return ConditionalDelete(
        marker_key(user_id, kind, digest), "#doc = :me", {"#doc": "documentId"}, {":me": {"S": document_id}}
    )
