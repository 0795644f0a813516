"""`python -m jobs reconcile acknowledge --finding ID --by NAME --reason TEXT [--expires DATE]`: a
person accepts a finding. The finding must be in the newest report's ledger and not resolved;
the record is written once (`ledger.Acknowledgements`), so an acknowledgement can be neither
changed nor withdrawn silently.

It accepts the finding's current life only (the ledger's first-seen time): once the finding
resolves, a recurrence is new and unacknowledged. With `--expires` it lapses at the start of
that day (UTC), and the finding is open again. Beside the typed `--by` name it records the
caller's AWS identity (STS GetCallerIdentity, `jobs.store.identity`): which credentials made the
record. A life already acknowledged (and not lapsed) is refused.
"""

from __future__ import annotations

import argparse
from datetime import UTC, date, datetime, time

from jobs.contract import layout
from jobs.errors import ExitCode, ReconcileInputError
from jobs.reconcile.chain.ledger import Acknowledgement, Acknowledgements, CallerIdentity, State, conformed, read_ledger
from jobs.reconcile.job import JOB
from jobs.reconcile.report.written import load_history
from jobs.runtime.context import Cli, RunContext, run_job
from jobs.store.identity import caller_identity, sts_client
from jobs.store.s3 import Buckets


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jobs reconcile acknowledge", description=__doc__)
    p.add_argument("--finding", required=True, help="the finding's id, as the report shows it")
    p.add_argument("--by", required=True, help="who accepts it (a name or an e-mail address)")
    p.add_argument("--reason", required=True, help="why it is accepted")
    p.add_argument(
        "--expires", type=date.fromisoformat, default=None, help="YYYY-MM-DD: lapses at the start of this day (UTC)"
    )
    return p


def _expiry(expires: date | None, now: datetime) -> datetime | None:
    if expires is None:
        return None
    at = datetime.combine(expires, time(), tzinfo=UTC)
    if at <= now:
        raise ReconcileInputError(f"--expires {expires}: must be a day after today")
    return at


def acknowledge(
    buckets: Buckets,
    bucket: str,
    finding: str,
    by: str,
    reason: str,
    caller: CallerIdentity | None,
    expires: date | None = None,
) -> str:
    """Record it; ReconcileInputError when the newest report does not list the finding as open,
    or its life is acknowledged already.
    """
    if not by.strip() or not reason.strip():
        raise ReconcileInputError("--by and --reason must not be empty")
    now = layout.utc_now()
    expires_at = _expiry(expires, now)
    history = load_history(buckets, bucket, limit=1)
    ledger = read_ledger(buckets, bucket, history[-1].reportPrefix) if history else None
    rows = [] if ledger is None else conformed(ledger).filter(ledger["findingId"] == finding).to_dicts()
    if not rows or rows[0]["state"] == State.RESOLVED.value:
        raise ReconcileInputError(f"finding {finding!r} is not found in the newest report's ledger")
    row = rows[0]
    records = Acknowledgements(buckets, bucket)
    held = [a for a in records.records() if a.findingId == finding and a.applies(row["firstSeen"], now)]
    if held:
        raise ReconcileInputError(
            f"finding {finding!r} is acknowledged already (by {held[0].by} at {held[0].at:%Y-%m-%d %H:%M} UTC)"
        )
    ack = Acknowledgement(
        findingId=finding,
        code=row["code"],
        userId=row["userId"],
        documentId=row["documentId"],
        by=by.strip(),
        reason=reason.strip(),
        at=now,
        firstSeen=row["firstSeen"],
        expiresAt=expires_at,
        caller=caller,
    )
    return records.record(ack)


def _acknowledge(context: RunContext, args: argparse.Namespace) -> int:
    settings = context.settings
    who = caller_identity(sts_client(settings), context.calls)
    caller = CallerIdentity(arn=who.arn, account=who.account, userId=who.user_id)
    bucket = settings.store.reports_bucket
    key = acknowledge(context.buckets, bucket, args.finding, args.by, args.reason, caller, args.expires)
    print(f"acknowledged {args.finding} as {caller.arn}: s3://{bucket}/{key}")
    return ExitCode.SUCCESS


CLI = Cli(JOB, parser, lambda args: args, _acknowledge)


def main(argv: list[str]) -> int:
    return run_job(CLI, argv)
