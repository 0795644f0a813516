"""Documents brought into review on the live local stack, and what the review tests read back."""

from __future__ import annotations

import json
from typing import Any

from jobs.contract import DocumentItem, ResultDocument, layout
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.review.desk import ReviewDesk

# A normalized invoice that adds up but names no seller: the ingest sends it to review.
INVOICE: dict[str, Any] = {
    "invoiceNumber": "R-1",
    "invoiceDate": "2026-03-01",
    "currency": "EUR",
    "subtotal": "100.00",
    "tax": "19.00",
    "totalAmount": "119.00",
}


def body(**fields: Any) -> bytes:
    return json.dumps({**INVOICE, **fields}).encode()


def upload(stack, user: str, doc: str, data: bytes, name: str = "invoice.json") -> None:
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=layout.raw_key(user, doc, name), Body=data)


def ingest(stack) -> Any:
    return IngestRun(stack.settings, BackfillPlan()).execute()


def in_review(stack, user: str = "u1", doc: str = "d1", **fields: Any) -> DocumentItem:
    upload(stack, user, doc, body(**fields))
    ingest(stack)
    return item_of(stack, user, doc)


def item_of(stack, user: str, doc: str) -> DocumentItem:
    return next(i for i in stack.items() if (i.userId, i.documentId) == (user, doc))


def result_of(stack, user: str, doc: str) -> tuple[ResultDocument, str]:
    got = stack.s3().get_object(Bucket=stack.settings.store.processed_bucket, Key=layout.result_key(user, doc))
    return ResultDocument.from_json_bytes(got["Body"].read()), got["ETag"]


def desk(stack, **kwargs: Any) -> ReviewDesk:
    return ReviewDesk.from_settings(stack.settings) if not kwargs else ReviewDesk(stack.settings, **kwargs)
