"""components.policies: pure builders, tested without Pulumi; every action exists in IAM."""

from __future__ import annotations

from typing import Any

import pytest
from policy_sentry.querying.actions import get_action_data, get_actions_for_service

from components import policies
from jobs.contract import layout
from jobs.ingest.policy import ingest_task_policy
from jobs.reconcile.policy import reconcile_task_policy, repair_task_policy
from tests.components.iam_model import Permission, denied
from tests.components.program import as_list, policy_documents, program_run, task_policy

ACCOUNT = "123456789012"
TABLE = f"arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/t"
KEY = f"arn:aws:kms:eu-west-1:{ACCOUNT}:key/k"
RAW, PROCESSED, REPORTS = (f"arn:aws:s3:::b-{p}" for p in ("raw", "processed", "reports"))
ARNS = {
    "table_arn": TABLE,
    "raw_bucket_arn": RAW,
    "processed_bucket_arn": PROCESSED,
    "reports_bucket_arn": REPORTS,
    "key_arn": KEY,
}
QUEUE, DLQ = f"arn:aws:sqs:eu-west-1:{ACCOUNT}:arrivals", f"arn:aws:sqs:eu-west-1:{ACCOUNT}:arrivals-dlq"
AUDIT = "arn:aws:s3:::b-audit-data"
INGEST = dict(ARNS, arrivals_queue_arn=QUEUE, arrivals_dead_letter_queue_arn=DLQ)
RECONCILE = dict(ARNS, audit_bucket_arn=AUDIT)
REPAIR = dict(RECONCILE, arrivals_queue_arn=QUEUE)


def _allowed(policy: dict[str, Any], action: str) -> set[str]:
    """The resources `action` is allowed on."""
    return {
        res
        for stmt in policy["Statement"]
        if stmt["Effect"] == "Allow" and action in as_list(stmt["Action"])
        for res in as_list(stmt["Resource"])
    }


def _actions(policy: dict[str, Any]) -> set[str]:
    return {a for s in policy["Statement"] if s["Effect"] == "Allow" for a in as_list(s["Action"])}


def test_ingest_reads_raw_writes_results_and_claims_items() -> None:
    p = task_policy(ingest_task_policy, **INGEST)
    # Raw objects are read; result.json only headed, when a fenced write was refused; a run
    # summary read back only when its write-once put was refused (a resent write).
    assert _allowed(p, "s3:GetObject") == {
        f"{RAW}/{layout.RAW_PREFIX}*",
        f"{PROCESSED}/{layout.PROCESSED_PREFIX}*",
        f"{REPORTS}/{layout.INGEST_RUNS_PREFIX}*",
    }
    assert _allowed(p, "s3:PutObject") == {
        f"{PROCESSED}/{layout.PROCESSED_PREFIX}*",
        f"{REPORTS}/{layout.INGEST_RUNS_PREFIX}*",
    }
    # result.json carries its retention tag in its PutObject; the raw object gets it at the finish.
    assert _allowed(p, "s3:PutObjectTagging") == {
        f"{PROCESSED}/{layout.PROCESSED_PREFIX}*",
        f"{RAW}/{layout.RAW_PREFIX}*",
    }
    assert _allowed(p, "s3:ListBucket") == {RAW, PROCESSED}
    # Items are read and put; a Delete gives up a duplicate marker the document no longer holds.
    assert {a for a in _actions(p) if a.startswith("dynamodb:")} == {
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",  # a duplicate marker given up; the claim on an upload erased before it was processed
    }
    assert _allowed(p, "dynamodb:PutItem") == _allowed(p, "dynamodb:DeleteItem") == {TABLE}
    assert _allowed(p, "kms:GenerateDataKey") == {KEY}
    assert not any(a.startswith("s3:Delete") for a in _actions(p))
    # The drain: the arrival queue, the depth of its dead-letter queue for the summary, and the
    # dead letters' way back (--redrive-dlq: from the DLQ into the arrival queue, nowhere else).
    assert {a for a in _actions(p) if a.startswith("sqs:")} == {
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:ChangeMessageVisibility",
        "sqs:GetQueueAttributes",
        "sqs:GetQueueUrl",
        "sqs:SendMessage",
        "sqs:StartMessageMoveTask",
        "sqs:ListMessageMoveTasks",
    }
    assert _allowed(p, "sqs:ReceiveMessage") == _allowed(p, "sqs:DeleteMessage") == {QUEUE, DLQ}
    assert _allowed(p, "sqs:ChangeMessageVisibility") == _allowed(p, "sqs:SendMessage") == {QUEUE}
    assert _allowed(p, "sqs:StartMessageMoveTask") == _allowed(p, "sqs:ListMessageMoveTasks") == {DLQ}
    assert _allowed(p, "sqs:GetQueueAttributes") == {QUEUE, DLQ} and _allowed(p, "sqs:GetQueueUrl") == {DLQ}


