"""`python -m jobs erase --user U [--dry-run]`: erase everything stored of one user, for good.

Every item of the user's partition, every version and delete marker under the user's raw and
processed prefixes (`layout.user_prefixes`), deleted now, except documents under a legal hold
(kept whole, and listed); a receipt written once into the reports bucket
(`erasure/U/<runId>.json`). `--dry-run` counts what would go and changes nothing. Running it
again finds nothing and says so.

Prints one JSON object. Exit 0 when done (or nothing was left), 2 for bad input (an id outside
the id rules, a user of whom nothing is stored), 3 when AWS is unreachable or refuses access,
4 when the user's data kept changing (rerun: the erasure resumes).
"""

from __future__ import annotations

import argparse
import json
import sys

from jobs.erasure.run import ErasureRun
from jobs.errors import DocuFlowError, ErasureNotSettledError, InfrastructureError
from jobs.observability import CallMetrics, interactive, setup_logging
from jobs.settings import JobSettings
from jobs.store.clients import dynamodb_client, s3_client
from jobs.store.dynamo import DocumentTable
from jobs.store.s3 import Buckets


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs erase", description=__doc__)
    parser.add_argument("--user", required=True, help="the userId to erase")
    parser.add_argument("--dry-run", action="store_true", help="count what would be erased; change nothing")
    args = parser.parse_args(argv)
    if not interactive():
        setup_logging()
    try:
        settings = JobSettings.from_env()
        metrics = CallMetrics()
        run = ErasureRun(
            settings,
            DocumentTable(dynamodb_client(settings), settings.table_name, settings.index_name, metrics),
            Buckets(s3_client(settings), metrics),
            metrics,
        )
        result = run.execute(args.user, dry_run=args.dry_run)
    except InfrastructureError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except ErasureNotSettledError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 4
    except (DocuFlowError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    output: dict[str, object] = {"outcome": result.outcome, "message": result.message}
    if result.receipt is not None:
        output |= {"receipt": result.receipt_uri, **result.receipt.model_dump(mode="json")}
    if result.would_delete is not None:
        output["wouldDelete"] = result.would_delete.model_dump()
    print(json.dumps(output, indent=2))
    return 0
