"""The contract against live servers: DynamoDB Local and moto S3 over HTTP through boto3."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3

from jobs.contract import DocumentItem, Status, layout
from jobs.contract.schema import ABORT_MULTIPART_RULE, GRACE_RULE
from jobs.observability import CallMetrics
from jobs.store.dynamo import DocumentTable

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)


def _item(user: str, doc: str, status: Status, minutes: int) -> DocumentItem:
    return DocumentItem(
        userId=user,
        documentId=doc,
        status=status,
        createdAt=T0 + timedelta(minutes=minutes),
        updatedAt=T0 + timedelta(minutes=minutes),
        rawS3Uri=layout.s3_uri("raw", layout.raw_key(user, doc, "a.xml")),
        rawEtag='"etag"',
    )


def _table(stack) -> DocumentTable:
    return DocumentTable(
        stack.dynamodb(), stack.settings.store.table_name, stack.settings.store.index_name, CallMetrics()
    )


def test_bootstrap_declares_keys_index_stream_ttl_and_buckets(stack) -> None:
    table = stack.dynamodb().describe_table(TableName=stack.settings.store.table_name)["Table"]
    assert [k["AttributeName"] for k in table["KeySchema"]] == ["PK", "SK"]
    index = table["GlobalSecondaryIndexes"][0]
    assert index["IndexName"] == stack.settings.store.index_name
    assert [k["AttributeName"] for k in index["KeySchema"]] == ["GSI1PK", "GSI1SK"]
    assert index["Projection"]["ProjectionType"] == "ALL"
    assert table["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    ttl = stack.dynamodb().describe_time_to_live(TableName=stack.settings.store.table_name)
    assert ttl["TimeToLiveDescription"]["AttributeName"] == layout.TTL_ATTR
    s3 = stack.s3()
    for bucket in stack.settings.store.bucket_names().values():
        assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
        rules = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
        assert {r["ID"] for r in rules} == {
            "tiering",
            GRACE_RULE,
            "expire-standard",
            "expire-compliance",
            ABORT_MULTIPART_RULE,
        }
    lock = s3.get_object_lock_configuration(Bucket=stack.settings.store.reports_bucket)
    assert lock["ObjectLockConfiguration"]["ObjectLockEnabled"] == "Enabled"


def test_bootstrap_is_idempotent(stack, local_servers) -> None:
    from jobs.local.stack import bootstrap_endpoints

    # A run leaves reports behind; the locked bucket's unchanged rule must not be put again
    # (moto refuses PutObjectLockConfiguration on a bucket that holds objects).
    stack.s3().put_object(Bucket=stack.settings.store.reports_bucket, Key="reconciliation/x.json", Body=b"{}")
    again = bootstrap_endpoints(local_servers.endpoints, stack.settings)
    assert again == stack.settings  # the same queue URL, nothing else changed
    lock = stack.s3().get_object_lock_configuration(Bucket=stack.settings.store.reports_bucket)
    assert lock["ObjectLockConfiguration"]["Rule"]["DefaultRetention"]["Mode"] == "GOVERNANCE"
    # Paginated: ListTables answers 100 names a page, and the session's servers hold every test's tables.
    pages = stack.dynamodb().get_paginator("list_tables").paginate()
    tables = [name for page in pages for name in page["TableNames"]]
    assert tables.count(stack.settings.store.table_name) == 1


def test_user_query_status_index_pagination_and_stream(stack) -> None:
    table = _table(stack)
    for i in range(5):
        assert table.put_if_version(_item("alice", f"doc{i}", Status.REVIEW_REQUIRED, i), None)
    assert table.put_if_version(_item("bob", "docB", Status.REVIEW_REQUIRED, 10), None)
    assert table.put_if_version(_item("alice", "docP", Status.PROCESSED, 20), None)
    # the same put again loses its condition instead of overwriting
    assert not table.put_if_version(_item("alice", "docP", Status.PROCESSED, 20), None)

    mine = table.query_user("alice", None, 100, None)
    assert sorted(i.documentId for i in mine.items) == ["doc0", "doc1", "doc2", "doc3", "doc4", "docP"]
    only_review = table.query_user("alice", Status.REVIEW_REQUIRED, 2, None)
    assert len(only_review.items) == 2 and only_review.next_token
    rest = table.query_user("alice", Status.REVIEW_REQUIRED, 10, only_review.next_token)
    assert len(rest.items) == 3 and rest.next_token is None

    seen: list[DocumentItem] = []
    token = None
    while True:
        page = table.query_status(Status.REVIEW_REQUIRED, 2, token)
        seen += page.items
        token = page.next_token
        if token is None:
            break
    assert [i.documentId for i in seen] == ["docB", "doc4", "doc3", "doc2", "doc1", "doc0"]  # newest first

    claimed = _item("alice", "doc0", Status.PROCESSING, 0).model_copy(update={"version": 2})
    assert table.put_if_version(claimed, 1)
    assert table.query_status(Status.PROCESSING, 10, None).items[0].documentId == "doc0"

    stream_arn = stack.dynamodb().describe_table(TableName=stack.settings.store.table_name)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", endpoint_url=stack.endpoints.dynamodb)
    shards = streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"]
    records = []
    for shard in shards:
        iterator = streams.get_shard_iterator(
            StreamArn=stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records += streams.get_records(ShardIterator=iterator)["Records"]
    changes = [
        (r["dynamodb"]["OldImage"]["status"]["S"], r["dynamodb"]["NewImage"]["status"]["S"])
        for r in records
        if r["eventName"] == "MODIFY"
    ]
    assert changes == [("REVIEW_REQUIRED", "PROCESSING")]
    assert sum(r["eventName"] == "INSERT" for r in records) == 7


def test_exports_configure_plain_boto3(stack) -> None:
    from jobs.local.stack import exports

    text = exports(stack.endpoints, stack.settings)
    env = dict(line.removeprefix("export ").split("=", 1) for line in text.splitlines())
    assert env["AWS_ENDPOINT_URL_DYNAMODB"] == stack.endpoints.dynamodb
    assert env["DOCUFLOW_TABLE_NAME"] == stack.settings.store.table_name
    client = boto3.client(
        "dynamodb",
        endpoint_url=env["AWS_ENDPOINT_URL_DYNAMODB"],
        region_name=env["AWS_DEFAULT_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
    )
    # The worker's servers hold every earlier test's tables: ListTables pages them 100 at a time.
    names = [n for page in client.get_paginator("list_tables").paginate() for n in page["TableNames"]]
    assert stack.settings.store.table_name in names
