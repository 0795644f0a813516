"""One table of headline figures from bench/results/*.json, printed at the end of `make bench`.

Each benchmark prints its own detailed table as it runs; this gathers the figures that answer
"how fast, against what, at what memory" in one place. Missing result files are skipped.

    python -m bench.summary
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.common import RESULTS, table

Row = list[str]


def _ingest(r: dict[str, Any]) -> Iterator[Row]:
    for mode in ("drain", "backfill"):
        m = r[mode]
        rate = m["docsPerSecond"]
        yield [
            f"ingest {mode}, {m['documents']:,} documents",
            f"{rate['job']} docs/s",
            f"{m['jobOverCeiling']:.2f} x its emulator ceiling ({rate['ceiling']} docs/s)",
            f"{m['jobPeakRssMb']:.0f} MB",
        ]


def _requests(r: dict[str, Any]) -> Iterator[Row]:
    first, last = r["nights"][0], r["nights"][-1]
    for mode in ("drain", "backfill"):
        yield [
            f"nightly requests ({mode}), {r['new']:,} new documents",
            f"{first[f'{mode}Total']:,} -> {last[f'{mode}Total']:,}",
            f"x{r['growth'][mode]} from {first['stored']:,} to {last['stored']:,} stored",
            "-",
        ]


def _extract(r: dict[str, Any]) -> Iterator[Row]:
    for name, f in r["formats"].items():
        yield [
            f"extraction, {name}",
            f"{f['docs_per_s']:,.0f} docs/s/core",
            f"{f['overhead_over_raw_parse']:.1f} x the time of {f['baseline']}",
            f"{r['peak_rss_mib']:.0f} MB",
        ]


def _reconcile(r: dict[str, Any]) -> Iterator[Row]:
    for f in r["files"]:
        against = f"{f['speedup']} x faster than plain Python" if f.get("speedup") else "baseline skipped"
        yield [
            f"reconcile files, {f['items']:,} x {f['items']:,}",
            f"{f['seconds']} s",
            against,
            f"{f['peakRssMb']:.0f} MB",
        ]
    live = r.get("live")
    if live:
        yield [
            f"reconcile live, {live['items']:,} items + {live['objects']:,} objects",
            f"{live['seconds']} s",
            f"{live['ceilingOverJob']:.2f} x read-only ceiling ({live['ceilingSeconds']} s)",
            f"{live['peakRssMb']:.0f} MB" if live.get("peakRssMb") else "-",
        ]


def _ocr(r: dict[str, Any]) -> Iterator[Row]:
    for p in r["paths"].values():
        yield [
            f"OCR, {p['path']}",
            f"{p['cpu_s_per_page']} s/page",
            f"{p['ratio_to_baseline']} x {p['baseline']}; "
            f"fields {p['header_fields_correct']}/{p['header_fields_total']}",
            f"{p['peak_rss_mib']:.0f} MB",
        ]


def _audit(r: dict[str, Any]) -> Iterator[Row]:
    yield [
        f"audit log stand-in, {r['changes']:,} changes",
        f"{r['standIn']['recordsPerSecond']:,} records/s (writer alone {r['writerRecordsPerSecond']:,})",
        f"{r['standInOverBaseline']:.2f} x the bare stream read ({r['baseline']['recordsPerSecond']:,} records/s)",
        "-",
    ]


def _drill(r: dict[str, Any]) -> Iterator[Row]:
    for d in r["sizes"]:
        yield [
            f"restore drill, {d['documents']:,} documents",
            f"restore {d['restoreSeconds']} s + reconcile {d['reconcileSeconds']} s",
            f"{d['restoreOverLoadCeiling']} x a straight load, {d['reconcileOverReadCeiling']} x the bare reads",
            f"{d['drillPeakRssMb']:.0f} MB",
        ]


SECTIONS: dict[str, Callable[[dict[str, Any]], Iterator[Row]]] = {
    "ingest": _ingest,
    "requests": _requests,
    "extract": _extract,
    "reconcile": _reconcile,
    "ocr": _ocr,
    "audit": _audit,
    "drill": _drill,
}


def rows(results: Path = RESULTS) -> list[Row]:
    found: list[Row] = []
    for name, section in SECTIONS.items():
        path = results / f"{name}.json"
        if path.exists():
            found.extend(section(json.loads(path.read_text())))
    return found


def main() -> None:
    print("\nSummary (bench/results/*.json)")
    print(table(["benchmark", "result", "against", "peak RSS"], rows()))


if __name__ == "__main__":
    main()