def test_ingest_gets_exactly_the_textract_expense_actions_only_when_textract_is_selected() -> None:
    assert not any(a.startswith("textract:") for a in _actions(task_policy(ingest_task_policy, **INGEST)))
    p = task_policy(ingest_task_policy, **INGEST, textract=True)
    textract = {a for a in _actions(p) if a.startswith("textract:")}
    assert textract == {"textract:AnalyzeExpense", "textract:StartExpenseAnalysis", "textract:GetExpenseAnalysis"}
    for action in textract:
        service, _, name = action.partition(":")
        rows = get_action_data(service, name)[service]
        # No resource type in IAM's database, so "*" is the narrowest resource there is.
        assert {row["resource_arn_format"] for row in rows} == {"*"}
        assert _allowed(p, action) == {"*"}


def test_reconcile_audits_read_only_and_writes_only_its_report_and_its_table_state() -> None:
    p = task_policy(reconcile_task_policy, **RECONCILE)
    # Its report (the dated prefixes only: never an acknowledgement, a person's, nor a pack);
    # nightly, the table state it keeps and (by DynamoDB, with its permissions) the table's
    # exports, in the audit-data bucket.
    assert _allowed(p, "s3:PutObject") == {
        f"{REPORTS}/{layout.RECONCILIATION_PREFIX}????-??-??/*",
        f"{AUDIT}/{layout.TABLE_STATE_PREFIX}*",
        f"{AUDIT}/{layout.DYNAMODB_EXPORTS_PREFIX}*",
    }
    # It reads result.json (--deep), earlier reports and the audit data, never a raw document.
    assert _allowed(p, "s3:GetObject") == {
        f"{PROCESSED}/{layout.PROCESSED_PREFIX}*",
        f"{REPORTS}/{layout.RECONCILIATION_PREFIX}*",
        *(
            f"{AUDIT}/{prefix}*"
            for prefix in (layout.INVENTORY_PREFIX, layout.DYNAMODB_EXPORTS_PREFIX, layout.TABLE_STATE_PREFIX)
        ),
    }
    assert _allowed(p, "s3:ListBucket") == {RAW, PROCESSED, REPORTS, AUDIT}
    (reports,) = [s for s in p["Statement"] if s["Resource"] == [REPORTS] and "s3:ListBucket" in s["Action"]]
    listed = [f"{layout.RECONCILIATION_PREFIX}*", f"{layout.DRILL_RUNS_PREFIX}*"]  # the drill's: listed only
    assert reports["Condition"]["StringLike"]["s3:prefix"] == listed
    assert {a for a in _actions(p) if a.startswith("dynamodb:")} == {
        "dynamodb:Scan",
        "dynamodb:DescribeContinuousBackups",
        "dynamodb:ExportTableToPointInTime",
        "dynamodb:DescribeExport",
    }
    assert _allowed(p, "dynamodb:DescribeExport") == {f"{TABLE}/export/*"}
    assert not any(a.startswith(("s3:Delete", "athena:", "glue:")) for a in _actions(p))


def test_repair_is_the_audit_plus_conditional_puts_of_items() -> None:
    audit = task_policy(reconcile_task_policy, **RECONCILE)
    repair = task_policy(repair_task_policy, **REPAIR)
    assert audit["Statement"] == repair["Statement"][: len(audit["Statement"])]
    assert _actions(repair) - _actions(audit) == {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",  # the duplicate markers a tombstone gives up
        "sqs:SendMessage",
    }
    assert _allowed(repair, "dynamodb:PutItem") == _allowed(repair, "dynamodb:DeleteItem") == {TABLE}
    assert _allowed(repair, "sqs:SendMessage") == {QUEUE}  # UNPROCESSED_RAW back to the queue


def test_arrival_queue_accepts_only_the_raw_bucket_of_this_account() -> None:
    (stmt,) = policies.arrivals_queue_policy(QUEUE, RAW, ACCOUNT)["Statement"]
    assert (stmt["Effect"], stmt["Principal"], stmt["Action"], stmt["Resource"]) == (
        "Allow",
        {"Service": "s3.amazonaws.com"},
        ["sqs:SendMessage"],
        [QUEUE],
    )
    assert stmt["Condition"] == {"ArnEquals": {"aws:SourceArn": RAW}, "StringEquals": {"aws:SourceAccount": ACCOUNT}}


