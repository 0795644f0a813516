"""Stand-in for DynamoDB's TTL on DynamoDB Local, which keeps expired items.

At a given date it deletes every item whose TTL attribute (the one the table declares,
DescribeTimeToLive) is at or before it, as DynamoDB's background deletion would have by then.
Each delete is conditional on the attribute still being that value, so an item rewritten
meanwhile (restored, held) stays.

DynamoDB names its TTL deletions in the stream record itself (`userIdentity`, the service
`TTL_PRINCIPAL`); DynamoDB Local's records carry no identity, and a DeleteItem can carry none. So
the stand-in journals each removal (the item's keys, version and TTL value) in a table beside the
stage's (`layout.ttl_journal_name`), before it deletes, and the Pipe's stand-in
(`audit_pipe.py`) gives a REMOVE record of a journalled version the identity DynamoDB would have
given it. The journal lives in DynamoDB Local, so `local advance` and the `local up` process share
it; a delete that loses its condition takes its entry back.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from jobs.contract import layout
from jobs.contract.actors import TTL_PRINCIPAL
from jobs.contract.audit import REMOVE, TTL_IDENTITY_TYPE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

REMOVAL, ATTRIBUTE, VALUE = "removal", "attribute", "value"  # the journal's attributes
Journal = Mapping[str, tuple[str, Any]]  # removal key -> (TTL attribute, its value as the item had it)


def removal_key(image: Mapping[str, Any]) -> str | None:
    """An item's journal key from its DynamoDB JSON (a scanned item, a stream record's old image):
    its keys and version; None when it has no keys.
    """
    keys = [_value(image.get(name), "S") for name in (layout.PK_ATTR, layout.SK_ATTR)]
    if not all(isinstance(k, str) for k in keys):
        return None
    return orjson.dumps([*keys, _value(image.get("version"), "N")]).decode()


def _value(attribute: object, kind: str) -> object:
    return attribute.get(kind) if isinstance(attribute, dict) else None


def expire_items(dynamodb: DynamoDBClient, table_name: str, when: datetime) -> int:
    """Delete the items expired at `when`; returns how many."""
    described = dynamodb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    if described.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        return 0
    attribute = described["AttributeName"]
    cutoff = {"N": str(layout.epoch_seconds(when))}
    journal = _journal(dynamodb, table_name)
    key_names = (layout.PK_ATTR, layout.SK_ATTR)
    deleted = 0
    pages = dynamodb.get_paginator("scan").paginate(
        TableName=table_name,
        FilterExpression="#ttl <= :cutoff",
        ExpressionAttributeNames={"#ttl": attribute},
        ExpressionAttributeValues={":cutoff": cutoff},
    )
    for page in pages:
        for item in page.get("Items", []):
            key = removal_key(item)
            assert key is not None  # a table item has its keys
            entry = {REMOVAL: {"S": key}}
            dynamodb.put_item(TableName=journal, Item={**entry, ATTRIBUTE: {"S": attribute}, VALUE: item[attribute]})
            try:
                dynamodb.delete_item(
                    TableName=table_name,
                    Key={k: item[k] for k in key_names},
                    ConditionExpression="#ttl = :seen",
                    ExpressionAttributeNames={"#ttl": attribute},
                    ExpressionAttributeValues={":seen": item[attribute]},
                )
                deleted += 1
            except dynamodb.exceptions.ConditionalCheckFailedException:
                dynamodb.delete_item(TableName=journal, Key=entry)
    return deleted


def _journal(dynamodb: DynamoDBClient, table_name: str) -> str:
    """The journal table, created on first use."""
    name = layout.ttl_journal_name(table_name)
    try:
        dynamodb.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": REMOVAL, "AttributeType": "S"}],
            KeySchema=[{"AttributeName": REMOVAL, "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        dynamodb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    except dynamodb.exceptions.ResourceInUseException:
        pass  # made by an earlier advance
    return name


def journalled(dynamodb: DynamoDBClient, table_name: str) -> Journal:
    """The removals the stand-in made on the stage's table (none when it never ran)."""
    try:
        pages = dynamodb.get_paginator("scan").paginate(TableName=layout.ttl_journal_name(table_name))
        return {i[REMOVAL]["S"]: (i[ATTRIBUTE]["S"], i[VALUE]) for page in pages for i in page.get("Items", [])}
    except dynamodb.exceptions.ResourceNotFoundException:
        return {}


def with_ttl_identity(record: dict[str, Any], journal: Journal) -> dict[str, Any]:
    """`record` as DynamoDB would have written it: a REMOVE of a journalled version carries the TTL's
    service identity. Any other record (a job's delete among them), and anything malformed, as it came.
    """
    data = record.get("dynamodb")
    old = data.get("OldImage") if isinstance(data, dict) else None
    if record.get("eventName") != REMOVE or not isinstance(old, dict):
        return record
    entry = journal.get(removal_key(old) or "")
    if entry is None or old.get(entry[0]) != entry[1]:
        return record
    return {**record, "userIdentity": {"type": TTL_IDENTITY_TYPE, "principalId": TTL_PRINCIPAL}}
