"""DynamoDB adapter: the document table through domain-level calls.

Writes are whole-item puts guarded by the item's `version` (optimistic concurrency): a claim
succeeds only against the version it read, a finish only while its lease and version still hold.
Writes that must land together (a finished document and the duplicate markers it takes or gives
up) go as one group in one transaction. A lost condition becomes `False` (or a GroupOutcome
naming what lost) for the caller; every other failure leaves as a domain
error of jobs.errors (DynamoItemRejectedError for an item DynamoDB will not store,
DynamoTransactionNotSettledError, StoreUnavailableError, …), never as a botocore exception.
"""

from __future__ import annotations

import base64
import json
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from jobs.contract import DocumentItem, Status, layout
from jobs.contract.duplicates import DuplicateKind, DuplicateMarker, marker_key
from jobs.contract.erasure import ErasureMarker
from jobs.errors import (
    DynamoItemRejectedError,
    DynamoTokenInvalidError,
    DynamoTransactionNotSettledError,
    StoreConditionFailedError,
    StoreUnavailableError,
)
from jobs.observability import CallMetrics
from jobs.store._aws import error_code, translate, translated
from jobs.store.dynamo_wire import from_wire, to_wire
from jobs.store.table_writes import (
    GroupOutcome,
    Write,
    WriteGroup,
    claim_put,
    finish_put,
    marker_release,
    version_put,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

BATCH_GET_LIMIT = 100
TRANSACT_CHUNK = 25
TRANSACT_LIMIT = 100  # the most actions one TransactWriteItems request takes
TRANSACT_RETRIES = 8
TRANSACT_BACKOFF = 0.05  # seconds; doubles per try, full jitter
BATCH_GET_RETRIES = 8


def encode_token(key: dict[str, Any] | None) -> str | None:
    """An opaque pagination token for the dashboard (the LastEvaluatedKey, url-safe base64)."""
    if not key:
        return None
    return base64.urlsafe_b64encode(json.dumps(key, sort_keys=True).encode()).decode()


def decode_token(token: str | None) -> dict[str, Any] | None:
    if not token:
        return None
    try:
        key = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, json.JSONDecodeError) as exc:
        raise DynamoTokenInvalidError(f"next-token {token[:40]!r} is not a token this API issued") from exc
    if not isinstance(key, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in key.items()):
        raise DynamoTokenInvalidError(f"next-token {token[:40]!r} is not a token this API issued")
    return key


@dataclass(frozen=True)
class Page:
    items: list[DocumentItem]
    next_token: str | None


