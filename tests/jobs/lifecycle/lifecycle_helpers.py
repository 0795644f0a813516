"""Documents of two types for the lifecycle tests, readers of what the stack really holds, and a
half-done legal hold.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobs.contract import DocumentType, RetentionClass, RetentionPolicy, layout
from jobs.contract.objects import ObjectVersion
from jobs.observability import CallMetrics
from jobs.store.s3 import Buckets

CORPUS = Path(__file__).resolve().parents[2] / "data" / "corpus"
# Credit notes are kept for the compliance period, invoices for the standard one.
POLICY = RetentionPolicy(by_type={DocumentType.CREDIT_NOTE: RetentionClass.COMPLIANCE})


def invoice() -> bytes:
    return (CORPUS / "einvoice" / "ubl" / "EN16931_Einfach.ubl.xml").read_bytes()


def credit_note() -> bytes:
    """The same UBL invoice with the credit-note type code (EN 16931 code 381)."""
    return invoice().replace(b"<cbc:InvoiceTypeCode>380<", b"<cbc:InvoiceTypeCode>381<")


def put_raw(stack: Any, user: str, doc: str, body: bytes, name: str = "invoice.xml") -> str:
    """Upload `body` as the user's document, numbered after the document: the same invoice under
    two documentIds would be a duplicate (docs/review.md), which these tests are not about.
    """
    key = layout.raw_key(user, doc, name)
    numbered = body.replace(_NUMBER, f"<cbc:ID>{doc}</cbc:ID>".encode(), 1)
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=numbered)
    return key


_NUMBER = b"<cbc:ID>471102</cbc:ID>"


@dataclass(frozen=True)
class Entry:
    """One listed version or delete marker, as the assertions compare them."""

    key: str
    marker: bool
    latest: bool


def listed(stack: Any, bucket: str, prefix: str = "") -> list[Entry]:
    """Every version and delete marker under `prefix`, listed (never assumed), sorted."""
    s3 = stack.s3()
    entries = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
        entries += [Entry(v["Key"], False, v["IsLatest"]) for v in page.get("Versions", [])]
        entries += [Entry(m["Key"], True, m["IsLatest"]) for m in page.get("DeleteMarkers", [])]
    return sorted(entries, key=lambda e: (e.key, e.marker, e.latest))


def kinds(entries: list[Entry]) -> Counter[tuple[str, str]]:
    """Per key: how many versions and markers, current or not ("v", "v*", "m", "m*": * latest)."""
    return Counter((e.key, ("m" if e.marker else "v") + ("*" if e.latest else "")) for e in entries)


def _document_versions(stack: Any, user: str, doc: str) -> list[ObjectVersion]:
    """The versions (not the delete markers) of one document's objects, in both buckets."""
    s, buckets = stack.settings, Buckets(stack.s3(), CallMetrics())
    places = (
        (s.store.raw_bucket, layout.raw_document_prefix(user, doc)),
        (s.store.processed_bucket, layout.result_document_prefix(user, doc)),
    )
    return [v for bucket, prefix in places for v in buckets.versions(bucket, prefix) if not v.delete_marker]


def hold_versions_only(stack: Any, user: str, doc: str) -> int:
    """A legal hold on every version of the document's objects, its item left as it was: what a
    hold that set the S3 holds first (as hold() did before it wrote the item first) left when its
    item write lost. Returns how many versions it held.
    """
    versions = _document_versions(stack, user, doc)
    buckets = Buckets(stack.s3(), CallMetrics())
    for version in versions:
        buckets.set_legal_hold(version, on=True)
    return len(versions)


def legal_holds(stack: Any, user: str, doc: str) -> dict[str, bool]:
    """Whether S3 holds each version of the document's objects: "key versionId" -> held."""
    buckets = Buckets(stack.s3(), CallMetrics())
    return {f"{v.key} {v.version_id}": buckets.legal_hold(v) for v in _document_versions(stack, user, doc)}
