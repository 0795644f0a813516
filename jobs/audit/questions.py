"""An auditor's questions, asked of an engine: the rows become AuditRecords, plus what was folded
away (copies of one delivered record) and what is odd (anomalies), for the printed answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jobs.audit import sql
from jobs.audit.engines import AuditEngine
from jobs.contract.audit import RECORD_COLUMNS, AuditRecord


@dataclass(frozen=True)
class Answer:
    question: dict[str, Any]
    engine: str
    records: list[AuditRecord]

    def to_json(self) -> dict[str, Any]:
        return {
            **self.question,
            "engine": self.engine,
            "count": len(self.records),
            "duplicatesRemoved": sum(r.deliveries - 1 for r in self.records),
            "anomalies": sum(r.anomaly is not None for r in self.records),
            "records": [r.model_dump(mode="json", exclude_none=True) for r in self.records],
        }


def _ask(engine: AuditEngine, text: str, question: dict[str, Any]) -> Answer:
    records = [AuditRecord.from_row(dict(zip(RECORD_COLUMNS, row, strict=True))) for row in engine.rows(text)]
    return Answer(question, engine.name, records)


def history(engine: AuditEngine, user_id: str, document_id: str) -> Answer:
    text = sql.history(engine.relation, user_id, document_id)
    return _ask(engine, text, {"question": "history", "userId": user_id, "documentId": document_id})


def by_actor(engine: AuditEngine, actor: str, since: datetime, until: datetime) -> Answer:
    text = sql.by_actor(engine.relation, actor, since, until)
    question = {"question": "actor", "actor": actor, "since": since.isoformat(), "until": until.isoformat()}
    return _ask(engine, text, question)
