"""Object sizes of the acceptance corpus and the storage bill per million documents they imply.

Each corpus document is an upload (raw/) and, extracted as the ingest does, a result.json
(the processed bucket; its size estimated from the extraction, the invoice and the validation as JSON plus
700 bytes of envelope). Prints the size distribution against S3's 128 KB transition minimum and
the yearly storage cost per million documents under the tiers before (GLACIER after 365 days)
and after (GLACIER_IR), at us-east-1 list prices (docs/capacity.md, "Storage tiers").

    PYTHONPATH=. .venv/bin/python bench/object_sizes.py
"""

from __future__ import annotations

from pathlib import Path

import orjson

from jobs.extract.api import extract_document

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus"
KB, GB = 1024, 1024**3
MIN_TRANSITION = MIN_BILLABLE = 128 * KB
# $ per GB-month, and per 1,000 lifecycle transitions into the class.
PRICE = {"STANDARD": 0.023, "STANDARD_IA": 0.0125, "GLACIER_IR": 0.004, "GLACIER": 0.0036}
TRANSITION = {"STANDARD_IA": 0.01, "GLACIER_IR": 0.02, "GLACIER": 0.03}
GLACIER_OVERHEAD = (32 * KB, 8 * KB)  # per object: billed at GLACIER's and at STANDARD's rate


def sizes() -> list[tuple[int, int]]:
    """(raw bytes, result.json bytes) of every corpus document."""
    out = []
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".pdf", ".xml", ".json") or path.name == "expected.json":
            continue
        data = path.read_bytes()
        outcome = extract_document(data, path.name)
        body = {
            "extraction": outcome.raw,
            "invoice": outcome.invoice.model_dump(mode="json") if outcome.invoice else None,
            "validation": outcome.validation.model_dump(mode="json"),
        }
        out.append((len(data), len(orjson.dumps(body, default=str)) + 700))
    return out


def month_cost(size: int, storage_class: str) -> float:
    """$ a month of one object in a class (minimum billable size and Glacier's overhead)."""
    if storage_class == "STANDARD":
        return size / GB * PRICE["STANDARD"]
    if storage_class == "GLACIER":
        glacier, standard = GLACIER_OVERHEAD
        return ((size + glacier) * PRICE["GLACIER"] + standard * PRICE["STANDARD"]) / GB
    return max(size, MIN_BILLABLE) / GB * PRICE[storage_class]


def yearly(size: int, archive: str, minimum: int = MIN_TRANSITION) -> tuple[float, float, float]:
    """(year 1, each later year, transitions) $ of one object: STANDARD 1 month, IA 11, then the
    archive class; objects under `minimum` stay STANDARD.
    """
    if size < minimum:
        return 12 * month_cost(size, "STANDARD"), 12 * month_cost(size, "STANDARD"), 0.0
    first = month_cost(size, "STANDARD") + 11 * month_cost(size, "STANDARD_IA")
    transitions = (TRANSITION["STANDARD_IA"] + TRANSITION[archive]) / 1000
    return first, 12 * month_cost(size, archive), transitions


def main() -> None:
    docs = sizes()
    for label, column in (("raw", 0), ("result.json", 1)):
        values = sorted(d[column] for d in docs)
        small = sum(v < MIN_TRANSITION for v in values)
        above = sum(v for v in values if v >= MIN_TRANSITION) / sum(values)
        print(
            f"{label}: {len(values)} objects, median {values[len(values) // 2] / KB:.1f} KB, "
            f"mean {sum(values) / len(values) / KB:.1f} KB, {small} under 128 KB "
            f"({small / len(values):.0%}), {above:.0%} of bytes above"
        )
    per_million = 1_000_000 / len(docs)
    for label, archive, minimum in (
        ("before: GLACIER, 128 KB minimum", "GLACIER", MIN_TRANSITION),
        ("after: GLACIER_IR, 128 KB minimum", "GLACIER_IR", MIN_TRANSITION),
        ("GLACIER_IR, every object transitioned", "GLACIER_IR", 0),
    ):
        first = later = moves = 0.0
        for raw, result in docs:
            for size in (raw, result):
                a, b, c = yearly(size, archive, minimum)
                first, later, moves = first + a, later + b, moves + c
        five = first + 4 * later + moves
        print(
            f"{label}: year 1 ${first * per_million:,.0f} + transitions ${moves * per_million:,.0f}, "
            f"each later year ${later * per_million:,.0f}, 5 years ${five * per_million:,.0f} per million documents"
        )


if __name__ == "__main__":
    main()