class DocumentTable:
    def __init__(self, client: DynamoDBClient, table_name: str, index_name: str, metrics: CallMetrics) -> None:
        self._client = client
        self.table_name = table_name
        self.index_name = index_name
        self._metrics = metrics
        self._resource = f"table {table_name}"  # named in a missing-table error

    # --- reads ------------------------------------------------------------------------------
    def get(self, user_id: str, document_id: str) -> DocumentItem | None:
        key = {layout.PK_ATTR: layout.user_pk(user_id), layout.SK_ATTR: layout.document_sk(document_id)}
        with self._metrics.call("dynamodb.GetItem"), translated("dynamodb.GetItem", resource=self._resource):
            response = self._client.get_item(TableName=self.table_name, Key=to_wire(key), ConsistentRead=True)
        item = response.get("Item")
        return DocumentItem.from_item(from_wire(item)) if item else None

    def get_marker(self, user_id: str, kind: DuplicateKind, digest: str) -> DuplicateMarker | None:
        """The marker of one of the user's identities, if a document holds it."""
        key = marker_key(user_id, kind, digest)
        with self._metrics.call("dynamodb.GetItem.marker"), translated("dynamodb.GetItem.marker"):
            response = self._client.get_item(TableName=self.table_name, Key=to_wire(key), ConsistentRead=True)
        item = response.get("Item")
        return DuplicateMarker.from_item(from_wire(item)) if item else None

    def erasure_marker(self, user_id: str) -> ErasureMarker | None:
        """The user's erasure marker (jobs.contract.erasure), or None when no erasure ran lately."""
        key = to_wire(layout.erasure_key(user_id))
        with self._metrics.call("dynamodb.GetItem.erasure"), translated("dynamodb.GetItem.erasure"):
            response = self._client.get_item(TableName=self.table_name, Key=key, ConsistentRead=True)
        item = response.get("Item")
        return ErasureMarker.from_item(from_wire(item)) if item else None

    def get_many(self, ids: Iterable[tuple[str, str]]) -> dict[tuple[str, str], DocumentItem]:
        """Batch reads (100 keys a request); missing ids are absent.

        UnprocessedKeys (throttling) are resent after a full-jitter backoff, at most
        BATCH_GET_RETRIES times; keys still unprocessed then raise StoreUnavailableError like
        any call that exhausted its retries.
        """
        wanted = list(dict.fromkeys(ids))
        found: dict[tuple[str, str], DocumentItem] = {}
        for start in range(0, len(wanted), BATCH_GET_LIMIT):
            keys = [
                to_wire({layout.PK_ATTR: layout.user_pk(u), layout.SK_ATTR: layout.document_sk(d)})
                for u, d in wanted[start : start + BATCH_GET_LIMIT]
            ]
            request: dict[str, Any] = {self.table_name: {"Keys": keys, "ConsistentRead": True}}
            for attempt in range(BATCH_GET_RETRIES + 1):
                if attempt:
                    time.sleep(random.uniform(0, TRANSACT_BACKOFF * 2**attempt))
                with (
                    self._metrics.call("dynamodb.BatchGetItem"),
                    translated("dynamodb.BatchGetItem", resource=self._resource),
                ):
                    response = self._client.batch_get_item(RequestItems=request)
                for raw in response.get("Responses", {}).get(self.table_name, []):
                    item = DocumentItem.from_item(from_wire(raw))
                    found[(item.userId, item.documentId)] = item
                request = response.get("UnprocessedKeys") or {}
                if not request:
                    break
            if request:
                left = len(request[self.table_name]["Keys"])
                raise StoreUnavailableError(
                    f"dynamodb.BatchGetItem: {left} key(s) still unprocessed after {BATCH_GET_RETRIES} retries",
                    "UnprocessedKeys",
                )
        return found

    def query_user(
        self, user_id: str, status: Status | None, limit: int, token: str | None, exclude: Status | None = None
    ) -> Page:
        """A user's documents (not the other items of their partition), of one `status`, or all
        but the `exclude`d one.
        """
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :doc)",
            "ExpressionAttributeNames": {"#pk": layout.PK_ATTR, "#sk": layout.SK_ATTR},
            "ExpressionAttributeValues": {
                ":pk": {"S": layout.user_pk(user_id)},
                ":doc": {"S": layout.document_sk_prefix()},
            },
            "Limit": limit,
        }
        # A filter, not a key condition: a user's documents are few, one partition holds them.
        if status is not None:
            kwargs["FilterExpression"] = "#st = :st"
            kwargs["ExpressionAttributeValues"][":st"] = {"S": status.value}
        elif exclude is not None:
            kwargs["FilterExpression"] = "#st <> :st"
            kwargs["ExpressionAttributeValues"][":st"] = {"S": exclude.value}
        if "FilterExpression" in kwargs:
            kwargs["ExpressionAttributeNames"]["#st"] = "status"
        return self._query(kwargs, token, "dynamodb.Query")

    def partition_pages(self, user_id: str) -> Iterator[list[dict[str, Any]]]:
        """Every item of a user's partition (documents and any other kind), as plain attribute
        dicts, one Query page at a time; consistent reads: an erasure must see every write.
        """
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeNames": {"#pk": layout.PK_ATTR},
            "ExpressionAttributeValues": {":pk": {"S": layout.user_pk(user_id)}},
            "ConsistentRead": True,
        }
        while True:
            with self._metrics.call("dynamodb.Query.partition"), translated("dynamodb.Query.partition"):
                response = self._client.query(**kwargs)
            yield [from_wire(raw) for raw in response.get("Items", [])]
            if "LastEvaluatedKey" not in response:
                return
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def query_status(self, status: Status, limit: int, token: str | None) -> Page:
        """The cross-user queue of one status through the index, newest first."""
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "IndexName": self.index_name,
            "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeNames": {"#pk": layout.GSI1_PK_ATTR},
            "ExpressionAttributeValues": {":pk": {"S": layout.status_pk(status)}},
            "Limit": limit,
            "ScanIndexForward": False,
        }
        return self._query(kwargs, token, "dynamodb.Query.index")

    def _query(self, kwargs: dict[str, Any], token: str | None, operation: str) -> Page:
        """Gather up to Limit items across pages (a filter may thin a page out).

        The token is the key of the last item returned, so a page never skips what a filter or
        the limit held back.
        """
        limit = kwargs["Limit"]
        start = decode_token(token)
        items: list[DocumentItem] = []
        last_raw: dict[str, Any] | None = None
        held_back = False
        while True:
            if start:
                kwargs["ExclusiveStartKey"] = to_wire(start)
            # DynamoDB answers a start key that does not fit this query (a token from another
            # user or index, or tampered) with a ValidationException.
            invalid = {"ValidationException": DynamoTokenInvalidError} if token else None
            with self._metrics.call(operation), translated(operation, invalid, self._resource):
                response = self._client.query(**kwargs)
            page = response.get("Items", [])
            taken = page[: limit - len(items)]
            held_back = len(taken) < len(page)
            for raw in taken:
                last_raw = from_wire(raw)
                items.append(DocumentItem.from_item(last_raw))
            start = response.get("LastEvaluatedKey") and from_wire(response["LastEvaluatedKey"])
            if len(items) == limit or not start:
                break
        if not (held_back or start) or last_raw is None:
            return Page(items, None)
        key_names = [layout.PK_ATTR, layout.SK_ATTR]
        if "IndexName" in kwargs:
            key_names += [layout.GSI1_PK_ATTR, layout.GSI1_SK_ATTR]
        return Page(items, encode_token({k: last_raw[k] for k in key_names}))

    def scan(self, segment: int, total_segments: int) -> Iterator[dict[str, Any]]:
        """One segment of a parallel Scan, page by page, as plain attribute dicts."""
        paginator = self._client.get_paginator("scan")
        pages = paginator.paginate(TableName=self.table_name, Segment=segment, TotalSegments=total_segments)
        iterator = iter(pages)
        while True:
            with self._metrics.call("dynamodb.Scan"), translated("dynamodb.Scan", resource=self._resource):
                page = next(iterator, None)
            if page is None:
                return
            for raw in page.get("Items", []):
                yield from_wire(raw)

    # --- writes -----------------------------------------------------------------------------
    def reserve_textract_pages(self, night: date, pages: int, cap: int, expires_at: int) -> int | None:
        """Add `pages` to `night`'s Textract page counter unless that would pass `cap`: one
        conditional UpdateItem, so every task of the night shares one budget. The pages the night
        has spent with these, or None (nothing added) when they do not fit. `expires_at`
        (epoch seconds) is the counter's TTL, set by its first reservation.

        ADD is not idempotent: a request botocore resends after a lost response counts twice,
        which can only spend the budget early, never pass it.
        """
        if pages > cap:
            return None
        key = to_wire(layout.textract_pages_key(night))
        values = {
            ":pages": pages,
            ":room": cap - pages,
            ":cap": cap,
            ":entity": layout.ENTITY_TEXTRACT_PAGES,
            ":expires": expires_at,
        }
        operation = "dynamodb.UpdateItem.textract_pages"
        try:
            with (
                self._metrics.call(operation),
                translated(operation, {CONDITION_FAILED: _PagesRefused}, self._resource),
            ):
                response = self._client.update_item(
                    TableName=self.table_name,
                    Key=key,
                    UpdateExpression=f"ADD {_PAGES} :pages SET entityType = :entity, {_CAP} = :cap, "
                    f"{layout.TTL_ATTR} = if_not_exists({layout.TTL_ATTR}, :expires)",
                    ConditionExpression=f"attribute_not_exists({_PAGES}) OR {_PAGES} <= :room",
                    ExpressionAttributeValues=to_wire(values),
                    ReturnValues="UPDATED_NEW",
                )
        except _PagesRefused:
            return None
        return int(from_wire(response["Attributes"])[_PAGES])

    def put_if_version(self, item: DocumentItem, expected_version: int | None) -> bool:
        """Put `item` if the stored version is `expected_version` (None: only if absent)."""
        return self.put_all([claim_put(item, expected_version)], "dynamodb.TransactWrite.claim")[0]

    def put_if_lease(self, item: DocumentItem, owner: str, expected_version: int) -> bool:
        """Put the finished item only while `owner` still holds the claim it made."""
        return self.put_all([finish_put(item, owner, expected_version)], "dynamodb.TransactWrite.finish")[0]

    def put_giving_up_markers(self, item: DocumentItem, expected_version: int, held: DocumentItem) -> bool:
        """Put `item` over `expected_version` and delete, in the same transaction, the duplicate
        markers `held` holds (a tombstone: no document any more). A marker another document holds
        by now is not given up; False when the item itself changed.
        """
        releases = {k: marker_release(held.userId, k, d, held.documentId) for k, d in held.held_markers.items()}
        landed, _ = self.put_with_markers(item, expected_version, releases, "dynamodb.TransactWrite.tombstone")
        return landed is not None

    def put_with_markers(
        self,
        item: DocumentItem,
        expected_version: int,
        markers: Mapping[DuplicateKind, Write],
        operation: str,
        without: Callable[[DocumentItem, DuplicateKind], DocumentItem] | None = None,
    ) -> tuple[DocumentItem | None, set[DuplicateKind]]:
        """Put `item` over `expected_version` with its marker writes in one transaction. A marker
        write that loses its condition (the marker is another document's by now, or gone) is left
        out and the rest sent again, the item first passed through `without` when given (it then
        no longer claims that identity). Returns the item as it landed (None: the stored item
        changed meanwhile) and the kinds left out.
        """
        pending, dropped = dict(markers), set[DuplicateKind]()
        while True:
            group = WriteGroup((version_put(item, expected_version), *pending.values()))
            outcome = self.write_all([group], operation)[0]
            if outcome.landed or 0 in outcome.lost:
                return (item if outcome.landed else None), dropped
            lost = {kind for index, kind in enumerate(pending, start=1) if index in outcome.lost}
            for kind in lost:
                del pending[kind]
                item = without(item, kind) if without else item
            dropped |= lost

    def put_all(self, writes: Sequence[Write], operation: str, chunk: int = TRANSACT_CHUNK) -> list[bool]:
        """Many conditional puts (or deletes), each on its own (see write_all), `chunk` a request:
        False when its condition failed.
        """
        groups = [WriteGroup((w,)) for w in writes]
        return [outcome.landed for outcome in self.write_all(groups, operation, chunk)]

    def write_all(
        self, groups: Sequence[WriteGroup], operation: str, chunk: int = TRANSACT_CHUNK
    ) -> list[GroupOutcome]:
        """Groups of conditional writes, packed into TransactWriteItems requests.

        A group lands whole or not at all; a request carries up to `chunk` groups (at most
        TRANSACT_LIMIT writes, never two on one key). Even a single put goes as a
        transaction: botocore gives each one an idempotency token, so a resend after a lost
        response cannot meet our own write and read it as a lost condition (a plain conditional
        PutItem can). A transaction is all-or-nothing, so when one condition fails the request
        is cancelled; the cancellation reasons say which writes lost, their group is settled as
        lost (with the item each lost write met, when it asked for it), and the other groups are
        sent again (after a backoff when the cause was throttling or a conflicting transaction).
        Groups still throttled or conflicting after TRANSACT_RETRIES raise
        DynamoTransactionNotSettledError: an outage, never a lost claim. An item DynamoDB refuses
        to store (ValidationException: a value it cannot hold) raises DynamoItemRejectedError for
        the whole request; the caller decides whether to resend the groups one by one to find it.
        """
        outcome: list[GroupOutcome | None] = [None] * len(groups)
        for request in packed(groups, chunk):
            pending = request
            for attempt in range(TRANSACT_RETRIES):
                pending, contended = self._transact(groups, pending, outcome, operation)
                if not pending:
                    break
                if contended:
                    time.sleep(random.uniform(0, TRANSACT_BACKOFF * 2**attempt))
            if pending:
                raise DynamoTransactionNotSettledError(
                    f"{len(pending)} conditional write group(s) still throttled or conflicting after "
                    f"{TRANSACT_RETRIES} tries"
                )
        return [o if o is not None else GroupOutcome() for o in outcome]

    def _transact(
        self, groups: Sequence[WriteGroup], pending: list[int], outcome: list[GroupOutcome | None], operation: str
    ) -> tuple[list[int], bool]:
        """Send one transaction; returns the groups to resend and whether the cause calls for backoff."""
        members = [(g, m) for g in pending for m in range(len(groups[g].writes))]
        request = [groups[g].writes[m].request(self.table_name) for g, m in members]
        try:
            with self._metrics.call(operation):
                try:
                    self._client.transact_write_items(TransactItems=request)
                except ClientError as exc:
                    if error_code(exc) != "TransactionCanceledException":
                        raise _write_error(exc, operation, self._resource) from exc
                    raise _TransactionCancelled(exc.response.get("CancellationReasons") or [{}] * len(members)) from exc
                except BotoCoreError as exc:
                    raise translate(exc, operation, self._resource) from exc
        except _TransactionCancelled as cancelled:
            reasons = cancelled.reasons
        else:
            for g in pending:
                outcome[g] = GroupOutcome()
            return [], False
        lost, retry, contended = _cancellation(members, reasons, operation)
        for g, met in lost.items():
            outcome[g] = GroupOutcome(met)
        return [g for g in pending if g in retry and g not in lost], contended


