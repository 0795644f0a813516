"""Athena adapter: run one query in the reconcile's workgroup and wait for it, AWS errors translated.

The workgroup enforces its own configuration (result location, encryption, bytes-scanned cutoff),
so a query names only the workgroup and the Glue database. `ClientRequestToken` makes a retried
start idempotent: the same token within 24 hours returns the same query instead of a second one.
A query that fails, is cancelled, runs past `timeout` (then stopped) or is refused for the
workgroup's bytes-scanned cutoff raises `ReconcileQueryError` with Athena's reason.

API actions used: athena:StartQueryExecution, athena:GetQueryExecution, athena:StopQueryExecution,
athena:GetQueryResults (the reconcile's counts, the audit questions' rows).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jobs.errors import ReconcileQueryError
from jobs.observability import CallMetrics
from jobs.store._aws import translated
from jobs.store.polling import Polling

if TYPE_CHECKING:
    from mypy_boto3_athena import AthenaClient

logger = logging.getLogger(__name__)

POLLING = Polling(every_s=2.0, timeout_s=2 * 3600.0)
# Athena's reason text when a workgroup's BytesScannedCutoffPerQuery stops a query.
_CUTOFF_MARKERS = ("bytes scanned limit", "BytesScannedCutoffPerQuery")


@dataclass(frozen=True)
class QueryOutcome:
    query_id: str
    bytes_scanned: int
    seconds: float


class AthenaQueries:
    def __init__(
        self,
        client: AthenaClient,
        workgroup: str,
        database: str,
        metrics: CallMetrics,
        *,
        polling: Polling = POLLING,
    ) -> None:
        self._client = client
        self.workgroup = workgroup
        self.database = database
        self._metrics = metrics
        self._polling = polling

    def run(self, sql: str, token: str, what: str) -> QueryOutcome:
        """Start `sql` (idempotent by `token`, 32-128 characters) and wait until it ends."""
        with translated(f"Athena {what}"), self._metrics.call("athena.StartQueryExecution"):
            started = self._client.start_query_execution(
                QueryString=sql,
                ClientRequestToken=token,
                QueryExecutionContext={"Database": self.database},
                WorkGroup=self.workgroup,
            )
        query_id = started["QueryExecutionId"]
        logger.info("athena query started", extra={"query": what, "queryId": query_id, "workgroup": self.workgroup})
        for _ in self._polling.checks():
            with translated(f"Athena {what}"), self._metrics.call("athena.GetQueryExecution"):
                execution = self._client.get_query_execution(QueryExecutionId=query_id)["QueryExecution"]
            status = execution["Status"]
            state = status["State"]
            stats = execution.get("Statistics", {})
            if state == "SUCCEEDED":
                return QueryOutcome(
                    query_id,
                    int(stats.get("DataScannedInBytes", 0)),
                    stats.get("EngineExecutionTimeInMillis", 0) / 1000,
                )
            if state in ("FAILED", "CANCELLED"):
                reason = status.get("StateChangeReason") or status.get("AthenaError", {}).get("ErrorMessage") or state
                if any(marker.lower() in reason.lower() for marker in _CUTOFF_MARKERS):
                    raise ReconcileQueryError(
                        f"Athena {what} ({query_id}) exceeded workgroup {self.workgroup}'s "
                        f"bytes-scanned cutoff: {reason}"
                    )
                raise ReconcileQueryError(f"Athena {what} ({query_id}) {state.lower()}: {reason}")
        with translated(f"Athena {what}"), self._metrics.call("athena.StopQueryExecution"):
            self._client.stop_query_execution(QueryExecutionId=query_id)
        raise ReconcileQueryError(
            f"Athena {what} ({query_id}) still {state} after the {self._polling.timeout_s:.0f} s timeout: stopped"
        )

    def rows(self, query_id: str) -> list[list[str | None]]:
        """The rows of a result, page by page (header row dropped), as Athena's strings."""
        request: dict[str, Any] = {"QueryExecutionId": query_id}
        rows: list[list[str | None]] = []
        while True:
            with translated("Athena results"), self._metrics.call("athena.GetQueryResults"):
                result = self._client.get_query_results(**request)
            page = result["ResultSet"]["Rows"]
            rows += [[cell.get("VarCharValue") for cell in row["Data"]] for row in page]
            if not result.get("NextToken"):
                return rows[1:]
            request["NextToken"] = result["NextToken"]
