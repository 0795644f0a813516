"""The field candidates of a page set: what the labels pair, and the seller from the layout.

Owns the one combination of the two readers: `labels` pairs printed labels with their values, and
when no label names the seller `letterhead` reads it from the page layout (a seller block, the
letterhead, a company-suffix line). Kept apart from both so that neither imports the other.
"""

from __future__ import annotations

from jobs.extract.ocr.labels import Candidate, label_candidates
from jobs.extract.ocr.letterhead import vendor_name
from jobs.extract.ocr.lines import Page


def pair_fields(pages: list[Page]) -> list[Candidate]:
    """The candidates per field type over all pages, in vocabulary order (see `labels`)."""
    kept = label_candidates(pages)
    if "VENDOR_NAME" not in kept and (vendor := vendor_name(pages)):
        kept["VENDOR_NAME"] = [vendor]
    return sorted((c for group in kept.values() for c in group), key=lambda c: c.rank)
