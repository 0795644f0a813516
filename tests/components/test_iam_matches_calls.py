"""Each task role grants exactly what its job calls on AWS, plus what AWS alone needs.

Each job runs its own scenario on the live local stack (tests/components/iam_scenarios.py) with
jobs.store.call_recording on (the calls no emulator answers, Textract, Athena, DynamoDB table
exports and SQS message move tasks, are made through botocore's Stubber and recorded the same
way); iam_model maps every recorded call to IAM permissions, and the
role's policy, built by the same pure function the Pulumi component uses (with this stage's
names), must
- allow every one of them (the job would be denied on AWS otherwise),
- grant nothing else: every (action, resource) it allows is used by a recorded call, or listed
  below as needed by AWS itself (with the reason) or as pending (granted ahead of code another
  engineer is writing, with the issue); a pending grant that the code starts to call fails the
  test, so the lists cannot rot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from components import policies
from jobs.contract import layout, queue_spec, table_spec
from jobs.contract.iam import ATHENA_RESULT_OBJECTS, GLUE_READS, CatalogArns, document, statement
from jobs.contract.metrics import namespace
from jobs.documents.policy import documents_task_policy, legal_hold_task_policy
from jobs.erasure.policy import erasure_task_policy
from jobs.ingest.policy import ingest_task_policy
from jobs.reconcile.policy import ICEBERG_OBJECTS, reconcile_task_policy, repair_task_policy
from tests.components.iam_model import Arns, Permission, allowed, denied, grants, matches, permissions
from tests.components.iam_scenarios import (
    athena_calls,
    documents_calls,
    erasure_calls,
    ingest_calls,
    legal_hold_calls,
    reconcile_calls,
    review_calls,
)
from tests.components.program import ProgramRun, catalog_grants, task_policy

REGION, ACCOUNT = "us-east-1", "123456789012"
ARNS = Arns(REGION, ACCOUNT)
KEY = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"

Reasons = Mapping[tuple[str, str], str]


def _role_inputs(settings: Any) -> dict[str, str]:
    """The builders' ARNs for the stage the scenario ran on (names from its JobSettings)."""
    return {
        "table_arn": ARNS.table(settings.store.table_name),
        "raw_bucket_arn": f"arn:aws:s3:::{settings.store.raw_bucket}",
        "processed_bucket_arn": f"arn:aws:s3:::{settings.store.processed_bucket}",
        "reports_bucket_arn": f"arn:aws:s3:::{settings.store.reports_bucket}",
        "key_arn": KEY,
    }


def _aws_only_for_sse_kms(reads: bool = True) -> dict[tuple[str, str], str]:
    # No emulator enforces KMS: on AWS, S3 decrypts SSE-KMS objects and generates data keys for
    # new ones with the caller's own KMS permissions (bucket keys reduce the calls, not the need).
    needed = {("kms:GenerateDataKey", KEY): "S3 generates a data key for every SSE-KMS object it writes"}
    if reads:
        needed[("kms:Decrypt", KEY)] = "S3 decrypts every SSE-KMS object the job reads (and Textract reads)"
    return needed


def assert_grants_exactly(
    policy: Mapping[str, Any], needed: set[Permission], aws_only: Reasons, pending: Reasons
) -> None:
    lacking = sorted((p.action, p.resource) for p in needed if not allowed(policy, p))
    assert not lacking, f"the role lacks what the job calls (denied on AWS): {lacking}"
    started = sorted(k for k in pending if any(p.action == k[0] and matches(k[1], p.resource) for p in needed))
    assert not started, f"pending grants are now called; move them out of the pending list: {started}"
    granted = grants(policy)
    unused = sorted(
        g
        for g in granted
        if g not in aws_only
        and g not in pending
        and not any(p.action == g[0] and matches(g[1], p.resource) for p in needed)
    )
    assert not unused, f"the role grants what no job calls: {unused}"
    stale = sorted(k for k in (*aws_only, *pending) if k not in granted)
    assert not stale, f"listed as needed but not granted: {stale}"


