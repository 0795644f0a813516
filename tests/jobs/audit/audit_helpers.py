"""A day of varied changes on a live stage, the change log read back, and an independent Python
reading of it (the reference the SQL must agree with).
"""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow.parquet as pq

from jobs.contract import DocumentItem, Status, layout
from jobs.contract.actors import TTL_PRINCIPAL, ActorKind, actor
from jobs.contract.audit import CHANGE_ATTRIBUTES, REMOVE, TTL_ACTOR, Anomaly, AuditRecord
from jobs.observability import CallMetrics
from jobs.store.dynamo import DocumentTable
from jobs.store.dynamo_wire import to_wire

# Today: the log is partitioned by delivery day, and a period's question reads the days around it.
T0 = datetime.now(UTC).replace(hour=8, minute=0, second=0, microsecond=0)
INGEST = actor(ActorKind.INGEST, "night-1")
REVIEWER = actor(ActorKind.REVIEWER, "alice")


def table(stack) -> DocumentTable:
    return DocumentTable(
        stack.dynamodb(), stack.settings.store.table_name, stack.settings.store.index_name, CallMetrics()
    )


def item(user: str, doc: str, **changes: Any) -> DocumentItem:
    base = DocumentItem(
        userId=user,
        documentId=doc,
        status=Status.PROCESSING,
        createdAt=T0,
        updatedAt=T0,
        rawS3Uri=layout.s3_uri("raw", layout.raw_key(user, doc, "a.xml")),
        rawEtag='"e1"',
        updatedBy=INGEST,
    )
    return base.model_copy(update=changes)


def write_varied_day(stack) -> None:
    """Claims and finishes, a review, a re-upload, a deletion, a TTL expiry, and odd items."""
    t = table(stack)
    minute = timedelta(minutes=1)
    for n, doc in enumerate(("d1", "d2", "gone", "expired")):
        claim = item("u1", doc, updatedAt=T0 + n * minute)
        assert t.put_if_version(claim, None)
        done = claim.evolve(
            version=2,
            status=Status.REVIEW_REQUIRED,
            vendorName="ACME",
            updatedAt=T0 + (n + 10) * minute,
            updatedBy=INGEST,
        )
        assert t.put_if_version(done, 1)
    d1 = t.get("u1", "d1")
    settled = d1.evolve(version=3, status=Status.PROCESSED, updatedAt=T0 + 30 * minute, updatedBy=REVIEWER)
    assert t.put_if_version(settled, 2)
    again = settled.evolve(
        version=4, status=Status.PROCESSING, rawEtag='"e2"', updatedAt=T0 + 40 * minute, updatedBy=INGEST
    )
    assert t.put_if_version(again, 3)
    key = {layout.PK_ATTR: {"S": layout.user_pk("u1")}, layout.SK_ATTR: {"S": layout.document_sk("gone")}}
    stack.dynamodb().delete_item(TableName=stack.settings.store.table_name, Key=key)
    raw = stack.dynamodb()
    odd = [
        {layout.PK_ATTR: "LOCK#x", layout.SK_ATTR: "LOCK#x", "owner": "someone"},
        {**item("u2", "noversion").to_item(), "version": "three"},
        {**item("u2", "anonymous").to_item(), "updatedBy": None},
        {**item("u2", "badtime").to_item(), "updatedAt": "yesterday"},
    ]
    for attributes in odd:
        present = {k: v for k, v in attributes.items() if v is not None}
        raw.put_item(TableName=stack.settings.store.table_name, Item=to_wire(present))


def ttl_removal(stack) -> None:
    """What AWS's stream holds for a TTL deletion (DynamoDB Local never deletes by TTL): the item's
    REMOVE with the service identity, put to the delivery stream as the Pipe would.
    """
    expired = table(stack).get("u1", "expired")
    record = {
        "eventID": "ttl-expired-1",
        "eventName": REMOVE,
        "eventSource": "aws:dynamodb",
        "dynamodb": {
            "ApproximateCreationDateTime": datetime.now(UTC).timestamp() + 60,  # after the real records
            "Keys": {k: v for k, v in to_wire(expired.to_item()).items() if k in (layout.PK_ATTR, layout.SK_ATTR)},
            "OldImage": to_wire(expired.to_item()),
            "SequenceNumber": "900000000000000000000",
            "SizeBytes": 100,
        },
        "userIdentity": {"type": "Service", "principalId": TTL_PRINCIPAL},
    }
    stack.audit_pipe.firehose.put_record_batch([json.dumps(record).encode()] * 2)  # delivered twice


