"""The audit log of document changes, defined once: what is stored and what an auditor reads.

Stored: every record of the table's stream, as EventBridge Pipes hands it to Amazon Data Firehose,
which converts it to Parquet against the Glue table built from `stream_record()` and writes it
under `changes/dt=YYYY-MM-DD/` of the audit-log bucket (docs/audit.md). A Pipe's input template
only copies values (no string functions, no comparison of the two images), so the log keeps the
record's own shape rather than a flattened one: its eventID and sequence number, the event name,
the stream's time, the keys, both item images (every contract attribute, as DynamoDB JSON) and the
userIdentity that marks TTL deletions. The local stand-in of Pipe + Firehose
(jobs/local/standins/audit_pipe.py) writes the same columns from the same definition.

Read: `AuditRecord`, one change as an auditor sees it (who, when, which version, the status before
and after, the summary attributes that changed), computed from the stored columns by one SQL
query (jobs.audit.sql) on Athena or on DuckDB. The Pipe delivers at least once: copies of a
record share its eventID and count once.

Who removed an item: a TTL deletion's record carries userIdentity `TTL_PRINCIPAL`; a job that
deletes an item first writes the item's last version naming itself (`updatedBy`), so a REMOVE
record's old image names whoever removed it.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, field_serializer

from jobs.contract import layout
from jobs.contract.actors import TTL_PRINCIPAL
from jobs.contract.item import DocumentItem


# --- Hive types (what Glue declares; the local writer maps the same tree to Arrow) -------------
@dataclass(frozen=True)
class Struct:
    fields: tuple[tuple[str, HiveType], ...]

    def field(self, name: str) -> HiveType:
        return dict(self.fields)[name]


@dataclass(frozen=True)
class Array:
    element: HiveType


HiveType = str | Struct | Array


def hive(t: HiveType) -> str:
    """The Hive type text Glue takes; field names lowercased (Hive's way; Firehose's OpenX JSON
    deserializer and Athena match names case-insensitively).
    """
    if isinstance(t, str):
        return t
    if isinstance(t, Array):
        return f"array<{hive(t.element)}>"
    return "struct<" + ",".join(f"{name.lower()}:{hive(inner)}" for name, inner in t.fields) + ">"


_S = Struct((("S", "string"),))
_N = Struct((("N", "string"),))


def dynamodb_json(annotation: Any) -> HiveType:
    """The DynamoDB JSON of a DocumentItem field, as DocumentItem.to_item writes it: `{"S": …}`,
    `{"N": …}`, `{"BOOL": …}`, `{"L": [...]}` (an optional field is simply absent when None).
    """
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (annotation,) = args
        args = list(typing.get_args(annotation))
    if typing.get_origin(annotation) is list:
        return Struct((("L", Array(dynamodb_json(args[0]))),))
    if annotation in (int, Decimal):
        return _N
    if annotation is bool:
        return Struct((("BOOL", "boolean"),))
    if annotation in (str, datetime, date) or (isinstance(annotation, type) and issubclass(annotation, Enum)):
        return _S
    raise TypeError(f"no DynamoDB JSON type for {annotation!r}: extend jobs.contract.audit.dynamodb_json")


@cache
def item_image() -> Struct:
    """Every attribute a document item stores: the derived keys and TTL, then each DocumentItem
    field (also the `item` column of the DynamoDB export's Glue table).
    """
    keys = [(name, _S) for name in (layout.PK_ATTR, layout.SK_ATTR, layout.GSI1_PK_ATTR, layout.GSI1_SK_ATTR)]
    fields = [(name, dynamodb_json(f.annotation)) for name, f in DocumentItem.model_fields.items()]
    return Struct((*keys, (layout.TTL_ATTR, _N), *fields))


@cache
def stream_record() -> Struct:
    """The columns of the change log: a DynamoDB stream record as a Pipe delivers it."""
    return Struct(
        (
            ("eventID", "string"),
            ("eventName", "string"),
            ("eventSourceARN", "string"),
            (
                "dynamodb",
                Struct(
                    (
                        ("ApproximateCreationDateTime", "double"),  # epoch seconds
                        ("SequenceNumber", "string"),
                        ("SizeBytes", "bigint"),
                        ("Keys", Struct(((layout.PK_ATTR, _S), (layout.SK_ATTR, _S)))),
                        ("NewImage", item_image()),
                        ("OldImage", item_image()),
                    )
                ),
            ),
            ("userIdentity", Struct((("type", "string"), ("principalId", "string")))),
        )
    )


def glue_columns() -> tuple[tuple[str, str], ...]:
    """(column, Hive type) of the changes table, in order; partitioned by `layout.AUDIT_PARTITION`."""
    return tuple((name.lower(), hive(t)) for name, t in stream_record().fields)


# --- events and actors ----------------------------------------------------------------------
INSERT, MODIFY, REMOVE = "INSERT", "MODIFY", "REMOVE"
EVENT_NAMES = (INSERT, MODIFY, REMOVE)
# The actor of a TTL deletion (no job wrote it: the stream record's userIdentity says so).
TTL_ACTOR = f"ttl:{TTL_PRINCIPAL}"
TTL_IDENTITY_TYPE = "Service"

# What changes with every write and is reported apart (version, time, actor), and what a change
# summary lists when it differs between the two images.
BOOKKEEPING = ("version", "updatedAt", "updatedBy")
CHANGE_ATTRIBUTES = tuple(name for name in DocumentItem.model_fields if name not in BOOKKEEPING)


class Anomaly:
    """Why a stored record is not an ordinary change of a document item (the record is kept,
    reported with this text, and left out of the completeness count).
    """

    UNKNOWN_EVENT = "unknown event name"
    KEYS_OUTSIDE_LAYOUT = "keys outside the layout (not a document item)"
    NO_IDS = "no userId/documentId in the item"
    NO_VERSION = "no numeric version"
    NO_ACTOR = "a write without an actor (updatedBy)"
    BAD_TIME = "updatedAt is not a contract timestamp"


# --- what an auditor reads ------------------------------------------------------------------
class AuditRecord(BaseModel):
    """One change of one document item, as `audit history` / `audit actor` print it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eventId: str
    sequenceNumber: str
    eventName: str
    # When: the new version's updatedAt (written in the same request as the change); the stream's
    # time (second precision) for a removal.
    time: datetime
    userId: str | None
    documentId: str | None
    actor: str | None
    version: int | None  # the version this change wrote; for a REMOVE, the version it removed
    statusBefore: str | None
    statusAfter: str | None
    changed: list[str]
    deliveries: int  # copies of this record in the log (the Pipe delivers at least once)
    anomaly: str | None = None

    @field_serializer("time")
    def _contract_time(self, value: datetime) -> str:
        return layout.format_ts(value)

    @classmethod
    def from_row(cls, row: dict[str, str | None]) -> AuditRecord:
        """A query row (every column text, as both engines return it) as a record."""
        changed = row.get("changed") or ""
        return cls.model_validate({**row, "changed": changed.split(",") if changed else []})


RECORD_COLUMNS = tuple(AuditRecord.model_fields)
