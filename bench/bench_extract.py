"""Extraction throughput per format: documents/s on one core, against the code of a git ref and a raw parse.

    .venv/bin/python bench/bench_extract.py [--seconds 2] [--ref main] [--rounds 2] [--corpus DIR]
                                            [--out bench/results/extract.json]

Pure CPU: the corpus files are read into memory first, then each format runs round-robin over
its files for about `--seconds` of process CPU time (docs per CPU-second). Two baselines are
measured in the same run on the same bytes:

- the extraction code of `--ref` (default main), exported with `git archive` into a temporary
  folder and run in a child process: "vs ref" is this tree's rate over that one's (a format the
  ref cannot read has none). Rounds alternate ref and tree, and each side keeps its best round,
  so a burst of load on the shared machine does not decide the ratio;
- the bare parse (lxml for XML, orjson for Textract JSON, pypdf open + attachments for PDFs), so
  "overhead" says how much extraction, normalization and validation add to parsing.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import platform
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from lxml import etree
from pypdf import PdfReader

REPO_ROOT = Path(__file__).resolve().parents[1]
# A child measuring a git ref's code imports `jobs` from that export instead of this tree.
CODE_ROOT = Path(os.environ.get("DOCUFLOW_BENCH_CODE_ROOT", REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(CODE_ROOT))

from bench.common import write_json  # noqa: E402
from jobs.extract import ExtractionSettings, extract_document  # noqa: E402

CORPUS = REPO_ROOT / "tests" / "data" / "corpus"
GOAL_DOCS_PER_S = 1000.0
FORMATS: dict[str, tuple[str, str]] = {
    "UBL": ("einvoice/ubl", "*.xml"),
    "CII": ("einvoice/cii", "*.xml"),
    "TEXTRACT_EXPENSE": ("textract", "*.json"),
    "FACTURX_PDF": ("einvoice/facturx-pdf", "*.pdf"),
    "ZUGFERD1": ("../zugferd1", "*.xml"),
}


def _lxml_parse(data: bytes) -> object:
    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))


def _pdf_attachments(data: bytes) -> object:
    return PdfReader(io.BytesIO(data)).attachments


BASELINES: dict[str, tuple[str, Callable[[bytes], object]]] = {
    "UBL": ("lxml.etree.fromstring", _lxml_parse),
    "CII": ("lxml.etree.fromstring", _lxml_parse),
    "TEXTRACT_EXPENSE": ("orjson.loads", orjson.loads),
    "FACTURX_PDF": ("pypdf PdfReader(...).attachments", _pdf_attachments),
    "ZUGFERD1": ("lxml.etree.fromstring", _lxml_parse),
}


def _rate(call: Callable[[bytes], object], documents: list[bytes], seconds: float) -> float:
    for data in documents:  # warm caches (compiled XPath, imports) outside the timing
        call(data)
    # What earlier formats left alive (imports, caches) would otherwise be rescanned by every
    # full GC the Textract dicts trigger, making results depend on the order formats run in.
    gc.collect()
    gc.freeze()
    # CPU time of this process, not wall time: "per core" must not depend on what else the
    # machine runs (CI and shared dev boxes are busy).
    done = 0
    start = time.process_time()
    deadline = start + seconds
    while True:
        for data in documents:
            call(data)
        done += len(documents)
        now = time.process_time()
        if now >= deadline:
            return done / (now - start)


def _documents(corpus: Path, name: str) -> list[bytes]:
    folder, pattern = FORMATS[name]
    return [p.read_bytes() for p in sorted((corpus / folder).glob(pattern)) if p.name != "expected.json"]


def extract_rates(corpus: Path, seconds: float) -> dict[str, float | None]:
    """This process's extraction code (the tree's, or a ref's in a child), docs/s per format."""
    settings = ExtractionSettings()
    rates: dict[str, float | None] = {}
    for name in FORMATS:
        documents = _documents(corpus, name)
        if str(extract_document(documents[0], name, settings).format) != name:
            rates[name] = None  # this code cannot read the format (a ref older than the format)
            continue
        rates[name] = _rate(lambda d: extract_document(d, "bench", settings), documents, seconds)
    return rates