def assert_reports_bucket_admits(needed: set[Permission], settings: Any, role: str) -> None:
    """The reports bucket's write-once policy lets every report write the job makes through."""
    reports = f"arn:aws:s3:::{settings.store.reports_bucket}"
    policy = policies.data_bucket_policy(reports, layout.WRITE_ONCE_REPORT_PREFIXES)
    writes = [p for p in needed if p.action == "s3:PutObject" and p.resource.startswith(f"{reports}/")]
    assert writes, "the scenario wrote no report"
    role_arn = f"arn:aws:iam::{ACCOUNT}:role/{role}"
    refused = sorted(p.resource for p in writes if denied(policy, p, role_arn))
    assert not refused, f"the reports bucket policy would refuse the job's own writes: {refused}"


# --- the roles -----------------------------------------------------------------------------------
def test_ingest_role_grants_exactly_what_the_ingest_calls(stack, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    needed = permissions(ingest_calls(stack, corpus, monkeypatch), ARNS)
    queue = ARNS.queue(stack.settings.store.arrivals_queue_url)
    policy = task_policy(
        ingest_task_policy,
        **_role_inputs(stack.settings),
        arrivals_queue_arn=queue,
        arrivals_dead_letter_queue_arn=ARNS.queue(queue_spec(stack.settings.stage).dead_letter_name),
        textract=True,
        metrics_namespace=namespace(stack.settings.stage),
    )
    assert_grants_exactly(policy, needed, _aws_only_for_sse_kms(), pending={})
    assert_reports_bucket_admits(needed, stack.settings, "ingest-task-role")


def _catalog(settings: Any) -> tuple[CatalogArns, Reasons]:
    """The audit catalog's grants for this stage, and the ones AWS uses on the role's behalf
    (with the reason). What the athena engine calls itself is recorded by `athena_calls`.
    """
    grants = catalog_grants(settings.stage, REGION, ACCOUNT)
    audit = grants["audit_bucket_arn"]
    reports = f"arn:aws:s3:::{settings.store.reports_bucket}"
    tables = grants["glue_table_arns"]
    iceberg, results = f"{audit}/{layout.ICEBERG_PREFIX}*", f"{reports}/{layout.ATHENA_RESULTS_PREFIX}*"
    aws_only = {
        **{
            (a, r): "Athena looks the tables up in Glue with the caller's permissions"
            for a in GLUE_READS
            for r in (grants["glue_catalog_arn"], grants["glue_database_arn"], *tables)
        },
        **{
            ("glue:UpdateTable", r): "Athena commits each Iceberg statement (MERGE, DELETE, INSERT, VACUUM) in Glue"
            for r in (grants["glue_catalog_arn"], grants["glue_database_arn"], grants["state_table_arn"])
        },
        **{
            (a, iceberg): "Athena writes and reads the Iceberg table's files, VACUUM deletes old ones"
            for a in ICEBERG_OBJECTS
        },
        **{("s3:GetBucketLocation", r): "Athena locates its source and result buckets" for r in (audit, reports)},
        **{
            (a, results): "Athena writes (multipart) and reads back query results with the caller's permissions"
            for a in ATHENA_RESULT_OBJECTS
        },
        ("s3:ListBucket", reports): "Athena lists its results prefix",
        ("s3:ListBucketMultipartUploads", reports): "Athena manages the multipart uploads of its results",
    }
    return grants, aws_only


def test_reconcile_and_repair_roles_grant_exactly_what_they_call(stack, tmp_path: Path) -> None:
    audit, repair = reconcile_calls(stack, tmp_path)
    inputs = {
        **_role_inputs(stack.settings),
        "audit_bucket_arn": f"arn:aws:s3:::{stack.settings.reconcile.state_bucket}",
    }
    log = {
        "audit_log_bucket_arn": f"arn:aws:s3:::{stack.settings.audit.audit_bucket}",
        "reports_topic_arn": stack.settings.run.reports_topic_arn,
        "metrics_namespace": namespace(stack.settings.stage),
    }
    assert {p for p in permissions(audit, ARNS) if p.action == "sns:Publish"}, "no report was announced"
    assert {p for p in permissions(audit, ARNS) if p.action == "cloudwatch:PutMetricData"}, "no metrics were put"
    # With the Athena engine on, the roles' superset: the polars runs' calls (the nightly chain's
    # exports answered by the local stand-in, its --audit-log included), the athena engine's
    # (stubbed: no emulator answers them), and the catalog's grants AWS uses on the role's behalf.
    engine = athena_calls(stack.settings, inputs["table_arn"])
    grants, catalog_aws_only = _catalog(stack.settings)
    assert_grants_exactly(
        task_policy(reconcile_task_policy, **inputs, catalog=grants, **log),
        permissions(audit + engine, ARNS),
        {**_aws_only_for_sse_kms(), **catalog_aws_only},
        pending={},
    )
    queue = ARNS.queue(stack.settings.store.arrivals_queue_url)
    assert_grants_exactly(
        task_policy(repair_task_policy, **inputs, arrivals_queue_arn=queue, catalog=grants, **log),
        permissions(repair + engine, ARNS),
        {**_aws_only_for_sse_kms(), **catalog_aws_only},
        pending={},
    )
    for role, calls in (("reconcile-task-role", audit), ("repair-task-role", repair)):
        assert_reports_bucket_admits(permissions(calls, ARNS), stack.settings, role)
    # The audit role may not write the table, touch the queue or read raw documents: what the
    # repair adds is exactly what it lacks.
    lacking = {
        (p.action, p.resource.split("/")[0])
        for p in permissions(repair, ARNS)
        if not allowed(task_policy(reconcile_task_policy, **inputs, **log), p)
    }
    raw = f"arn:aws:s3:::{stack.settings.store.raw_bucket}"
    assert {a for a, _ in lacking} == {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",  # a tombstone gives its duplicate markers up
        "sqs:SendMessage",
        "s3:GetObject",
    }
    assert {r for a, r in lacking if a == "s3:GetObject"} == {raw}


def test_review_api_role_grants_exactly_what_the_review_actions_and_the_url_call(stack) -> None:
    needed = permissions(review_calls(stack), ARNS)
    inputs = _role_inputs(stack.settings)
    policy = policies.review_api_policy(
        table_arn=inputs["table_arn"], processed_bucket_arn=inputs["processed_bucket_arn"], key_arn=KEY
    )
    aws_only = {
        ("kms:GenerateDataKey", KEY): "S3 generates a data key for every SSE-KMS result.json the API writes",
        ("kms:Decrypt", KEY): "S3 decrypts result.json for the API's reads and for the browser's presigned GET, "
        "which S3 authorizes as the role that signed it",
    }
    assert_grants_exactly(policy, needed, aws_only, pending={})
    # A presigned GET is signed, not sent: the recorded call is the one the browser makes with it.
    results = f"arn:aws:s3:::{stack.settings.store.processed_bucket}/{layout.PROCESSED_PREFIX}*"
    assert {p.resource for p in needed if p.action == "s3:GetObject"} <= {
        f"arn:aws:s3:::{stack.settings.store.processed_bucket}/{layout.result_key('u1', d)}"
        for d in ("r0", "r1", "r2", "r3")
    }
    assert allowed(policy, Permission("s3:GetObject", results.replace("*", "u9/x/result.json")))
    assert not any(p.resource.startswith(f"arn:aws:s3:::{stack.settings.store.raw_bucket}") for p in needed)


def _data_arns(settings: Any) -> dict[str, str]:
    inputs = _role_inputs(settings)
    return {k: inputs[k] for k in ("table_arn", "raw_bucket_arn", "processed_bucket_arn")}


def test_documents_role_grants_exactly_what_delete_restore_and_list_call(stack) -> None:
    needed = permissions(documents_calls(stack), ARNS)
    table = ARNS.table(stack.settings.store.table_name)
    policy = task_policy(
        documents_task_policy,
        **_data_arns(stack.settings),
        index_arn=f"{table}/index/{stack.settings.store.index_name}",
        arrivals_queue_arn=ARNS.queue(stack.settings.store.arrivals_queue_url),
        key_arn=KEY,
        metrics_namespace=namespace(stack.settings.stage),
    )
    # Deletes and markers touch no object content: S3 asks KMS for nothing. The arrival queue
    # is encrypted with the data key: SQS asks KMS as the sender (no emulator enforces it).
    aws_only = {
        ("kms:GenerateDataKey", KEY): "SQS encrypts a re-queued arrival with the queue's data key",
        ("kms:Decrypt", KEY): "SQS decrypts the data key it reuses for the sender's messages",
    }
    assert_grants_exactly(policy, needed, aws_only=aws_only, pending={})


def test_legal_hold_role_grants_exactly_what_hold_and_release_call(stack) -> None:
    needed = permissions(legal_hold_calls(stack), ARNS)
    policy = task_policy(
        legal_hold_task_policy, **_data_arns(stack.settings), metrics_namespace=namespace(stack.settings.stage)
    )
    assert_grants_exactly(policy, needed, {}, {})


def test_erasure_role_grants_exactly_what_an_erasure_calls(stack) -> None:
    needed = permissions(erasure_calls(stack), ARNS)
    inputs = _role_inputs(stack.settings)
    policy = task_policy(erasure_task_policy, **inputs, metrics_namespace=namespace(stack.settings.stage))
    assert_grants_exactly(policy, needed, _aws_only_for_sse_kms(reads=False), pending={})
    assert_reports_bucket_admits(needed, stack.settings, "erasure-task-role")


def test_execution_role_is_what_ecs_needs_to_start_a_task() -> None:
    # No job code runs under it: ECS pulls the image and writes the awslogs streams with it.
    repository = f"arn:aws:ecr:{REGION}:{ACCOUNT}:repository/docuflow-dev-jobs"
    groups = [f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/docuflow/dev/{job}" for job in ("ingest", "reconcile")]
    policy = policies.execution_role_policy(log_group_arns=groups, key_arn=KEY, repository_arn=repository)
    streams = {f"{g}:log-stream:*" for g in groups}
    aws_only = {
        **{("logs:CreateLogStream", s): "awslogs creates the task's log stream" for s in streams},
        **{("logs:PutLogEvents", s): "awslogs ships the container's output" for s in streams},
        ("ecr:GetAuthorizationToken", "*"): "ECS logs in to ECR (the action has no resource type)",
        ("ecr:BatchCheckLayerAvailability", repository): "ECS pulls the job image",
        ("ecr:BatchGetImage", repository): "ECS pulls the job image",
        ("ecr:GetDownloadUrlForLayer", repository): "ECS pulls the job image",
        ("kms:Decrypt", KEY): "the repository is encrypted with the stack's key",
    }
    assert_grants_exactly(policy, set(), aws_only, pending={})


# --- the checker can fail ------------------------------------------------------------------------
def test_the_check_fails_on_a_missing_or_an_extra_grant() -> None:
    table = ARNS.table("t")
    needed = {Permission("dynamodb:PutItem", table)}
    exact = document(statement("Put", ["dynamodb:PutItem"], [table]))
    assert_grants_exactly(exact, needed, {}, {})
    extra = document(statement("Put", ["dynamodb:PutItem", "dynamodb:DeleteItem"], [table]))
    with pytest.raises(AssertionError, match="grants what no job calls"):
        assert_grants_exactly(extra, needed, {}, {})
    with pytest.raises(AssertionError, match="lacks what the job calls"):
        assert_grants_exactly(exact, needed | {Permission("dynamodb:GetItem", table)}, {}, {})
    with pytest.raises(AssertionError, match="now called"):
        assert_grants_exactly(exact, needed, {}, {("dynamodb:PutItem", table): "pending"})
    with pytest.raises(AssertionError, match="listed as needed but not granted"):
        assert_grants_exactly(exact, needed, {("dynamodb:GetItem", table): "stale"}, {})


# --- the program attaches these builders ------------------------------------------------------------
_DEV_QUEUE = f"arn:aws:sqs:eu-west-1:{ACCOUNT}:{queue_spec('dev').name}"


def _data(inputs: dict[str, str]) -> dict[str, str]:
    return {k: inputs[k] for k in ("table_arn", "raw_bucket_arn", "processed_bucket_arn")}


_DEV_DLQ = f"arn:aws:sqs:eu-west-1:{ACCOUNT}:{queue_spec('dev').dead_letter_name}"
_DEV_AUDIT = f"arn:aws:s3:::{layout.bucket_name('dev', layout.AUDIT_DATA)}"
# The dev stack's own alert topic (the mocks name it after its resource), where reports are announced.
_DEV_ALERTS = f"arn:aws:sns:eu-west-1:{ACCOUNT}:{layout.stage_prefix('dev')}-topic-1a2b3c"


@pytest.mark.parametrize(
    ("job", "builder"),
    [
        (
            "ingest",
            lambda a: task_policy(
                ingest_task_policy,  # dev: ocrEngine textract
                **a,
                textract=True,
                arrivals_queue_arn=_DEV_QUEUE,
                arrivals_dead_letter_queue_arn=_DEV_DLQ,
                metrics_namespace=namespace("dev"),
            ),
        ),
        # dev: docuflow:reconcileEngine athena, so both carry the audit catalog's grants.
        (
            "reconcile",
            lambda a: task_policy(
                reconcile_task_policy,
                **a,
                audit_bucket_arn=_DEV_AUDIT,
                catalog=catalog_grants("dev", "eu-west-1"),
                reports_topic_arn=_DEV_ALERTS,
                metrics_namespace=namespace("dev"),
            ),
        ),
        (
            "repair",
            lambda a: task_policy(
                repair_task_policy,
                **a,
                arrivals_queue_arn=_DEV_QUEUE,
                audit_bucket_arn=_DEV_AUDIT,
                catalog=catalog_grants("dev", "eu-west-1"),
                reports_topic_arn=_DEV_ALERTS,
                metrics_namespace=namespace("dev"),
            ),
        ),
        ("erasure", lambda a: task_policy(erasure_task_policy, **a, metrics_namespace=namespace("dev"))),
        (
            "documents",
            lambda a: task_policy(
                documents_task_policy,
                **_data(a),
                index_arn=f"{a['table_arn']}/index/{table_spec('dev').index_name}",
                arrivals_queue_arn=_DEV_QUEUE,
                key_arn=a["key_arn"],
                metrics_namespace=namespace("dev"),
            ),
        ),
        ("legal-hold", lambda a: task_policy(legal_hold_task_policy, **_data(a), metrics_namespace=namespace("dev"))),
    ],
)
def test_the_stack_attaches_these_policies_to_the_task_roles(dev: ProgramRun, job: str, builder: Any) -> None:
    (recorded,) = [
        r for r in dev.of_type("aws:iam/rolePolicy:RolePolicy") if r.name == f"docuflow-dev-{job}-task-policy"
    ]
    attached = json.loads(recorded.inputs["policy"])
    names = {"raw": "docuflow-dev-raw", "processed": "docuflow-dev-processed", "reports": "docuflow-dev-reports"}
    inputs = dict(
        table_arn=f"arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/docuflow-dev-documents-table",
        **{f"{p}_bucket_arn": f"arn:aws:s3:::{n}" for p, n in names.items()},
        key_arn=f"arn:aws:kms:eu-west-1:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    )
    assert attached == builder(inputs)
