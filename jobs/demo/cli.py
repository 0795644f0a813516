"""`python -m jobs demo seed --users U --docs N [--bad-ratio R] [--seed S] [--duplicates D]`: deterministic
demo uploads (D: as many good invoices uploaded a second time under new documentIds).
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from jobs.demo.corpus import DemoDocument, copies, generate
from jobs.demo.seed import upload
from jobs.errors import ExitCode
from jobs.registry import DEMO
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.store.clients import s3_client


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs demo", description=__doc__)
    p.add_argument("action", choices=["seed"])
    p.add_argument("--users", type=int, default=5)
    p.add_argument("--docs", type=int, default=100)
    p.add_argument("--bad-ratio", type=float, default=0.05)
    p.add_argument("--review-ratio", type=float, default=0.1)
    p.add_argument("--ocr-ratio", type=float, default=0.0, help="share of plain PDFs and scans (OCR)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--duplicates", type=int, default=0, help="good invoices uploaded again under new ids")
    return p


@dataclass(frozen=True)
class SeedPlan:
    """The corpus to upload: its generator's arguments, and the copies of good invoices."""

    corpus: Callable[[], Iterator[DemoDocument]]
    duplicates: int


def plan_of(args: argparse.Namespace) -> SeedPlan:
    """ValueError: counts or ratios the corpus refuses (checked now, before anything is uploaded)."""

    def corpus() -> Iterator[DemoDocument]:
        return generate(
            args.users,
            args.docs,
            bad_ratio=args.bad_ratio,
            review_ratio=args.review_ratio,
            ocr_ratio=args.ocr_ratio,
            seed=args.seed,
        )

    next(corpus(), None)  # the generator checks its arguments before its first document
    return SeedPlan(corpus, args.duplicates)


def _seed(context: RunContext, plan: SeedPlan) -> int:
    settings = context.settings
    documents = itertools.chain(plan.corpus(), copies(plan.corpus(), plan.duplicates))
    kinds = upload(s3_client(settings), settings.store.raw_bucket, documents, settings.store.io_threads)
    summary = {
        "bucket": settings.store.raw_bucket,
        "uploaded": sum(kinds.values()),
        "kinds": dict(sorted(kinds.items())),
    }
    print(json.dumps(summary, indent=2))
    return ExitCode.SUCCESS


CLI = Cli(DEMO, parser, plan_of, _seed)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
