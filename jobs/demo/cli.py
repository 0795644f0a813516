"""`python -m jobs demo seed --users U --docs N [--bad-ratio R] [--seed S]`: deterministic demo uploads."""

from __future__ import annotations

import argparse
import json

from jobs.demo.corpus import generate
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
    args = parser.parse_args(argv)
    settings = JobSettings.from_env()
    try:
        documents = generate(
            args.users,
            args.docs,
            bad_ratio=args.bad_ratio,
            review_ratio=args.review_ratio,
            ocr_ratio=args.ocr_ratio,
            seed=args.seed,
        )
        kinds = upload(s3_client(settings), settings.raw_bucket, documents, settings.io_threads)
    except ValueError as exc:
        parser.error(str(exc))
    print(
        json.dumps(
            {"bucket": settings.raw_bucket, "uploaded": sum(kinds.values()), "kinds": dict(sorted(kinds.items()))},
            indent=2,
        )
    )
    return 0
