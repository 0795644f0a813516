"""OCR paths: pages/s and peak RSS for the text layer, tesseract on clean and on noisy renders.

    .venv/bin/python bench/bench_ocr.py [--invoices N] [--out bench/results/ocr.json]

The forms are generated from tests/data/corpus/einvoice/facturx-pdf exactly as the acceptance
tests make them (jobs.extract.ocr.degrade). Each path runs in its own child process so its peak RSS
(the Python process, and separately the largest tesseract child) is its own. Time is CPU time
of the process plus its tesseract children, per page — the "one core" figure, which holds on a
busy machine where wall time does not; wall time is reported beside it. The baseline runs in the
same child on the same pages: `pytesseract.image_to_string` on the raw image (no deskew, no
denoise, no line rebuilding, no field pairing) for the OCR paths, and pdfplumber's plain
`extract_text` for the text layer. Header-field accuracy per form is recorded with the timings.

Then the layout development set (tests/data/layouts, rendered with reportlab) as text-layer PDFs
and as clean scans: documents with all five header fields right, documents sent to review, and
documents PROCESSED with a wrong value (the ambiguity cases count there when PROCESSED at all).
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.common import write_json  # noqa: E402
from jobs.contract.status import Status  # noqa: E402
from jobs.extract import ExtractionSettings, extract_document  # noqa: E402
from jobs.extract.ocr.degrade import FORMS, HEADER_FIELDS, header_mismatches, make_form  # noqa: E402
from jobs.extract.ocr.tesseract import LANGUAGES  # noqa: E402

CORPUS = REPO_ROOT / "tests" / "data" / "corpus"
PATHS = dict(zip(FORMS, ("text layer", "tesseract clean", "tesseract noisy"), strict=True))
GOAL_S_PER_PAGE = 4.0  # local OCR, one core, 150-dpi page
SETTINGS = ExtractionSettings(ocr_engine="local")


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(call: Callable[[], Any]) -> tuple[Any, float, float]:
    cpu, wall = _cpu(), time.perf_counter()
    result = call()
    return result, _cpu() - cpu, time.perf_counter() - wall


def _pages(form: str, data: bytes) -> list[Any]:
    """The units the baseline reads: PDF pages for the text layer, TIFF frames for scans."""
    if form == "text-layer":
        import pdfplumber

        pdf = pdfplumber.open(io.BytesIO(data))
        return list(pdf.pages)
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    frames = []
    for index in range(image.n_frames):
        image.seek(index)
        frames.append(image.copy())
    return frames


def _baseline(form: str, page: Any) -> str:
    if form == "text-layer":
        return str(page.extract_text())
    import pytesseract

    return str(pytesseract.image_to_string(page, lang=LANGUAGES))


class RssSampler(threading.Thread):
    """Peak RSS of this process and of its largest tesseract child, sampled at 20 Hz.

    getrusage's ru_maxrss survives fork and exec on Linux, so a child would report the size of
    the process that started it; sampling reports what each process really held.
    """

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.peak_self = 0
        self._done = threading.Event()

    def run(self) -> None:
        me = psutil.Process()
        while not self._done.wait(0.05):
            self.peak_self = max(self.peak_self, me.memory_info().rss)
            for child in me.children(recursive=True):
                try:
                    self.peak = max(self.peak, child.memory_info().rss)
                except psutil.Error:
                    continue  # the child ended between listing and reading it

    def stop(self) -> None:
        self._done.set()
        self.join()


def measure(form: str, folder: Path) -> dict[str, Any]:
    """Run one path in this process (the child) on the forms the parent wrote, report its figures."""
    expected = json.loads((CORPUS / "einvoice" / "expected.json").read_text())["invoices"]
    documents = [(path.stem, path.read_bytes()) for path in sorted(folder.glob(f"*.{form}"))]
    sampler = RssSampler()
    sampler.start()
    pages = cpu = wall = base_cpu = base_wall = 0.0
    correct = wrongly_processed = 0
    engines: set[str] = set()
    for stem, data in documents:
        outcome, c, w = _timed(lambda data=data, stem=stem: extract_document(data, stem, SETTINGS))
        cpu, wall = cpu + c, wall + w
        engines.add(outcome.engine)
        wrong = header_mismatches(outcome.invoice, expected[stem])
        correct += len(HEADER_FIELDS) - len(wrong)
        wrongly_processed += bool(wrong) and outcome.validation.status is Status.PROCESSED
        units = _pages(form, data)
        pages += len(units)
        _, c, w = _timed(lambda units=units: [_baseline(form, u) for u in units])
        base_cpu, base_wall = base_cpu + c, base_wall + w
    sampler.stop()
    return {
        "path": PATHS[form],
        "engines": sorted(engines),
        "documents": len(documents),
        "pages": int(pages),
        "cpu_s_per_page": round(cpu / pages, 3),
        "wall_s_per_page": round(wall / pages, 3),
        "pages_per_cpu_s": round(pages / cpu, 2),
        "baseline": "pdfplumber extract_text" if form == "text-layer" else "pytesseract.image_to_string (raw)",
        "baseline_cpu_s_per_page": round(base_cpu / pages, 3),
        "ratio_to_baseline": round(cpu / base_cpu, 2),
        "peak_rss_mib": round(sampler.peak_self / 2**20, 1),
        "peak_rss_tesseract_mib": round(sampler.peak / 2**20, 1),
        "header_fields_correct": correct,
        "header_fields_total": len(HEADER_FIELDS) * len(documents),
        "processed_with_wrong_value": int(wrongly_processed),
    }


def layout_accuracy(form: str) -> dict[str, Any]:
    """The layout development set in one form: right documents, reviews, wrongly PROCESSED."""
    from tests.data.layouts.render import accuracy_cases, cases, render

    right = fields = review = wrongly_processed = 0
    misses: list[str] = []
    cpu = 0.0
    for case in cases():
        pdf = render(case)
        data = pdf if form == "text-layer" else make_form(pdf, form)
        outcome, c, _ = _timed(lambda data=data, case=case: extract_document(data, case.id, SETTINGS))
        cpu += c
        wrong = header_mismatches(outcome.invoice, case.expected)
        status = outcome.validation.status
        review += status is Status.REVIEW_REQUIRED
        wrongly_processed += status is Status.PROCESSED and (bool(wrong) or case.status is not None)
        if case.status is None:
            right += not wrong
            fields += len(HEADER_FIELDS) - len(wrong)
            if wrong:
                misses.append(f"{case.id}: {sorted(wrong)}")
    documents = len(accuracy_cases())
    return {
        "form": form,
        "documents": documents,
        "documents_right": right,
        "documents_right_share": round(right / documents, 4),
        "header_fields_right": fields,
        "header_fields_total": len(HEADER_FIELDS) * documents,
        "ambiguity_cases": len(cases()) - documents,
        "review_required": review,
        "processed_with_wrong_value": wrongly_processed,
        "misses": misses,
        "cpu_s_per_document": round(cpu / len(cases()), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invoices", type=int, default=8)
    parser.add_argument(
        "--layouts",
        choices=("all", "text-layer", "none"),
        default="all",
        help="the layout development set: both forms, the text layer only, or skip it",
    )
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results" / "ocr.json")
    parser.add_argument("--child", choices=list(PATHS), help=argparse.SUPPRESS)
    parser.add_argument("--forms", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child, args.forms)))
        return 0
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="docuflow-ocr-bench-") as tmp:
        # The forms are made here, so rendering and noise generation count in no path's RSS.
        for pdf in sorted((CORPUS / "einvoice" / "facturx-pdf").glob("*.pdf"))[: args.invoices]:
            for form in FORMS:
                (Path(tmp) / f"{pdf.stem}.{form}").write_bytes(make_form(pdf.read_bytes(), form))
        for form in PATHS:
            done = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--child", form, "--forms", tmp],
                check=True,
                capture_output=True,
                text=True,
            )
            rows[form] = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"{'path':<17}{'pages':>6}{'s/page cpu':>11}{'wall':>7}{'pages/s':>9}{'baseline':>10}{'ratio':>7}"
        f"{'RSS MiB':>9}{'tess MiB':>9}{'fields':>8}{'bad':>5}"
    )
    for row in rows.values():
        print(
            f"{row['path']:<17}{row['pages']:>6}{row['cpu_s_per_page']:>11.3f}{row['wall_s_per_page']:>7.2f}"
            f"{row['pages_per_cpu_s']:>9.2f}{row['baseline_cpu_s_per_page']:>10.3f}{row['ratio_to_baseline']:>6.2f}x"
            f"{row['peak_rss_mib']:>9.1f}{row['peak_rss_tesseract_mib']:>9.1f}"
            f"{row['header_fields_correct']:>5}/{row['header_fields_total']:<2}{row['processed_with_wrong_value']:>5}"
        )
    worst = max(rows[f]["cpu_s_per_page"] for f in ("clean", "noisy"))
    print(
        f"goal: local OCR ≤ {GOAL_S_PER_PAGE} s per 150-dpi page on one core — worst {worst:.2f} s "
        f"({'met' if worst <= GOAL_S_PER_PAGE else 'MISSED'}); baseline = raw tesseract / plain text extraction"
    )
    layouts = [
        layout_accuracy(form)
        for form in {"all": ("text-layer", "clean"), "text-layer": ("text-layer",), "none": ()}[args.layouts]
    ]
    if layouts:
        print(f"\n{'layout set':<12}{'documents right':>17}{'fields':>10}{'review':>8}{'wrong PROCESSED':>17}")
    for row in layouts:
        print(
            f"{row['form']:<12}{row['documents_right']:>7}/{row['documents']:<3} ({row['documents_right_share']:.1%})"
            f"{row['header_fields_right']:>6}/{row['header_fields_total']:<4}{row['review_required']:>6}"
            f"{row['processed_with_wrong_value']:>17}"
        )
        for miss in row["misses"]:
            print(f"    miss: {miss}")
    report = {
        "benchmark": "ocr",
        "layouts": layouts,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "goal_cpu_s_per_page": GOAL_S_PER_PAGE,
        "meets_goal": worst <= GOAL_S_PER_PAGE,
        "paths": rows,
    }
    write_json(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
