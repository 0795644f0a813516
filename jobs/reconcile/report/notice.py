"""The short notice that a night's report landed: verdict, what changed, counts per code found,
and where the report is. Published to the topic DOCUFLOW_REPORTS_TOPIC_ARN names (the stack's
alert topic: JobSettings.run.reports_topic_arn), after summary.json is written; without it nothing is sent.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from jobs.errors import DocuFlowError
from jobs.reconcile.report.view import verdict
from jobs.settings import JobSettings

if TYPE_CHECKING:
    from jobs.reconcile.summary import ReconcileSummary

logger = logging.getLogger(__name__)


def message(summary: ReconcileSummary, previous: ReconcileSummary | None, bucket: str) -> tuple[str, str]:
    """(subject, body): a few plain lines, readable in an e-mail or a chat client."""
    said = verdict(summary, previous)
    subject = f"DocuFlow reconcile {summary.startedAt:%Y-%m-%d}: {said.headline.rstrip('.')}"
    found = [f"  {code}: {n:,}" for code, n in summary.counts.items() if n]
    lines = [
        said.headline,
        said.changes,
        *(["Findings by code:", *found] if found else []),
        f"Report: s3://{bucket}/{summary.reportPrefix}report.html (PDF beside it: report.pdf)",
        f"Verify: python -m jobs reports verify --since {summary.startedAt:%Y-%m-%d}",
    ]
    return subject, "\n".join(lines) + "\n"


def announce(settings: JobSettings, summary: ReconcileSummary, previous: ReconcileSummary | None) -> None:
    """Publish the notice. A failure is logged, not raised: the report is written and complete,
    and a run that failed over its notice would tell the schedule the audit had not happened.
    """
    topic = settings.run.reports_topic_arn
    if not topic:
        return
    from jobs.observability import CallMetrics
    from jobs.store.clients import sns_client
    from jobs.store.notices import Notices

    subject, body = message(summary, previous, settings.store.reports_bucket)
    try:
        Notices(sns_client(settings), CallMetrics()).publish(topic, subject, body)
    except DocuFlowError as exc:
        logger.error("report notice not sent", extra={"topic": topic, "error": str(exc)})