def test_key_policy_lets_s3_encrypt_notifications_only_for_the_buckets_named() -> None:
    assert not any(
        "s3.amazonaws.com" in str(s.get("Principal"))
        for s in policies.data_key_policy(ACCOUNT, "eu-west-1")["Statement"]
    )
    (s3,) = [
        s
        for s in policies.data_key_policy(ACCOUNT, "eu-west-1", [RAW])["Statement"]
        if s.get("Principal") == {"Service": "s3.amazonaws.com"}
    ]
    assert s3["Action"] == ["kms:Decrypt", "kms:GenerateDataKey"]
    assert s3["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT}, "ArnLike": {"aws:SourceArn": [RAW]}}


def test_listing_reports_is_confined_to_the_reconcile_prefix() -> None:
    p = task_policy(reconcile_task_policy, **RECONCILE)
    (stmt,) = [s for s in p["Statement"] if s["Sid"] == "ListReports"]
    # Its reports, and the drill's reports' keys for the days since the last drill (never read).
    prefixes = [f"{layout.RECONCILIATION_PREFIX}*", f"{layout.DRILL_RUNS_PREFIX}*"]
    assert stmt["Condition"] == {"StringLike": {"s3:prefix": prefixes}}
    assert not any(layout.DRILL_RUNS_PREFIX in str(s["Resource"]) for s in p["Statement"])
    # The ingest may list the raw bucket without a prefix condition: S3 tells it that a deleted
    # upload is gone (404) only then; a prefix-conditioned grant would turn that into a 403.
    (raw,) = [s for s in task_policy(ingest_task_policy, **INGEST)["Statement"] if s["Sid"] == "ListDataBuckets"]
    assert raw["Resource"] == [RAW, PROCESSED] and "Condition" not in raw


def test_scheduler_runs_only_our_tasks_on_our_cluster_and_passes_both_roles() -> None:
    p = policies.scheduler_role_policy(
        cluster_arn="cluster",
        task_definition_arns=["td-ingest", "td-reconcile"],
        pass_role_arns=["exec", "task-ingest", "task-reconcile"],
        dead_letter_queue_arn="dlq",
        key_arn=KEY,
        schedule_arns=policies.schedule_arn_pattern("eu-west-1", ACCOUNT, "docuflow-dev-jobs"),
    )
    assert _allowed(p, "ecs:RunTask") == {"td-ingest", "td-reconcile"}
    assert _allowed(p, "iam:PassRole") == {"exec", "task-ingest", "task-reconcile"}
    assert _allowed(p, "sqs:SendMessage") == {"dlq"}
    (run,) = [s for s in p["Statement"] if s["Action"] == ["ecs:RunTask"]]
    assert run["Condition"] == {"ArnEquals": {"ecs:cluster": "cluster"}}
    # The key is used only for what the role does with it: the DLQ's messages, our schedules.
    kms = {s["Sid"]: s for s in p["Statement"] if any(a.startswith("kms:") for a in s["Action"])}
    assert kms["EncryptDeadLetters"]["Condition"] == {"ArnEquals": {"kms:EncryptionContext:aws:sqs:arn": "dlq"}}
    assert kms["DecryptSchedules"]["Action"] == ["kms:Decrypt"]
    assert kms["DecryptSchedules"]["Condition"] == {
        "ArnLike": {
            "kms:EncryptionContext:aws:scheduler:schedule:arn": (
                f"arn:aws:scheduler:eu-west-1:{ACCOUNT}:schedule/docuflow-dev-jobs/*"
            )
        }
    }


def test_execution_role_pulls_only_from_its_repository() -> None:
    repo = f"arn:aws:ecr:eu-west-1:{ACCOUNT}:repository/docuflow-dev-jobs"
    p = policies.execution_role_policy(log_group_arns=["lg"], key_arn=KEY, repository_arn=repo)
    assert _allowed(p, "ecr:BatchGetImage") == {repo}
    assert _allowed(p, "ecr:GetAuthorizationToken") == {"*"}
    assert _allowed(p, "logs:PutLogEvents") == {"lg:log-stream:*"}
    other = policies.execution_role_policy(log_group_arns=["lg"], key_arn=KEY, repository_arn=None)
    assert not any(a.startswith("ecr:") for a in _actions(other))


@pytest.mark.parametrize(
    ("uri", "arn"),
    [
        (
            f"{ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/team/docuflow-jobs:1.2.3",
            f"arn:aws:ecr:eu-west-1:{ACCOUNT}:repository/team/docuflow-jobs",
        ),
        (
            f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/jobs@sha256:{'a' * 64}",
            f"arn:aws:ecr:us-east-1:{ACCOUNT}:repository/jobs",
        ),
        ("ghcr.io/docuflow/jobs:1.0", None),
    ],
)
def test_ecr_repository_arn(uri: str, arn: str | None) -> None:
    assert policies.ecr_repository_arn(uri) == arn


def test_bucket_policy_denies_plain_http() -> None:
    (stmt,) = policies.tls_only_bucket_policy(RAW)["Statement"]
    assert stmt["Effect"] == "Deny" and stmt["Principal"] == "*"
    assert stmt["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert set(stmt["Resource"]) == {RAW, f"{RAW}/*"}


def test_data_buckets_without_write_once_prefixes_only_require_tls() -> None:
    assert policies.data_bucket_policy(RAW) == policies.tls_only_bucket_policy(RAW)


@pytest.mark.parametrize("break_glass", [None, f"arn:aws:iam::{ACCOUNT}:role/break-glass"])
def test_reports_are_written_once_and_never_changed_except_by_break_glass(break_glass: str | None) -> None:
    policy = policies.data_bucket_policy(REPORTS, layout.WRITE_ONCE_REPORT_PREFIXES, break_glass)
    job = f"arn:aws:iam::{ACCOUNT}:role/docuflow-dev-repair-task-role"
    summary = f"{REPORTS}/{layout.reconciliation_prefix('2026-11-30', 'r1')}summary.json"
    run = f"{REPORTS}/{layout.ingest_run_key('2026-11-30', 'r1')}"
    create = (("s3:ObjectCreationOperation", "true"),)
    once = (*create, ("s3:if-none-match", "*"))
    for key in (summary, run):
        # The jobs' own puts carry If-None-Match: S3 itself refuses them once the key exists.
        assert not denied(policy, Permission("s3:PutObject", key, once), job)
        assert denied(policy, Permission("s3:PutObject", key, create), job)  # a plain overwrite
        assert denied(policy, Permission("s3:PutObject", key, (*create, ("s3:if-match", '"e"'))), job)
        for action in policies.REPORT_TAMPERING:
            assert denied(policy, Permission(action, key), job), action
            assert denied(policy, Permission(action, key), break_glass or job) is (break_glass is None)
    # A multipart upload's parts cannot carry the header; only its completion must.
    assert not denied(policy, Permission("s3:PutObject", summary, (("s3:ObjectCreationOperation", "false"),)), job)
    # Outside the report prefixes (Athena's query results) nothing is denied beyond TLS.
    assert not denied(policy, Permission("s3:PutObject", f"{REPORTS}/athena/q.csv", create), job)
    assert not denied(policy, Permission("s3:DeleteObject", f"{REPORTS}/athena/q.csv"), job)


def test_access_log_delivery_is_scoped_to_our_buckets_and_account() -> None:
    p = policies.access_log_bucket_policy("arn:aws:s3:::logs", [RAW, PROCESSED], ACCOUNT)
    (deliver,) = [s for s in p["Statement"] if s["Effect"] == "Allow"]
    assert deliver["Principal"] == {"Service": "logging.s3.amazonaws.com"}
    assert deliver["Condition"]["ArnLike"]["aws:SourceArn"] == [RAW, PROCESSED]
    assert deliver["Condition"]["StringEquals"]["aws:SourceAccount"] == ACCOUNT


def test_trust_policies_guard_against_confused_deputies() -> None:
    (stmt,) = policies.assume_role_policy("pipes.amazonaws.com", ACCOUNT)["Statement"]
    assert stmt["Principal"] == {"Service": "pipes.amazonaws.com"}
    assert stmt["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT}}


# --- every action is a real IAM action (policy_sentry's bundled, offline database) ----------
def _known(action: str) -> bool:
    service, _, _name = action.partition(":")
    return action.lower() in {a.lower() for a in get_actions_for_service(service)}


def _all_actions() -> set[str]:
    actions: set[str] = set()
    pure = [
        task_policy(ingest_task_policy, **INGEST),
        task_policy(ingest_task_policy, **INGEST, textract=True),
        task_policy(reconcile_task_policy, **RECONCILE),
        task_policy(repair_task_policy, **REPAIR),
        policies.data_key_policy(ACCOUNT, "eu-west-1", [RAW]),
        policies.arrivals_queue_policy(QUEUE, RAW, ACCOUNT),
        policies.alarm_topic_policy("t", ACCOUNT),
        policies.pipe_role_policy(stream_arn="s", queue_arn="q", dead_letter_queue_arn="d", key_arn=KEY),
        policies.execution_role_policy(log_group_arns=["lg"], key_arn=KEY, repository_arn="r"),
    ]
    docs = pure + [doc for _, doc in policy_documents(program_run("dev"))]
    docs += [doc for _, doc in policy_documents(program_run("prod"))]
    for doc in docs:
        for stmt in doc["Statement"]:
            actions.update(as_list(stmt["Action"]))
    return actions


def test_policy_sentry_database_is_available_offline() -> None:
    assert "s3:GetObject" in get_actions_for_service("s3")
    assert get_action_data("s3", "NoSuchAction") == {}


def test_every_iam_action_exists() -> None:
    actions = _all_actions()
    assert len(actions) > 40
    # `s3:*` appears only in Deny statements; a service wildcard is checked as a service.
    unknown = sorted(a for a in actions if not (_known(a) or (a.endswith(":*") and get_actions_for_service(a[:-2]))))
    assert unknown == []