def log_rows(stack) -> list[dict[str, Any]]:
    s3, bucket = stack.s3(), stack.settings.audit.audit_bucket
    rows = []
    for key in stack.keys(bucket, layout.AUDIT_CHANGES_PREFIX):
        rows += pq.read_table(io.BytesIO(s3.get_object(Bucket=bucket, Key=key)["Body"].read())).to_pylist()
    return rows


# --- the reference reading, in plain Python ---------------------------------------------------------
def _value(image: dict[str, Any] | None, attribute: str, tag: str) -> Any:
    cell = (image or {}).get(attribute.lower())
    return None if cell is None else cell.get(tag.lower())


def _anomaly(row: dict[str, Any], image: dict[str, Any] | None, removal: bool) -> str | None:
    keys = row["dynamodb"]["keys"] or {}
    pk, sk = (_value(keys, name, "s") or "" for name in ("pk", "sk"))
    version = _value(image, "version", "n")
    tests = [
        (row["eventname"] not in ("INSERT", "MODIFY", "REMOVE"), Anomaly.UNKNOWN_EVENT),
        (not (pk.startswith("USER#") and sk.startswith("DOC#")), Anomaly.KEYS_OUTSIDE_LAYOUT),
        (_value(image, "userId", "s") is None or _value(image, "documentId", "s") is None, Anomaly.NO_IDS),
        (version is None or not version.lstrip("-").isdigit(), Anomaly.NO_VERSION),
        (not removal and _value(image, "updatedBy", "s") is None, Anomaly.NO_ACTOR),
        (not removal and not _contract_time(_value(image, "updatedAt", "s")), Anomaly.BAD_TIME),
    ]
    return next((text for failed, text in tests if failed), None)


def _contract_time(text: str | None) -> bool:
    return re.fullmatch(layout.TS_PATTERN, text or "") is not None


def reference(rows: list[dict[str, Any]]) -> list[AuditRecord]:
    """Every eventID once, as the auditor's record, in timeline order."""
    copies: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        copies.setdefault(row["eventid"], []).append(row)
    records = []
    for event_id, same in copies.items():
        row = same[0]
        data = row["dynamodb"]
        new, old = data["newimage"], data["oldimage"]
        removal = row["eventname"] == REMOVE
        image = old if removal else new
        identity = row["useridentity"] or {}
        ttl = removal and identity.get("type") == "Service" and identity.get("principalid") == TTL_PRINCIPAL
        version = _value(image, "version", "n")
        updated = _value(new, "updatedAt", "s")
        stream_time = datetime.fromtimestamp(data["approximatecreationdatetime"], UTC)
        records.append(
            (
                (data["approximatecreationdatetime"], data["sequencenumber"].zfill(40)),
                int(version) if (version or "").isdigit() else None,
                removal,
                AuditRecord(
                    eventId=event_id,
                    sequenceNumber=data["sequencenumber"],
                    eventName=row["eventname"],
                    time=layout.parse_ts(updated) if not removal and _contract_time(updated) else stream_time,
                    userId=_value(new, "userId", "s") or _value(old, "userId", "s"),
                    documentId=_value(new, "documentId", "s") or _value(old, "documentId", "s"),
                    actor=TTL_ACTOR if ttl else _value(image, "updatedBy", "s"),
                    version=int(version) if (version or "").isdigit() else None,
                    statusBefore=_value(old, "status", "s"),
                    statusAfter=_value(new, "status", "s"),
                    changed=[a for a in CHANGE_ATTRIBUTES if (old or {}).get(a.lower()) != (new or {}).get(a.lower())],
                    deliveries=len(same),
                    anomaly=_anomaly(row, image, removal),
                ),
            )
        )
    return _timeline_order(records)


def _timeline_order(records: list[tuple[tuple[float, str], int | None, bool, AuditRecord]]) -> list[AuditRecord]:
    """Per document: lifetimes (split at removals, in stream order), then version, a removal
    after the version it removed, then sequence number.
    """
    by_doc: dict[tuple[str | None, str | None], list] = {}
    for entry in records:
        by_doc.setdefault((entry[3].userId, entry[3].documentId), []).append(entry)
    keyed = []
    for (user, doc), entries in by_doc.items():
        lifetime = 0
        for stream, version, removal, record in sorted(entries, key=lambda e: e[0]):
            order = (lifetime, version is None, version or 0, removal, stream[1])
            keyed.append(((user or "", doc or "", *order), record))
            lifetime += removal
    return [record for _, record in sorted(keyed, key=lambda pair: pair[0])]
