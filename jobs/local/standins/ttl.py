"""Stand-in for DynamoDB's TTL on DynamoDB Local, which keeps expired items.

At a given date it deletes every item whose TTL attribute (the one the table declares,
DescribeTimeToLive) is at or before it, as DynamoDB's background deletion would have by then.
Each delete is conditional on the attribute still being that value, so an item rewritten
meanwhile (restored, held) stays.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from jobs.contract import layout

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def expire_items(dynamodb: DynamoDBClient, table_name: str, when: datetime) -> int:
    """Delete the items expired at `when`; returns how many."""
    described = dynamodb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    if described.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        return 0
    attribute = described["AttributeName"]
    cutoff = {"N": str(layout.epoch_seconds(when))}
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
                continue
    return deleted
