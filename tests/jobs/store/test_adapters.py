"""The store adapters: AWS answers become domain errors and outcomes (jobs.errors), never botocore's.

Live where the local stack speaks the protocol (DynamoDB Local, moto's S3 and SQS); botocore's
Stubber only for answers the emulators cannot be made to give (throttling, cancellation reasons).
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoRegionError, ReadTimeoutError
from botocore.httpsession import URLLib3Session
from botocore.stub import Stubber

from jobs.contract import (
    DocumentItem,
    DuplicateKind,
    DuplicateMarker,
    ObjectInfo,
    RetentionClass,
    Status,
    layout,
    queue_spec,
)
from jobs.contract.events import parse_body, requeue_body
from jobs.errors import (
    DynamoItemRejectedError,
    DynamoTokenInvalidError,
    DynamoTransactionNotSettledError,
    S3ObjectChangedError,
    S3ObjectExistsError,
    S3ObjectMissingError,
    SettingsError,
    StoreAccessDeniedError,
    StoreRequestError,
    StoreResourceMissingError,
    StoreUnavailableError,
)
from jobs.observability import CallMetrics
from jobs.store import dynamo
from jobs.store._aws import translate
from jobs.store.dynamo import DocumentTable
from jobs.store.dynamo_wire import to_wire
from jobs.store.queue import ArrivalQueue
from jobs.store.s3 import Buckets
from jobs.store.table_writes import WriteGroup, claim_put, marker_put

NOW = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)


def item(user: str, doc: str, status: Status = Status.PROCESSED, version: int = 1) -> DocumentItem:
    return DocumentItem(
        userId=user,
        documentId=doc,
        status=status,
        createdAt=NOW,
        updatedAt=NOW,
        rawS3Uri=f"s3://raw/{layout.raw_key(user, doc, 'a.xml')}",
        rawEtag='"e"',
        version=version,
    )


def client_error(code: str, status: int = 400, **extra: object) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}, **extra}, "Op"
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (client_error("AccessDeniedException", 400), StoreAccessDeniedError),
        (client_error("Anything", 403), StoreAccessDeniedError),
        (client_error("ResourceNotFoundException"), StoreResourceMissingError),
        (client_error("ProvisionedThroughputExceededException"), StoreUnavailableError),
        (client_error("SomethingNew", 503), StoreUnavailableError),
        (client_error("ValidationException"), StoreRequestError),
        (EndpointConnectionError(endpoint_url="http://127.0.0.1:9"), StoreUnavailableError),
        (NoRegionError(), SettingsError),
    ],
)
def test_botocore_errors_become_domain_errors(error: Exception, expected: type[Exception]) -> None:
    translated = translate(error, "op")  # type: ignore[arg-type]
    assert type(translated) is expected
    assert "op" in str(translated)


def test_missing_resources_are_settings_errors_that_name_the_call() -> None:
    error = translate(client_error("NoSuchBucket", 404), "s3.ListObjectsV2")
    assert isinstance(error, SettingsError) and "NoSuchBucket" in str(error)


# --- DynamoDB ---------------------------------------------------------------------------------
def _stubbed_table() -> tuple[DocumentTable, Stubber]:
    client = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    return DocumentTable(client, "t", "i", CallMetrics()), Stubber(client)


def test_transaction_cancellation_reasons_decide_each_put(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynamo.time, "sleep", lambda _s: None)
    table, stub = _stubbed_table()
    puts = [claim_put(item("u", f"d{i}"), None) for i in range(3)]
    reasons = [{"Code": "ConditionalCheckFailed"}, {"Code": "ThrottlingError"}, {"Code": "None"}]
    stub.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        http_status_code=400,
        response_meta={},
        modeled_fields={"CancellationReasons": reasons},
    )
    stub.add_response("transact_write_items", {})
    with stub:
        assert table.put_all(puts, "claim") == [False, True, True]
    stub.assert_no_pending_responses()


def test_an_item_dynamodb_refuses_raises_rejected_not_an_outage() -> None:
    table, stub = _stubbed_table()
    stub.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        http_status_code=400,
        modeled_fields={"CancellationReasons": [{"Code": "None"}, {"Code": "ValidationError", "Message": "too big"}]},
    )
    with stub, pytest.raises(DynamoItemRejectedError, match="too big"):
        table.put_all([claim_put(item("u", "a"), None), claim_put(item("u", "b"), None)], "finish")
    table, stub = _stubbed_table()
    stub.add_client_error("transact_write_items", "ValidationException", http_status_code=400)
    with stub, pytest.raises(DynamoItemRejectedError):
        table.put_all([claim_put(item("u", "a"), None)], "finish")


def _marker(doc: str, digest: str = "a" * 64) -> DuplicateMarker:
    return DuplicateMarker(
        userId="u", kind=DuplicateKind.CONTENT, digest=digest, documentId=doc, createdAt=NOW, updatedBy="ingest:r"
    )


def test_a_group_lands_whole_or_is_lost_whole_naming_the_write_and_the_item_it_met(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dynamo.time, "sleep", lambda _s: None)
    table, stub = _stubbed_table()
    first = WriteGroup((claim_put(item("u", "a"), None), marker_put(_marker("a"))))
    second = WriteGroup((claim_put(item("u", "b"), None), marker_put(_marker("b", "b" * 64))))
    held = {"documentId": {"S": "other"}}
    reasons = [{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Item": held}, {"Code": "None"}, {"Code": "None"}]
    stub.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        http_status_code=400,
        modeled_fields={"CancellationReasons": reasons},
    )
    stub.add_response("transact_write_items", {})  # the second group alone, resent
    with stub:
        lost, landed = table.write_all([first, second], "finish")
    stub.assert_no_pending_responses()
    assert lost.lost == {1: {"documentId": "other"}} and not lost.landed
    assert landed.landed


def test_groups_naming_one_key_never_share_a_transaction() -> None:
    groups = [WriteGroup((claim_put(item("u", f"d{n}"), None), marker_put(_marker(f"d{n}")))) for n in range(3)]
    assert list(dynamo.packed(groups)) == [[0], [1], [2]]  # one marker key: one group per request
    many = [WriteGroup(tuple(claim_put(item("u", f"d{n}-{m}"), None) for m in range(3))) for n in range(40)]
    chunks = list(dynamo.packed(many))
    assert [len(c) for c in chunks] == [25, 15]  # 75 writes in the first: within DynamoDB's 100
    with pytest.raises(ValueError, match="names one key twice"):
        list(dynamo.packed([WriteGroup((claim_put(item("u", "x"), None),) * 2)]))


def test_transactions_still_throttled_after_the_retries_are_an_outage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynamo.time, "sleep", lambda _s: None)
    table, stub = _stubbed_table()
    for _ in range(dynamo.TRANSACT_RETRIES):
        stub.add_client_error(
            "transact_write_items",
            "TransactionCanceledException",
            http_status_code=400,
            modeled_fields={"CancellationReasons": [{"Code": "ThrottlingError"}]},
        )
    with stub, pytest.raises(DynamoTransactionNotSettledError):
        table.put_all([claim_put(item("u", "a"), None)], "claim")


def test_unprocessed_keys_are_resent_with_backoff_and_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr(dynamo.time, "sleep", sleeps.append)
    table, stub = _stubbed_table()
    key = {"PK": {"S": "USER#u"}, "SK": {"S": "DOC#a"}}
    for _ in range(dynamo.BATCH_GET_RETRIES + 1):
        stub.add_response("batch_get_item", {"Responses": {"t": []}, "UnprocessedKeys": {"t": {"Keys": [key]}}})
    with stub, pytest.raises(StoreUnavailableError, match="still unprocessed"):
        table.get_many([("u", "a")])
    assert len(sleeps) == dynamo.BATCH_GET_RETRIES and all(s >= 0 for s in sleeps)
    assert max(sleeps) <= dynamo.TRANSACT_BACKOFF * 2**dynamo.BATCH_GET_RETRIES


def test_unprocessed_keys_that_settle_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynamo.time, "sleep", lambda _s: None)
    table, stub = _stubbed_table()
    wire = to_wire(item("u", "a").to_item())
    stub.add_response(
        "batch_get_item",
        {"Responses": {"t": []}, "UnprocessedKeys": {"t": {"Keys": [{"PK": wire["PK"], "SK": wire["SK"]}]}}},
    )
    stub.add_response("batch_get_item", {"Responses": {"t": [wire]}})
    with stub:
        assert list(table.get_many([("u", "a")])) == [("u", "a")]


@pytest.mark.parametrize(
    "token",
    [
        "not base64!",
        base64.urlsafe_b64encode(b"[1, 2]").decode(),
        base64.urlsafe_b64encode(json.dumps({"PK": 1}).encode()).decode(),
    ],
)
def test_a_tampered_token_is_refused(token: str) -> None:
    with pytest.raises(DynamoTokenInvalidError):
        dynamo.decode_token(token)


def test_a_token_from_another_query_is_refused_by_the_table(stack) -> None:
    table = DocumentTable(
        stack.dynamodb(), stack.settings.store.table_name, stack.settings.store.index_name, CallMetrics()
    )
    for n in range(3):
        assert table.put_if_version(item("alice", f"d{n}"), None)
    page = table.query_user("alice", None, 1, None)
    assert page.next_token
    forged = dynamo.encode_token({"PK": "USER#mallory", "SK": "DOC#d1"})
    with pytest.raises(DynamoTokenInvalidError):
        table.query_user("alice", None, 1, forged)
    with pytest.raises(StoreResourceMissingError):
        DocumentTable(stack.dynamodb(), "no-such-table", "i", CallMetrics()).get("alice", "d0")


# --- S3 ---------------------------------------------------------------------------------------
def test_result_writes_are_fenced_on_the_etag_they_replace(stack) -> None:
    buckets, bucket = Buckets(stack.s3(), CallMetrics()), stack.settings.store.processed_bucket
    std = RetentionClass.STANDARD
    first = buckets.put_json(bucket, "processed/u/d/result.json", b"{}", replaces=None, retention=std)
    with pytest.raises(S3ObjectChangedError):  # exists already
        buckets.put_json(bucket, "processed/u/d/result.json", b'{"a": 1}', replaces=None, retention=std)
    second = buckets.put_json(bucket, "processed/u/d/result.json", b'{"a": 2}', replaces=first, retention=std)
    with pytest.raises(S3ObjectChangedError):  # stale
        buckets.put_json(bucket, "processed/u/d/result.json", b'{"a": 3}', replaces=first, retention=std)
    with pytest.raises(S3ObjectChangedError):  # gone
        buckets.put_json(bucket, "processed/u/x/result.json", b"{}", replaces=second, retention=std)
    assert buckets.tags(bucket, "processed/u/d/result.json") == {layout.RETENTION_TAG: "standard"}
    assert buckets.get_bytes(bucket, "processed/u/d/result.json") == b'{"a": 2}'
    with pytest.raises(S3ObjectMissingError):
        buckets.get_bytes(bucket, "processed/u/nothing/result.json")
    with pytest.raises(S3ObjectChangedError):
        buckets.get_bytes(bucket, "processed/u/d/result.json", etag=first)
    assert buckets.head(bucket, "processed/u/nothing/result.json") is None
    buckets.put_once(bucket, "once.json", b"1", "application/json")
    with pytest.raises(S3ObjectExistsError):
        buckets.put_once(bucket, "once.json", b"2", "application/json")
    with pytest.raises(StoreResourceMissingError):
        next(buckets.list_pages("docuflow-no-such-bucket", "raw/"))


def _lose_first_response(client, operation: str) -> list[str]:
    """The first `operation` request reaches the server and is applied, then its response is
    lost (a read timeout): botocore resends it, as it would on AWS.
    """
    lost: list[str] = []
    session = URLLib3Session()

    def hook(request, **_kwargs):
        if lost:
            return
        lost.append(request.url)
        session.send(request)
        raise ReadTimeoutError(endpoint_url=request.url)

    client.meta.events.register(f"before-send.s3.{operation}", hook)
    return lost


def test_a_write_once_put_whose_response_was_lost_is_our_own_write_not_someone_elses(stack) -> None:
    client = boto3.client("s3", endpoint_url=stack.endpoints.s3)
    buckets = Buckets(client, CallMetrics())
    bucket = stack.settings.store.reports_bucket
    lost = _lose_first_response(client, "PutObject")
    buckets.put_once(bucket, "runs/ingest/2026-11-30/run-1.json", b'{"run": 1}', "application/json")
    assert lost  # the resend met our own write (412): the bytes stored are the ones sent
    assert buckets.get_bytes(bucket, "runs/ingest/2026-11-30/run-1.json") == b'{"run": 1}'
    with pytest.raises(S3ObjectExistsError):  # another writer's bytes are still refused
        buckets.put_once(bucket, "runs/ingest/2026-11-30/run-1.json", b'{"run": 2}', "application/json")


# --- SQS --------------------------------------------------------------------------------------
def test_the_queue_adapter_receives_settles_and_counts(stack) -> None:
    sqs = boto3.client("sqs", endpoint_url=stack.endpoints.sqs)
    queue = ArrivalQueue(sqs, stack.settings.store.arrivals_queue_url, CallMetrics())
    queue.delete(queue.receive(wait_seconds=1))  # the bootstrap's s3:TestEvent
    objects = [ObjectInfo("raw", f"raw/u/d{n}/a b.xml", f'"e{n}"', n, NOW) for n in range(12)]
    assert queue.send([requeue_body(o) for o in objects]) == 12
    received = queue.receive(wait_seconds=1) + queue.receive(wait_seconds=1)
    assert len(received) == 12
    assert sorted(parse_body(m.body)[0].obj.key for m in received) == sorted(o.key for o in objects)  # type: ignore[union-attr]
    assert queue.change_visibility(received[:2], 0) == []
    assert queue.delete(received[2:]) == []
    assert queue.depth()[0] == 2
    assert queue.dead_letter_depth() == 0
    assert queue.visibility_timeout() == queue_spec(stack.settings.stage).visibility_timeout_seconds
    with pytest.raises(StoreResourceMissingError, match=r"queue .*-nope"):  # the error names the queue
        ArrivalQueue(sqs, stack.settings.store.arrivals_queue_url + "-nope", CallMetrics()).receive(wait_seconds=0)


def test_versions_hide_restore_hold_and_delete_for_good(stack) -> None:
    """The version calls of a document's life on the local S3: a retention tag, delete markers
    over current versions, a listing of versions and markers, a legal hold that S3 enforces
    (a held version is refused to DeleteObjects, AccessDenied), and batched deletes.
    """
    s3, bucket = stack.s3(), stack.settings.store.raw_bucket
    buckets = Buckets(s3, CallMetrics())
    for body in (b"v1", b"v2"):
        s3.put_object(Bucket=bucket, Key="raw/u/d/a.xml", Body=body)
    s3.put_object(Bucket=bucket, Key="raw/u/d/b.xml", Body=b"b")
    assert buckets.tag_retention(bucket, "raw/u/d/a.xml", RetentionClass.COMPLIANCE)
    assert buckets.tags(bucket, "raw/u/d/a.xml") == {layout.RETENTION_TAG: "compliance"}
    assert not buckets.tag_retention(bucket, "raw/u/d/none.xml", RetentionClass.STANDARD)
    buckets.hide(bucket, ["raw/u/d/a.xml", "raw/u/d/b.xml"])
    listed = buckets.versions(bucket, "raw/u/d/")
    markers = [v for v in listed if v.delete_marker]
    assert sorted(m.key for m in markers) == ["raw/u/d/a.xml", "raw/u/d/b.xml"] and all(m.is_latest for m in markers)
    assert len([v for v in listed if not v.delete_marker]) == 3
    assert buckets.head(bucket, "raw/u/d/a.xml") is None  # hidden, kept
    (held,) = [v for v in listed if v.key == "raw/u/d/b.xml" and not v.delete_marker]
    buckets.set_legal_hold(held, True)
    assert buckets.legal_hold(held) and not buckets.legal_hold(listed[0] if listed[0] != held else listed[1])
    refused = buckets.delete_versions(bucket, listed)
    assert [(r.key, r.code) for r in refused] == [(held.key, "AccessDenied")]
    assert [v.version_id for v in buckets.versions(bucket, "raw/u/d/")] == [held.version_id]
    buckets.set_legal_hold(held, False)
    assert buckets.delete_versions(bucket, [held]) == [] and buckets.versions(bucket, "raw/u/d/") == []