def _cancellation(
    members: Sequence[tuple[int, int]], reasons: Sequence[Mapping[str, Any]], operation: str
) -> tuple[dict[int, dict[int, dict[str, Any] | None]], set[int], bool]:
    """A cancelled transaction's reasons, per (group, write): the groups that lost a condition
    (with the item each failed write met), the groups to resend, and whether contention or
    throttling (rather than a neighbour's failure) calls for backoff. Anything else raises.
    """
    lost: dict[int, dict[int, dict[str, Any] | None]] = {}
    retry: set[int] = set()
    contended = False
    for (g, m), reason in zip(members, reasons, strict=False):
        code = reason.get("Code", "None")
        if code == "ConditionalCheckFailed":
            lost.setdefault(g, {})[m] = from_wire(reason["Item"]) if reason.get("Item") else None
        elif code in ("None", "TransactionConflict", "ThrottlingError"):
            retry.add(g)
            contended = contended or code != "None"
        elif code == "ValidationError":
            raise DynamoItemRejectedError(f"{operation}: {reason.get('Message', 'item rejected')}", code)
        else:
            raise StoreUnavailableError(f"{operation}: transaction cancelled: {code} {reason.get('Message', '')}", code)
    return lost, retry, contended


CONDITION_FAILED = "ConditionalCheckFailedException"
# The counter's attributes: the pages reserved, and the cap they were reserved under (for a reader).
_PAGES = "pages"
_CAP = "pageCap"