def _ref_rates(ref: str, corpus: Path, seconds: float) -> dict[str, float | None]:
    with tempfile.TemporaryDirectory(prefix="docuflow-bench-ref-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "archive", ref, "jobs"], check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        done = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--child",
                "--seconds",
                str(seconds),
                "--corpus",
                str(corpus),
            ],
            env={**os.environ, "DOCUFLOW_BENCH_CODE_ROOT": tmp},
            check=True,
            capture_output=True,
            text=True,
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _best(rounds: list[dict[str, float | None]]) -> dict[str, float | None]:
    return {name: max((r[name] for r in rounds if r.get(name) is not None), default=None) for name in FORMATS}


def run(corpus: Path, seconds: float, ref: str | None = None, rounds: int = 2) -> dict[str, object]:
    settings = ExtractionSettings()
    tree_rounds: list[dict[str, float | None]] = []
    ref_rounds: list[dict[str, float | None]] = []
    for _ in range(rounds):
        if ref:
            ref_rounds.append(_ref_rates(ref, corpus, seconds))
        tree_rounds.append(extract_rates(corpus, seconds))
    tree, before = _best(tree_rounds), _best(ref_rounds) if ref else {}
    results: dict[str, object] = {}
    for name in FORMATS:
        documents = _documents(corpus, name)
        statuses = {str(extract_document(d, name, settings).validation.status) for d in documents}
        extract_rate = tree[name] or 0.0
        label, baseline = BASELINES[name]
        baseline_rate = _rate(baseline, documents, seconds)
        ref_rate = before.get(name)
        results[name] = {
            "files": len(documents),
            "mean_bytes": sum(map(len, documents)) // max(len(documents), 1),
            "docs_per_s": round(extract_rate, 1),
            "ref": ref,
            "ref_docs_per_s": round(ref_rate, 1) if ref_rate else None,
            "ratio_to_ref": round(extract_rate / ref_rate, 3) if ref_rate else None,
            "baseline": label,
            "baseline_docs_per_s": round(baseline_rate, 1),
            "overhead_over_raw_parse": round(baseline_rate / extract_rate, 2),
            "statuses": sorted(statuses),
            "meets_goal": extract_rate >= GOAL_DOCS_PER_S if name not in PDF_FORMATS else None,
        }
    return results


PDF_FORMATS = ("FACTURX_PDF",)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--ref", default="main", help="git ref whose extraction code is the baseline ('' for none)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results" / "extract.json")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(extract_rates(args.corpus, args.seconds)))
        return 0
    formats = run(args.corpus, args.seconds, args.ref or None, args.rounds)
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(
        f"{'format':<18}{'files':>6}{'docs/s/core':>14}{'ref ' + (args.ref or '-'):>12}{'vs ref':>8}"
        f"{'raw parse/s':>13}{'overhead':>10}  raw parse"
    )
    for name, row in formats.items():
        assert isinstance(row, dict)
        ref_rate = f"{row['ref_docs_per_s']:,.0f}" if row["ref_docs_per_s"] else "n/a"
        ratio = f"{row['ratio_to_ref']:.2f}x" if row["ratio_to_ref"] else "n/a"
        print(
            f"{name:<18}{row['files']:>6}{row['docs_per_s']:>14,.0f}{ref_rate:>12}{ratio:>8}"
            f"{row['baseline_docs_per_s']:>13,.0f}{row['overhead_over_raw_parse']:>9.1f}x  {row['baseline']}"
        )
    print(
        f"peak RSS: {peak_rss_mib:.1f} MiB; goal ≥ {GOAL_DOCS_PER_S:,.0f} docs/s/core for UBL, CII, Textract JSON; "
        f"no format below 0.90x of {args.ref or 'the ref'}"
    )
    report = {
        "benchmark": "extract",
        "seconds_per_format": args.seconds,
        "rounds": args.rounds,
        "ref": args.ref or None,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "goal_docs_per_s": GOAL_DOCS_PER_S,
        "peak_rss_mib": round(peak_rss_mib, 1),
        "formats": formats,
    }
    write_json(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
