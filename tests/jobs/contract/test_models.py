"""The item and result.json models: Decimal money in and out, no floats, bounded sizes."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from boto3.dynamodb.types import TypeSerializer
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from jobs.contract import (
    ITEM_ATTRIBUTES,
    DocumentFormat,
    DocumentItem,
    Invoice,
    LineItem,
    ResultDocument,
    SourceObject,
    Status,
    ValidationResult,
    can_transition,
    check_transition,
    layout,
)
from jobs.errors import InvalidTransitionError
from jobs.store.dynamo_wire import from_wire, to_wire

NOW = datetime(2026, 11, 29, 10, 0, 0, 123456, tzinfo=UTC)


def make_item(**overrides: object) -> DocumentItem:
    fields: dict[str, object] = {
        "userId": "u1",
        "documentId": "d1",
        "status": Status.PROCESSED,
        "createdAt": NOW,
        "updatedAt": NOW,
        "rawS3Uri": "s3://raw/raw/u1/d1/a.xml",
        "rawEtag": '"e1"',
        "totalAmount": Decimal("1204.50"),
        "invoiceDate": date(2026, 3, 15),
        "vendorName": "ACME",
    }
    fields.update(overrides)
    return DocumentItem.model_validate(fields)


@given(st.decimals(min_value=Decimal("-1e12"), max_value=Decimal("1e12"), places=2, allow_nan=False))
def test_money_survives_the_dynamodb_wire_format_exactly(amount: Decimal) -> None:
    item = make_item(totalAmount=amount)
    wire = to_wire(item.to_item())
    assert wire["totalAmount"] == {"N": str(amount)}
    back = DocumentItem.from_item(from_wire(wire))
    assert back.totalAmount == amount
    assert back == item


def test_floats_are_refused_for_money() -> None:
    with pytest.raises(ValidationError, match="never a float"):
        make_item(totalAmount=12.3)


def test_item_has_derived_keys_and_only_contract_attributes() -> None:
    item = make_item().to_item()
    assert item["PK"] == layout.user_pk("u1")
    assert item["SK"] == layout.document_sk("d1")
    assert item["GSI1PK"] == layout.status_pk("PROCESSED")
    assert item["GSI1SK"] == item["createdAt"] == "2026-11-29T10:00:00.123Z"
    assert item["invoiceDate"] == "2026-03-15"
    assert set(item) <= ITEM_ATTRIBUTES
    assert not any(isinstance(v, float) for v in item.values())
    TypeSerializer().serialize({"M": item})  # boto3 accepts every value as it is


def test_item_text_is_bounded() -> None:
    item = make_item(failureMessage="x" * 100_000, reviewReasons=[f"R{i}" for i in range(500)])
    assert len(item.failureMessage or "") <= 1024
    assert len(item.reviewReasons) == 20
    assert len(json.dumps(item.to_item(), default=str)) < 8_000


def test_changed_copies_are_validated_like_new_items() -> None:
    item = make_item().evolve(vendorName="v" * 100_000, status=Status.FAILED)
    assert item.status == Status.FAILED and len(item.vendorName or "") == 512


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        make_item(createdAt=datetime(2026, 1, 1))


def test_result_json_round_trips_with_money_as_strings() -> None:
    invoice = Invoice(
        invoiceNumber="INV-1",
        currency="EUR",
        totalAmount=Decimal("1337.50"),
        lineItems=[LineItem(lineNumber=1, amount=Decimal("1337.50"), quantity=Decimal("1"))],
    )
    result = ResultDocument(
        userId="u1",
        documentId="d1",
        source=SourceObject(
            bucket="b", key="raw/u1/d1/a.xml", etag='"e"', size=10, lastModified=NOW, format=DocumentFormat.UBL
        ),
        engine="ubl",
        extraction={"text": "<Invoice/>"},
        invoice=invoice,
        validation=ValidationResult(status=Status.PROCESSED),
        createdAt=NOW,
        processedAt=NOW,
        pipelineVersion="test",
    )
    data = json.loads(result.to_json_bytes())
    assert data["invoice"]["totalAmount"] == "1337.50"
    assert data["invoice"]["lineItems"][0]["amount"] == "1337.50"
    assert ResultDocument.from_json_bytes(result.to_json_bytes()) == result
    schema = ResultDocument.model_json_schema()
    assert {"schemaVersion", "source", "invoice", "validation", "pipelineVersion"} <= set(schema["properties"])


def test_status_transitions() -> None:
    assert can_transition(None, Status.PROCESSING)
    assert not can_transition(None, Status.PROCESSED)
    assert can_transition(Status.PROCESSING, Status.FAILED)
    assert can_transition(Status.FAILED, Status.PROCESSING)
    assert can_transition(Status.PROCESSED, Status.FAILED)  # reconcile: result.json is gone
    assert not can_transition(Status.FAILED, Status.PROCESSED)
    with pytest.raises(InvalidTransitionError, match="FAILED -> REVIEW_REQUIRED"):
        check_transition(Status.FAILED, Status.REVIEW_REQUIRED)
