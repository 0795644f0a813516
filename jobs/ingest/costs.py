"""The night's estimated bill, in the run summary: the AWS unit prices in this one place, applied
to what the run counted (its calls by operation, the Textract pages it spent, its minutes).

Prices are us-east-1 on-demand list prices (docs/capacity.md, "Unit prices" says where they come
from and when to check them). An estimate, not the bill: DynamoDB's units are derived from the
documents (a claim and a finish are each a transactional write of one item under 1 KB: 2 write
units each; a decision reads its item, a GetItem one strongly consistent read), S3's notification
deliveries to SQS and the storage itself are not counted, and the task's size is the job
definition's default (the ingest task's TaskSize, jobs/ingest/job.py), which a stack may raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pydantic import BaseModel

# --- unit prices (USD) -----------------------------------------------------------------------
S3_TIER1_PER_1000 = Decimal("0.005")  # PUT, COPY, POST, LIST, RestoreObject
S3_TIER2_PER_1000 = Decimal("0.0004")  # GET, HEAD and the other reads
SQS_PER_MILLION = Decimal("0.40")  # standard queue, per request (a batch of ≤ 10 is one)
DYNAMODB_WRITE_UNIT_PER_MILLION = Decimal("0.625")  # on demand
DYNAMODB_READ_UNIT_PER_MILLION = Decimal("0.125")
TEXTRACT_EXPENSE_PER_PAGE = Decimal("0.01")  # AnalyzeExpense, the first million pages a month
FARGATE_VCPU_HOUR = Decimal("0.04048")
FARGATE_GB_HOUR = Decimal("0.004445")
TASK_VCPU = Decimal(1)  # the ingest task's size: 1024 CPU units, 2048 MiB
TASK_GB = Decimal(2)

WRITE_UNITS_PER_CLAIM = 4  # the claim and the finish, 2 units each (transactional writes)
_S3_TIER1_VERBS = ("Put", "Copy", "Post", "List", "Restore", "CreateMultipartUpload", "CompleteMultipartUpload")
_FREE_S3_VERBS = ("Delete", "Presign")  # deletes are free; a presigned URL is signed locally
_MICRO_USD = Decimal("0.000001")


class CostEstimate(BaseModel):
    # Requests and units by kind: s3Tier1, s3Tier2, sqs, dynamodbWriteUnits, dynamodbReadUnits.
    requests: dict[str, int]
    textractPages: int
    fargateMinutes: Decimal
    # USD by kind (s3, sqs, dynamodb, textract, fargate) and their total.
    usd: dict[str, Decimal]


def _calls(calls: Mapping[str, Any], service: str) -> dict[str, int]:
    """Calls by verb: `dynamodb.GetItem` and `dynamodb.GetItem.marker` both count as GetItem."""
    verbs: dict[str, int] = {}
    for op, stats in calls.items():
        if op.startswith(f"{service}."):
            verb = op.split(".", 2)[1]
            verbs[verb] = verbs.get(verb, 0) + int(stats["calls"])
    return verbs


def requests_by_kind(calls: Mapping[str, Any], decided: int, claimed: int) -> dict[str, int]:
    """What a run's calls (CallMetrics.summary()) are billed as."""
    s3 = _calls(calls, "s3")
    tier1 = sum(n for verb, n in s3.items() if verb.startswith(_S3_TIER1_VERBS))
    tier2 = sum(n for verb, n in s3.items() if not verb.startswith((*_S3_TIER1_VERBS, *_FREE_S3_VERBS)))
    dynamodb = _calls(calls, "dynamodb")
    get_items = dynamodb.get("GetItem", 0)
    # The night's Textract page counter: one small UpdateItem (one write unit) per reservation.
    updates = dynamodb.get("UpdateItem", 0)
    return {
        "s3Tier1": tier1,
        "s3Tier2": tier2,
        "sqs": sum(_calls(calls, "sqs").values()),
        "dynamodbWriteUnits": claimed * WRITE_UNITS_PER_CLAIM + updates,
        "dynamodbReadUnits": decided + get_items,
    }


def estimate(
    calls: Mapping[str, Any], *, decided: int, claimed: int, textract_pages: int, seconds: float
) -> CostEstimate:
    requests = requests_by_kind(calls, decided, claimed)
    minutes = Decimal(str(seconds)) / 60
    usd = {
        "s3": requests["s3Tier1"] * S3_TIER1_PER_1000 / 1000 + requests["s3Tier2"] * S3_TIER2_PER_1000 / 1000,
        "sqs": requests["sqs"] * SQS_PER_MILLION / 1_000_000,
        "dynamodb": requests["dynamodbWriteUnits"] * DYNAMODB_WRITE_UNIT_PER_MILLION / 1_000_000
        + requests["dynamodbReadUnits"] * DYNAMODB_READ_UNIT_PER_MILLION / 1_000_000,
        "textract": textract_pages * TEXTRACT_EXPENSE_PER_PAGE,
        "fargate": minutes / 60 * (TASK_VCPU * FARGATE_VCPU_HOUR + TASK_GB * FARGATE_GB_HOUR),
    }
    priced = {kind: value.quantize(_MICRO_USD, ROUND_HALF_UP) for kind, value in usd.items()}
    priced["total"] = sum(priced.values(), Decimal(0))  # of the rounded parts: the summary adds up
    return CostEstimate(
        requests=requests,
        textractPages=textract_pages,
        fargateMinutes=minutes.quantize(Decimal("0.01"), ROUND_HALF_UP),
        usd=priced,
    )
