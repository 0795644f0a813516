"""`python -m jobs reconcile acknowledge --finding ID --by NAME --reason TEXT`: a person accepts a
finding. The finding must be in the newest report's ledger and not resolved; the record is
written once (`ledger.Acknowledgements`), so an acknowledgement can be neither changed nor
withdrawn silently, and the next reports list the finding as acknowledged with who and why.
"""

from __future__ import annotations

import argparse
import sys

from jobs.contract import layout
from jobs.errors import DocuFlowError
from jobs.observability import CallMetrics
from jobs.reconcile.ledger import Acknowledgement, Acknowledgements, State, read_ledger
from jobs.reconcile.report import load_history
from jobs.settings import JobSettings
from jobs.store.clients import s3_client
from jobs.store.s3 import Buckets

EXIT_DONE = 0
EXIT_REFUSED = 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs reconcile acknowledge", description=__doc__)
    p.add_argument("--finding", required=True, help="the finding's id, as the report shows it")
    p.add_argument("--by", required=True, help="who accepts it (a name or an e-mail address)")
    p.add_argument("--reason", required=True, help="why it is accepted")
    return p


def acknowledge(buckets: Buckets, bucket: str, finding: str, by: str, reason: str) -> str:
    """Record it; ValueError when the newest report does not list the finding as found."""
    if not by.strip() or not reason.strip():
        raise ValueError("--by and --reason must not be empty")
    history = load_history(buckets, bucket, limit=1)
    ledger = read_ledger(buckets, bucket, history[-1].reportPrefix) if history else None
    rows = [] if ledger is None else ledger.filter(ledger["findingId"] == finding).to_dicts()
    if not rows or rows[0]["state"] == State.RESOLVED.value:
        raise ValueError(f"finding {finding!r} is not found in the newest report's ledger")
    row = rows[0]
    ack = Acknowledgement(
        findingId=finding,
        code=row["code"],
        userId=row["userId"],
        documentId=row["documentId"],
        by=by.strip(),
        reason=reason.strip(),
        at=layout.utc_now(),
    )
    return Acknowledgements(buckets, bucket).record(ack)


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    settings = JobSettings.from_env()
    buckets = Buckets(s3_client(settings), CallMetrics())
    try:
        key = acknowledge(buckets, settings.reports_bucket, args.finding, args.by, args.reason)
    except (ValueError, DocuFlowError) as exc:  # S3ObjectExistsError: acknowledged already
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    print(f"acknowledged {args.finding}: s3://{settings.reports_bucket}/{key}")
    return EXIT_DONE
