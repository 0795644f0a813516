"""A run's id: when it started (UTC, to the second, so ids sort by time) and 8 random hex digits
(two runs started in the same second, on two ECS tasks, still differ). The one spelling of it:
run summaries, reports, receipts, drill tables and the actors a run signs with carry it.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from jobs.contract import layout


def new_run_id(started: datetime | None = None) -> str:
    return f"{started or layout.utc_now():%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
