"""DynamoDB Streams adapter: the table's stream, shard by shard, as the API hands out its records.

The local stand-in of the audit Pipe reads the stream through it (on AWS the Pipe reads it
itself). A shard is read from its start (TRIM_HORIZON) or after the last sequence number a
reader delivered, `Limit` records a call; a closed shard ends when its iterator does; child
shards appear as parents close. Records come as botocore parses them (attribute values in
DynamoDB JSON, `ApproximateCreationDateTime` a datetime). An iterator that expired or points at
trimmed records raises StreamPositionLostError; every other AWS error leaves as jobs.errors.

API actions: dynamodb:DescribeTable (the stream's ARN), dynamodb:ListTables, and on the stream
dynamodb:DescribeStream, dynamodb:GetShardIterator, dynamodb:GetRecords.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from jobs.errors import StreamPositionLostError
from jobs.observability import CallMetrics
from jobs.store._aws import translated

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodbstreams import DynamoDBStreamsClient

READ_LIMIT = 1000  # GetRecords' maximum
_LOST = {"ExpiredIteratorException": StreamPositionLostError, "TrimmedDataAccessException": StreamPositionLostError}


@dataclass(frozen=True)
class Shard:
    shard_id: str
    parent_id: str | None
    closed: bool  # the shard has an ending sequence number: no records are added to it


def table_names(client: DynamoDBClient, metrics: CallMetrics) -> list[str]:
    names: list[str] = []
    request: dict[str, Any] = {}
    while True:
        with metrics.call("dynamodb.ListTables"), translated("dynamodb.ListTables"):
            page = client.list_tables(**request)
        names += page.get("TableNames", [])
        if not page.get("LastEvaluatedTableName"):
            return names
        request = {"ExclusiveStartTableName": page["LastEvaluatedTableName"]}


def stream_arn(client: DynamoDBClient, table_name: str, metrics: CallMetrics) -> str | None:
    """The table's current stream, or None when it has none."""
    with metrics.call("dynamodb.DescribeTable"), translated("dynamodb.DescribeTable"):
        table = client.describe_table(TableName=table_name)["Table"]
    return table.get("LatestStreamArn")


class TableStream:
    def __init__(self, client: DynamoDBStreamsClient, arn: str, metrics: CallMetrics) -> None:
        self._client = client
        self.arn = arn
        self._metrics = metrics

    def shards(self) -> list[Shard]:
        found: list[Shard] = []
        request: dict[str, Any] = {"StreamArn": self.arn}
        while True:
            with self._metrics.call("dynamodbstreams.DescribeStream"), translated("dynamodbstreams.DescribeStream"):
                description = self._client.describe_stream(**request)["StreamDescription"]
            found += [
                Shard(s["ShardId"], s.get("ParentShardId"), "EndingSequenceNumber" in s.get("SequenceNumberRange", {}))
                for s in description.get("Shards", [])
            ]
            last = description.get("LastEvaluatedShardId")
            if not last:
                return found
            request = {"StreamArn": self.arn, "ExclusiveStartShardId": last}

    def iterator(self, shard_id: str, after: str | None) -> str | None:
        """An iterator from the shard's start, or after sequence number `after`."""
        request: dict[str, Any] = {"StreamArn": self.arn, "ShardId": shard_id}
        if after is None:
            request["ShardIteratorType"] = "TRIM_HORIZON"
        else:
            request |= {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after}
        operation = "dynamodbstreams.GetShardIterator"
        with self._metrics.call(operation), translated(operation, _LOST):
            return self._client.get_shard_iterator(**request).get("ShardIterator")

    def read(self, iterator: str, limit: int = READ_LIMIT) -> tuple[list[dict[str, Any]], str | None]:
        """The next records and the iterator after them (None: the shard is closed and read)."""
        operation = "dynamodbstreams.GetRecords"
        with self._metrics.call(operation), translated(operation, _LOST):
            response = self._client.get_records(ShardIterator=iterator, Limit=limit)
        # Handed on as plain dicts: a stand-in reads them the way a Pipe does, key by key.
        records = cast("list[dict[str, Any]]", response.get("Records", []))
        return list(records), response.get("NextShardIterator")
