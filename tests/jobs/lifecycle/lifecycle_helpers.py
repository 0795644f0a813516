"""Documents of two types for the lifecycle tests, and readers of what the stack really holds."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobs.contract import DocumentType, RetentionClass, RetentionPolicy, layout

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
    stack.s3().put_object(Bucket=stack.settings.raw_bucket, Key=key, Body=numbered)
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