class _PagesRefused(StoreConditionFailedError):
    """The night's counter has no room for the pages asked (stays inside this module)."""


def packed(groups: Sequence[WriteGroup], per_request: int = TRANSACT_CHUNK) -> Iterator[list[int]]:
    """Group indices per request, in order: at most `per_request` groups and TRANSACT_LIMIT
    writes each, and no key written twice in one request (DynamoDB refuses that).
    """
    chunk: list[int] = []
    keys: set[tuple[str, str]] = set()
    items = 0
    for index, group in enumerate(groups):
        mine = [w.key for w in group.writes]
        if len(set(mine)) != len(mine):
            raise ValueError(f"a write group names one key twice: {mine}")
        if chunk and (len(chunk) == per_request or items + len(mine) > TRANSACT_LIMIT or keys & set(mine)):
            yield chunk
            chunk, keys, items = [], set(), 0
        chunk.append(index)
        keys.update(mine)
        items += len(mine)
    if chunk:
        yield chunk


class _TransactionCancelled(StoreConditionFailedError):
    """Inside the adapter only: a cancelled transaction, counted by the metrics as conditional."""

    def __init__(self, reasons: Sequence[Mapping[str, Any]]) -> None:
        super().__init__("transaction cancelled", "TransactionCanceledException")
        self.reasons = reasons


def _write_error(exc: ClientError, operation: str, resource: str) -> Exception:
    if error_code(exc) == "ValidationException":
        message = exc.response.get("Error", {}).get("Message", "")
        return DynamoItemRejectedError(f"{operation}: DynamoDB refused the item: {message}", "ValidationException")
    return translate(exc, operation, resource)
