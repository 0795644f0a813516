"""The review queue of `make demo` worked through the CLI, as a reviewer and the frontend would.

For one document of each kind in the queue (a seller missing, totals that do not add up, a
duplicate): claim it, correct what its reasons name, settle it. The corrected values then show in
the dashboard's list, and in result.json beside the machine's reading, read the way the frontend
reads it: through a presigned URL.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from decimal import Decimal
from typing import Any

REVIEWER = "demo-reviewer"
Step = Callable[..., Any]


def work_the_queue(step: Step, env: dict[str, str]) -> None:
    listed = step(
        "dashboard: review queue, newest first",
        "documents",
        "list",
        "--status",
        "REVIEW_REQUIRED",
        "--limit",
        "1000",
        env=env,
    )
    queue = json.loads(listed.stdout)["items"]
    print(f"{len(queue)} documents wait for review; one of each kind is worked through:")
    worked = []
    for item in _one_of_each(queue):
        who = ["--user", item["userId"], "--doc", item["documentId"], "--reviewer", REVIEWER]
        reasons = ", ".join(item["reviewReasons"])
        print(step(f"review: claim {item['documentId']} ({reasons})", "review", "claim", *who, env=env).stdout)
        fixes = _fixes(step, env, item)
        if fixes:
            print(step("review: correct", "review", "correct", *who, *fixes, env=env).stdout)
        title = "review: settle as not a duplicate" if "DUPLICATE_" in reasons else "review: settle"
        print(step(title, "review", "settle", *who, env=env).stdout)
        worked.append(item)
    corrected = next((i for i in worked if _fixes_for(i)), None)
    if corrected is None:
        return
    user, doc = corrected["userId"], corrected["documentId"]
    shown = step(
        "dashboard: the user's documents show the corrected values",
        "documents",
        "list",
        "--user",
        user,
        "--limit",
        "1000",
        env=env,
    )
    print(json.dumps([i for i in json.loads(shown.stdout)["items"] if i["documentId"] == doc], indent=2))
    result = _result_json(step, env, user, doc)
    print("result.json keeps the machine's reading, the review beside it:")
    machine = {k: result["invoice"][k] for k in ("vendorName", "totalAmount")}
    print(
        json.dumps(
            {
                "invoice (machine)": machine,
                "review": result["review"]["corrections"],
                "settled": result["review"]["settled"],
            },
            indent=2,
        )
    )


def _one_of_each(queue: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kinds = ("MISSING_FIELD:vendorName", "TOTALS_MISMATCH", "DUPLICATE_")
    picked = []
    for kind in kinds:
        found = next((i for i in queue if any(r.startswith(kind) for r in i["reviewReasons"])), None)
        if found is not None and found not in picked:
            picked.append(found)
    return picked


def _fixes_for(item: dict[str, Any]) -> bool:
    return any(r in ("MISSING_FIELD:vendorName", "TOTALS_MISMATCH") for r in item["reviewReasons"])


def _fixes(step: Step, env: dict[str, str], item: dict[str, Any]) -> list[str]:
    """What the reviewer sets: a seller for one without, the total its lines and tax add up to."""
    fixes = []
    if "MISSING_FIELD:vendorName" in item["reviewReasons"]:
        fixes += ["--set", "vendor=Reviewed Supplier GmbH"]
    if "TOTALS_MISMATCH" in item["reviewReasons"]:
        invoice = _result_json(step, env, item["userId"], item["documentId"])["invoice"]
        if invoice.get("subtotal") is not None and invoice.get("tax") is not None:
            net = Decimal(invoice["subtotal"]) - Decimal(invoice.get("allowanceTotal") or 0)
            net += Decimal(invoice.get("chargeTotal") or 0)
            fixes += ["--set", f"total={net + Decimal(invoice['tax'])}"]
    return fixes


def _result_json(step: Step, env: dict[str, str], user: str, doc: str) -> dict[str, Any]:
    """result.json as the frontend reads it: a presigned GET the API hands out."""
    signed = json.loads(
        step(
            f"frontend: a presigned URL of {doc}'s result.json",
            "documents",
            "url",
            "--user",
            user,
            "--doc",
            doc,
            env=env,
        ).stdout
    )
    with urllib.request.urlopen(signed["url"], timeout=30) as response:
        document: dict[str, Any] = json.loads(response.read())
    return document
