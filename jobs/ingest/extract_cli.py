"""`python -m jobs extract FILE… [--json]`: run the extraction library on local files for debugging.

The ingest's reading of one document, without the stack: nothing is stored and nothing published.
It runs through `run_job` as every command does (argparse's refusal exit 2, a bug 70); a file it
cannot read is reported on stderr and exits 2 once the others are read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from jobs.contract.engines import OcrEngine
from jobs.contract.invoice import ExtractionOutcome
from jobs.extract.api import extract_document
from jobs.extract.settings import ExtractionSettings
from jobs.ingest.job import EXTRACT
from jobs.runtime.context import Cli, RunContext, run_job


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jobs extract", description="Extract and validate local invoice documents."
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument(
        "--confidence-threshold",
        type=float,
        default=None,
        metavar="N",
        help="minimum Textract confidence for required fields (default 80)",
    )
    parser.add_argument(
        "--ocr",
        choices=(OcrEngine.OFF, OcrEngine.LOCAL),
        default=OcrEngine.LOCAL,
        type=OcrEngine,
        help="plain PDFs and scans: the embedded tesseract (default) or NEEDS_OCR",
    )
    return parser


def record(path: Path, outcome: ExtractionOutcome) -> dict[str, Any]:
    """The --json line for one file: money as strings, dates as ISO strings."""
    validation = outcome.validation
    return {
        "file": str(path),
        "format": str(outcome.format),
        "engine": outcome.engine,
        "status": str(validation.status),
        "reasons": validation.reasons,
        "errorCode": str(validation.errorCode) if validation.errorCode else None,
        "errorMessage": validation.errorMessage,
        "invoice": outcome.invoice.model_dump(mode="json") if outcome.invoice else None,
    }


def _print_human(path: Path, outcome: ExtractionOutcome, out: TextIO) -> None:
    v = outcome.validation
    print(f"{path}: {outcome.format} ({outcome.engine}) → {v.status}", file=out)
    if v.errorCode:
        print(f"  error: {v.errorCode}: {v.errorMessage}", file=out)
    if v.reasons:
        print(f"  reasons: {', '.join(v.reasons)}", file=out)
    if outcome.invoice is None:
        return
    fields = outcome.invoice.model_dump(mode="json", exclude={"lineItems", "confidence"}, exclude_none=True)
    for name, value in fields.items():
        confidence = outcome.invoice.confidence.get(name)
        suffix = f"  (confidence {confidence:.0f})" if confidence is not None else ""
        print(f"  {name}: {value}{suffix}", file=out)
    print(f"  lineItems: {len(outcome.invoice.lineItems)}", file=out)
    for line in outcome.invoice.lineItems:
        print(
            f"    {line.lineNumber}. {line.description or ''} | qty {line.quantity} | unit {line.unitPrice}"
            f" | amount {line.amount} | tax% {line.taxRate}",
            file=out,
        )


def _extract(context: RunContext, args: argparse.Namespace) -> int:
    settings = ExtractionSettings(
        ocr_engine=args.ocr,
        **({"confidence_threshold": args.confidence_threshold} if args.confidence_threshold is not None else {}),
    )
    rc = 0
    for path in args.files:
        context.stop.check(f"before {path}")
        try:
            data = path.read_bytes()
        except OSError as exc:
            print(f"{path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            rc = 2
            continue
        outcome = extract_document(data, path.name, settings)
        if args.json:
            print(json.dumps(record(path, outcome), ensure_ascii=False), flush=True)
        else:
            _print_human(path, outcome, sys.stdout)
    return rc


CLI = Cli(EXTRACT, _parser, lambda args: args, _extract)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
