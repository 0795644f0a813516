"""`python -m jobs demo seed --users U --docs N [--bad-ratio R] [--seed S] [--duplicates D]`: deterministic
demo uploads (D: as many good invoices uploaded a second time under new documentIds).
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Iterator

from jobs.demo.corpus import DemoDocument, copies, generate
from jobs.demo.seed import upload
from jobs.settings import JobSettings
from jobs.store.clients import s3_client


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs demo", description=__doc__)
    parser.add_argument("action", choices=["seed"])
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--bad-ratio", type=float, default=0.05)
    parser.add_argument("--review-ratio", type=float, default=0.1)
    parser.add_argument("--ocr-ratio", type=float, default=0.0, help="share of plain PDFs and scans (OCR)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--duplicates", type=int, default=0, help="good invoices uploaded again under new ids")
    args = parser.parse_args(argv)
    settings = JobSettings.from_env()
    try:

        def corpus() -> Iterator[DemoDocument]:
            return generate(
                args.users,
                args.docs,
                bad_ratio=args.bad_ratio,
                review_ratio=args.review_ratio,
                ocr_ratio=args.ocr_ratio,
                seed=args.seed,
            )

        documents = itertools.chain(corpus(), copies(corpus(), args.duplicates))
        kinds = upload(s3_client(settings), settings.store.raw_bucket, documents, settings.store.io_threads)
    except ValueError as exc:
        parser.error(str(exc))
    print(
        json.dumps(
            {
                "bucket": settings.store.raw_bucket,
                "uploaded": sum(kinds.values()),
                "kinds": dict(sorted(kinds.items())),
            },
            indent=2,
        )
    )
    return 0
