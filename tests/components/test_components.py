"""Each component's properties, from the dev and prod programs recorded under the mocks."""

from __future__ import annotations

import json
from collections import Counter

import pulumi
import pytest

from components import job_containers
from components.document_buckets import lifecycle_rule_args
from components.settings import StackSettings
from components.status_events import status_event_pattern
from jobs import registry
from jobs.contract import LifecycleSpec, bucket_specs, layout, queue_spec, table_spec
from jobs.documents.policy import legal_hold_task_policy
from jobs.ingest.policy import TEXTRACT_EXPENSE
from jobs.registry import tasks
from jobs.runtime.registry import TaskStack
from jobs.settings import (
    ENV_ARRIVALS_QUEUE_URL,
    ENV_CATCH_UP_DAYS,
    ENV_IMAGE_DIGEST,
    ENV_OCR_ENGINE,
    ENV_REANCHOR_DAYS,
    ENV_REPORT_SIGNING_KEY,
    ENV_REPORTS_TOPIC_ARN,
    ENV_TABLE_ARN,
    ENV_TABLE_STATE_DAYS,
    ENV_TEXTRACT_MAX_PAGES,
    JOB_ENV_VARS,
)
from tests.components.program import (
    ProgramRun,
    as_list,
    policy_documents,
    run_as_main,
    stack_config,
    task_policy,
)

SCHEDULE = "aws:scheduler/schedule:Schedule"

# Resource count per component type in the dev stack (own ECR repo, own topic + email, four
# jobs: ingest, reconcile, repair, drill; one ingest schedule however many tasks it starts; the
# data key and the backup vault's key; one region).
DEV_COUNTS = {
    "docuflow:encryption:DataKey": 4,
    "docuflow:document_store:DocumentStore": 1,
    # + the audit-data bucket (the nightly reconcile's), the audit trail's two Object Lock
    # buckets, and Object Lock on raw and processed.
    "docuflow:document_buckets:DocumentBuckets": 61,
    "docuflow:alerts:Alerts": 3,
    "docuflow:status_events:StatusEvents": 6,
    "docuflow:arrivals:Arrivals": 5,
    "docuflow:audit_catalog:AuditCatalog": 9,  # two inventories; Glue database and five tables; workgroup
    # + erasure, documents, legal-hold: log group, role, policy, task each; the repository's lifecycle.
    "docuflow:batch_jobs:BatchJobs": 44,
    # vault, its lock, plan, selection, role and its policy; four failure rules and their alert targets
    "docuflow:backups:TableBackups": 14,
    "docuflow:review_api:ReviewApi": 2,  # its role and the role's policy
    "docuflow:audit_trail:AuditTrail": 16,
    "docuflow:budget:CostBudget": 2,  # the stage budget and the Textract service budget
    "docuflow:reports:ReportSigningKey": 2,  # the asymmetric key and its alias
    "docuflow:operations:Operations": 9,  # eight deployed alarms (jobs.contract.alarms) and the dashboard
}


def _children(run: ProgramRun, component: str) -> list[str]:
    return [r.typ for r in run.custom if r.parent.split("::")[-2].endswith(component)]


def test_resource_counts_per_component(dev: ProgramRun) -> None:
    counts = {c: len(_children(dev, c)) for c in DEV_COUNTS}
    assert counts == DEV_COUNTS
    assert len(dev.custom) == sum(DEV_COUNTS.values())
    # One of each component, but two keys: the data key and the backup vault's.
    keys = Counter({"docuflow:encryption:DataKey": 1})
    assert Counter(r.typ for r in dev.resources if not r.custom) == Counter(set(DEV_COUNTS)) + keys


def test_only_current_pulumi_aws_resources(every_stack: ProgramRun) -> None:
    assert every_stack.custom
    for rec in every_stack.custom:
        assert not rec.typ.endswith("V2"), rec.typ
        assert not rec.typ.startswith("awsx:"), rec.typ


# --- DocumentStore ---------------------------------------------------------------------------
def test_table_matches_the_contract(dev: ProgramRun) -> None:
    spec = table_spec("dev")
    table = dev.one("aws:dynamodb/table:Table").inputs
    assert table["name"] == spec.name
    assert (table["hashKey"], table["rangeKey"]) == (layout.PK_ATTR, layout.SK_ATTR)
    assert table["billingMode"] == "PAY_PER_REQUEST"
    assert {(a["name"], a["type"]) for a in table["attributes"]} == {(a, "S") for a in spec.string_attributes}
    (gsi,) = table["globalSecondaryIndexes"]
    assert gsi["name"] == spec.index_name and gsi["projectionType"] == "ALL"
    assert "hashKey" not in gsi and "rangeKey" not in gsi  # the deprecated v6 shape
    assert gsi["keySchemas"] == [
        {"attributeName": layout.GSI1_PK_ATTR, "keyType": "HASH"},
        {"attributeName": layout.GSI1_SK_ATTR, "keyType": "RANGE"},
    ]
    assert table["streamEnabled"] is True and table["streamViewType"] == "NEW_AND_OLD_IMAGES"
    assert table["ttl"] == {"attributeName": layout.TTL_ATTR, "enabled": True}
    assert table["tags"]["stage"] == "dev"


# --- DocumentBuckets -----------------------------------------------------------------------
def test_bucket_names_follow_the_contract(dev: ProgramRun) -> None:
    names = {b.inputs["bucket"] for b in dev.of_type("aws:s3/bucket:Bucket")}
    purposes = ("raw", "processed", "reports", "access-logs", "audit-data", layout.AUDIT_LOG, layout.ACCESS_TRAIL)
    expected = {layout.bucket_name("dev", p) for p in purposes}
    assert names == expected


def test_lifecycle_rules_are_the_contract_rules(dev: ProgramRun) -> None:
    spec = LifecycleSpec()
    raw = dev.named("docuflow-dev-raw-lifecycle").inputs["rules"]
    contract = spec.rules(layout.RAW_PREFIX)
    assert [r["id"] for r in raw] == [r["ID"] for r in contract]
    tiering, grace, standard, compliance = raw[:4]
    assert tiering["filter"] == {"prefix": layout.RAW_PREFIX}
    assert tiering["transitions"] == [
        {"days": 30, "storageClass": "STANDARD_IA"},
        {"days": 365, "storageClass": "GLACIER_IR"},
    ]
    # Hidden and replaced versions live the delete grace; markers left alone are removed.
    assert grace["noncurrentVersionExpiration"] == {"noncurrentDays": 30}
    assert grace["expiration"] == {"expiredObjectDeleteMarker": True} and grace["filter"] == tiering["filter"]
    # Multipart uploads are aborted everywhere in the bucket, not only under the tiered prefix.
    (abort,) = [r for r in raw if "abortIncompleteMultipartUpload" in r]
    assert abort["filter"] == {} and abort["abortIncompleteMultipartUpload"] == {"daysAfterInitiation": 7}
    tag = layout.RETENTION_TAG
    assert standard["filter"] == {"and": {"prefix": layout.RAW_PREFIX, "tags": {tag: "standard"}}}
    assert compliance["filter"]["and"]["tags"] == {tag: "compliance"}
    assert standard["expiration"] == {"days": 1827} and compliance["expiration"] == {"days": 3653}
    reports = dev.named("docuflow-dev-reports-lifecycle").inputs["rules"]
    assert reports[0]["filter"] == {} and reports[2]["filter"] == {"tag": {"key": tag, "value": "standard"}}
    logs = dev.named("docuflow-dev-access-logs-lifecycle").inputs["rules"]
    assert logs[0]["expiration"] == {"days": 365}


def test_data_buckets_have_object_lock_without_default_retention(dev: ProgramRun) -> None:
    locks = {
        r.name: r.inputs for r in dev.of_type("aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration")
    }
    for purpose in ("raw", "processed"):
        lock = locks[f"docuflow-dev-{purpose}-object-lock"]
        assert lock["objectLockEnabled"] == "Enabled" and "rule" not in lock, purpose
        # Enabled in place: the bucket itself is not replaced to switch Object Lock on.
        assert "objectLockEnabled" not in dev.named(f"docuflow-dev-{purpose}").inputs
    assert locks["docuflow-dev-reports-object-lock"]["rule"]["defaultRetention"]["days"] == 365


def test_lifecycle_translation_covers_every_contract_rule() -> None:
    for prefix in ("", layout.RAW_PREFIX):
        for rule in LifecycleSpec().rules(prefix):
            args = lifecycle_rule_args(rule)
            assert args.id == rule["ID"] and args.status == "Enabled"
            assert args.filter is not None


def test_object_lock_mode_and_days_from_config(dev: ProgramRun, prod: ProgramRun) -> None:
    for run, mode, days, audit_mode in (
        (dev, "GOVERNANCE", 365, "GOVERNANCE"),
        (prod, "COMPLIANCE", 3650, "COMPLIANCE"),
    ):
        # The reports bucket, and in prod its replica in the second region, with the same default;
        # the audit trail's two buckets: two years, GOVERNANCE in dev, COMPLIANCE in prod.
        locks = {
            r.inputs["bucket"]: r.inputs["rule"]["defaultRetention"]
            for r in run.of_type("aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration")
            if "rule" in r.inputs  # the data buckets' locks carry no default retention: legal holds only
        }
        replica = [layout.replica_bucket_name("prod", "reports", "eu-central-1")] if run is prod else []
        assert locks == {
            **{name: {"mode": mode, "days": days} for name in (layout.bucket_name(run.stack, "reports"), *replica)},
            layout.bucket_name(run.stack, layout.AUDIT_LOG): {"mode": audit_mode, "days": 730},
            layout.bucket_name(run.stack, layout.ACCESS_TRAIL): {"mode": audit_mode, "days": 730},
        }


def test_cors_on_processed_only_for_configured_origins(dev: ProgramRun) -> None:
    cors = dev.one("aws:s3/bucketCorsConfiguration:BucketCorsConfiguration").inputs
    assert cors["bucket"] == layout.bucket_name("dev", "processed")
    (rule,) = cors["corsRules"]
    # GET only: the frontend reads result.json with a presigned GET and nothing else.
    assert rule["allowedMethods"] == ["GET"] and "allowedHeaders" not in rule
    assert rule["allowedOrigins"] == ["https://app.dev.docuflow.example", "http://localhost:5173"]
    # The rules are the contract's, which the local stack applies too.
    (spec,) = [s.cors for s in bucket_specs("dev", {}, cors_origins=rule["allowedOrigins"]) if s.cors]
    assert spec.configuration()["CORSRules"][0]["ExposeHeaders"] == rule["exposeHeaders"]


def test_log_bucket_accepts_only_s3_log_delivery_for_our_buckets(dev: ProgramRun) -> None:
    policy = json.loads(dev.named("docuflow-dev-access-logs-policy").inputs["policy"])
    (allow,) = [s for s in policy["Statement"] if s["Effect"] == "Allow"]
    assert allow["Principal"] == {"Service": "logging.s3.amazonaws.com"}
    assert set(allow["Condition"]["ArnLike"]["aws:SourceArn"]) == {
        f"arn:aws:s3:::{layout.bucket_name('dev', p)}"
        for p in ("raw", "processed", "reports", layout.AUDIT_LOG, layout.ACCESS_TRAIL, "audit-data")
    }


# --- StatusEvents ----------------------------------------------------------------------------
def test_pipe_filters_document_status_events_into_the_queue(dev: ProgramRun) -> None:
    pipe = dev.named("docuflow-dev-status-pipe").inputs
    table = dev.one("aws:dynamodb/table:Table")
    assert pipe["source"].startswith(f"arn:aws:dynamodb:eu-west-1:123456789012:table/{table.inputs['name']}/stream/")
    (flt,) = pipe["sourceParameters"]["filterCriteria"]["filters"]
    pattern = json.loads(flt["pattern"])
    assert pattern == status_event_pattern()
    assert pattern["eventName"] == ["INSERT", "MODIFY"]
    assert pattern["dynamodb"]["NewImage"]["entityType"] == {"S": [layout.ENTITY_DOCUMENT]}
    stream = pipe["sourceParameters"]["dynamodbStreamParameters"]
    assert stream["deadLetterConfig"]["arn"].endswith("status-dlq-1a2b3c")
    assert pipe["target"].endswith("status-queue-1a2b3c")


def test_status_queue_redrives_to_an_encrypted_dlq(dev: ProgramRun) -> None:
    queue = dev.named("docuflow-dev-status-queue").inputs
    redrive = json.loads(queue["redrivePolicy"])
    assert redrive["deadLetterTargetArn"].endswith("docuflow-dev-status-dlq-1a2b3c")
    assert redrive["maxReceiveCount"] >= 1
    assert dev.named("docuflow-dev-status-dlq").inputs["kmsMasterKeyId"].startswith("arn:aws:kms:")


def test_pipe_role_is_least_privilege(dev: ProgramRun) -> None:
    policy = json.loads(dev.named("docuflow-dev-status-pipe-policy").inputs["policy"])
    actions = {a for s in policy["Statement"] for a in s["Action"]}
    assert actions == {
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
        "sqs:SendMessage",
        "kms:Decrypt",
        "kms:GenerateDataKey",
        "kms:DescribeKey",
    }
    trust = json.loads(dev.named("docuflow-dev-status-pipe-role").inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "pipes.amazonaws.com"}


# --- Arrivals --------------------------------------------------------------------------------
def test_arrival_queue_is_the_contracts_queue_spec(dev: ProgramRun) -> None:
    spec = queue_spec("dev")
    queue = dev.named("docuflow-dev-arrivals-queue").inputs
    dlq = dev.named("docuflow-dev-arrivals-dlq").inputs
    assert (queue["name"], dlq["name"]) == (spec.name, spec.dead_letter_name)
    assert queue["visibilityTimeoutSeconds"] == spec.visibility_timeout_seconds
    assert queue["receiveWaitTimeSeconds"] == spec.receive_wait_seconds
    assert queue["messageRetentionSeconds"] == dlq["messageRetentionSeconds"] == spec.retention_seconds == 14 * 86400
    dlq_arn = f"arn:aws:sqs:eu-west-1:123456789012:{spec.dead_letter_name}"
    assert json.loads(queue["redrivePolicy"]) == json.loads(spec.redrive_policy(dlq_arn))
    for q in (queue, dlq):
        assert q["kmsMasterKeyId"] == dev.one("aws:dynamodb/table:Table").inputs["serverSideEncryption"]["kmsKeyArn"]
    (alarm,) = [
        a for a in dev.of_type("aws:cloudwatch/metricAlarm:MetricAlarm") if a.name == "docuflow-dev-arrivals-dlq-alarm"
    ]
    assert alarm.inputs["dimensions"] == {"QueueName": spec.dead_letter_name}
    assert (alarm.inputs["metricName"], alarm.inputs["threshold"]) == ("ApproximateNumberOfMessagesVisible", 0)


def test_only_the_raw_bucket_notifies_the_queue_and_only_for_raw(dev: ProgramRun) -> None:
    spec = queue_spec("dev")
    raw_arn = f"arn:aws:s3:::{layout.bucket_name('dev', 'raw')}"
    (policy,) = json.loads(dev.one("aws:sqs/queuePolicy:QueuePolicy").inputs["policy"])["Statement"]
    assert policy["Principal"] == {"Service": "s3.amazonaws.com"} and policy["Action"] == ["sqs:SendMessage"]
    assert policy["Condition"] == {
        "ArnEquals": {"aws:SourceArn": raw_arn},
        "StringEquals": {"aws:SourceAccount": "123456789012"},
    }
    notification = dev.one("aws:s3/bucketNotification:BucketNotification")
    assert notification.inputs["bucket"] == layout.bucket_name("dev", "raw")
    (target,) = notification.inputs["queues"]
    assert target["events"] == list(spec.events) and target["filterPrefix"] == spec.filter_prefix == layout.RAW_PREFIX
    assert target["queueArn"].endswith(f":{spec.name}")
    # The key lets S3 encrypt those notifications, for the raw bucket of this account only.
    key = json.loads(dev.named("docuflow-dev-key").inputs["policy"])
    (s3,) = [s for s in key["Statement"] if s["Sid"] == "S3NotifiesEncryptedQueue"]
    assert s3["Principal"] == {"Service": "s3.amazonaws.com"}
    assert set(s3["Action"]) == {"kms:GenerateDataKey", "kms:Decrypt"}
    assert s3["Condition"] == {
        "StringEquals": {"aws:SourceAccount": "123456789012"},
        "ArnLike": {"aws:SourceArn": [raw_arn]},
    }


def test_jobs_get_the_queue_url_in_their_environment(dev: ProgramRun) -> None:
    url = f"https://sqs.eu-west-1.amazonaws.com/123456789012/{queue_spec('dev').name}"
    for job in ("ingest", "reconcile", "repair"):
        env = {e["name"]: e["value"] for e in _container(dev, job)["environment"]}
        assert env[ENV_ARRIVALS_QUEUE_URL] == url, job


# --- BatchJobs -----------------------------------------------------------------------------
def _container(run: ProgramRun, job: str) -> dict:
    (td,) = [t for t in run.of_type("aws:ecs/taskDefinition:TaskDefinition") if t.inputs["family"].endswith(job)]
    (container,) = json.loads(td.inputs["containerDefinitions"])
    return {**container, "_td": td.inputs}


@pytest.mark.parametrize(
    ("job", "command"),
    # The reconcile and its repair run the nightly chain; dev sets docuflow:reconcileEngine athena,
    # so they run it as the athena mode's.
    [
        ("ingest", ["ingest", "drain"]),
        ("reconcile", ["reconcile", "athena", "--nightly"]),
        ("repair", ["reconcile", "athena", "--nightly", "--repair"]),
    ],
)
def test_task_definitions(dev: ProgramRun, job: str, command: list[str]) -> None:
    c = _container(dev, job)
    if "--max-minutes" in c["command"]:  # the scheduled drain stops before the reconcile's start
        minutes = int(c["command"][-1])
        assert c["command"][-2:] == ["--max-minutes", str(minutes)] and 0 < minutes < 180  # 02:00 → 05:00
        command = [*command, "--max-minutes", str(minutes)]
    assert c["entryPoint"] + c["command"] == ["python", "-m", "jobs", *command]
    td = c["_td"]
    assert td["requiresCompatibilities"] == ["FARGATE"] and td["networkMode"] == "awsvpc"
    assert td["volumes"] == [{"name": job_containers.SCRATCH_VOLUME}]
    assert td["taskRoleArn"].endswith(f"{job}-task-role-1a2b3c")
    assert td["executionRoleArn"].endswith("execution-role-1a2b3c")
    # By digest: what runs is what the stack file names, whatever a tag points at later.
    digest = stack_config("dev")["docuflow:imageDigest"]
    assert c["image"] == f"123456789012.dkr.ecr.eu-west-1.amazonaws.com/docuflow-dev-jobs@{digest}"
    assert c["logConfiguration"]["options"]["awslogs-group"] == f"/docuflow/dev/{job}"
    env = {e["name"]: e["value"] for e in c["environment"]}
    # The nightly reconcile and its repair export the table: its ARN, and the chain's days.
    chain = {ENV_TABLE_ARN, ENV_REANCHOR_DAYS, ENV_CATCH_UP_DAYS, ENV_TABLE_STATE_DAYS}
    chain |= {ENV_REPORT_SIGNING_KEY, ENV_IMAGE_DIGEST}  # the reports they write are signed
    chain |= {ENV_REPORTS_TOPIC_ARN}  # and announced on the alert topic
    ingest = {ENV_OCR_ENGINE, ENV_TEXTRACT_MAX_PAGES}  # dev caps the night's Textract pages
    ingest |= {"DOCUFLOW_TEXTRACT_FALLBACK"}  # and asks Textract's second opinion
    zone = {"DOCUFLOW_SCHEDULE_TIMEZONE"}  # every job's nights are the schedule zone's dates
    assert set(env) == set(JOB_ENV_VARS) | zone | (ingest if job == "ingest" else chain)
    if job == "ingest":
        assert env[ENV_TEXTRACT_MAX_PAGES] == str(stack_config("dev")["docuflow:textractMaxPagesPerNight"])
    else:
        assert env[ENV_REPORTS_TOPIC_ARN].startswith("arn:aws:sns:eu-west-1:") and env[ENV_REPORTS_TOPIC_ARN].endswith(
            "-topic-1a2b3c"
        )
    assert env[JOB_ENV_VARS[1]] == layout.table_name("dev")
    if job != "ingest":
        assert env[ENV_TABLE_ARN].endswith(f":table/{layout.table_name('dev')}")
        assert (env[ENV_REANCHOR_DAYS], env[ENV_CATCH_UP_DAYS]) == ("30", "7")
        # The states' expiry, from the same setting as the audit-data bucket's lifecycle rule.
        assert env[ENV_TABLE_STATE_DAYS] == "14"


def test_prod_uses_the_configured_image_and_no_repository(prod: ProgramRun) -> None:
    assert prod.of_type("aws:ecr/repository:Repository") == []
    image = _container(prod, "ingest")["image"]
    digest = stack_config("prod")["docuflow:imageDigest"]
    assert image == f"111122223333.dkr.ecr.eu-west-1.amazonaws.com/docuflow-jobs@{digest}"
    policy = json.loads(prod.named("docuflow-prod-execution-policy").inputs["policy"])
    pulls = [s for s in policy["Statement"] if "ecr:BatchGetImage" in s["Action"]]
    assert pulls[0]["Resource"] == ["arn:aws:ecr:eu-west-1:111122223333:repository/docuflow-jobs"]
    assert prod.of_type("aws:sns/topic:Topic") == []  # the existing on-call topic is reused


def test_ecr_repository_scans_and_is_immutable(dev: ProgramRun) -> None:
    repo = dev.one("aws:ecr/repository:Repository").inputs
    assert repo["imageTagMutability"] == "IMMUTABLE"
    assert repo["imageScanningConfiguration"] == {"scanOnPush": True}


SCHEDULED_TIME_OVERRIDE = {
    "containerOverrides": [
        {"name": "job", "environment": [{"name": "DOCUFLOW_SCHEDULED_TIME", "value": "<aws.scheduler.scheduled-time>"}]}
    ]
}


def test_ingest_tasks_drain_one_queue_then_reconcile(dev: ProgramRun) -> None:
    schedules = dev.of_type("aws:scheduler/schedule:Schedule")
    assert sorted(s.inputs["name"] for s in schedules) == [
        "docuflow-dev-drill",
        "docuflow-dev-ingest",
        "docuflow-dev-reconcile",
    ]
    (ingest,) = [s for s in schedules if s.inputs["name"] == "docuflow-dev-ingest"]
    assert ingest.inputs["scheduleExpression"] == "cron(0 1 * * ? *)"
    assert ingest.inputs["scheduleExpressionTimezone"] == "Europe/Berlin"
    ecs = ingest.inputs["target"]["ecsParameters"]
    # ingestTasks tasks, all running the drain (the default mode): no shard overrides.
    # The only override is the scheduled time (batch_jobs.scheduled_input): no shard overrides.
    assert ecs["taskCount"] == 4 and json.loads(ingest.inputs["target"]["input"]) == SCHEDULED_TIME_OVERRIDE
    assert ecs["taskDefinitionArn"].endswith("docuflow-dev-ingest:1")
    (reconcile,) = [s for s in schedules if s.inputs["name"].endswith("-reconcile")]
    assert reconcile.inputs["scheduleExpression"] == "cron(0 5 * * ? *)"
    assert json.loads(reconcile.inputs["target"]["input"]) == SCHEDULED_TIME_OVERRIDE
    # nightlyRepair: the nightly reconcile is the repair task (reconcile --repair).
    assert reconcile.inputs["target"]["ecsParameters"]["taskDefinitionArn"].endswith("docuflow-dev-repair:1")


def test_nightly_repair_off_schedules_the_read_only_audit(dev: ProgramRun) -> None:
    recorded = run_as_main({**stack_config("dev"), "docuflow:stage": "audit", "docuflow:nightlyRepair": "false"})
    (reconcile,) = [
        r for r in recorded if r.typ == "aws:scheduler/schedule:Schedule" and r.inputs["name"].endswith("-reconcile")
    ]
    assert reconcile.inputs["target"]["ecsParameters"]["taskDefinitionArn"].endswith("docuflow-audit-reconcile:1")
    (scheduler,) = [r for r in recorded if r.name.endswith("scheduler-policy")]
    passed = {
        arn
        for s in json.loads(scheduler.inputs["policy"])["Statement"]
        if "iam:PassRole" in s["Action"]
        for arn in as_list(s["Resource"])
    }
    assert any("reconcile-task-role" in arn for arn in passed) and not any("repair-task-role" in arn for arn in passed)


def test_schedules_retry_dead_letter_and_network(dev: ProgramRun, prod: ProgramRun) -> None:
    for run, spot in ((dev, True), (prod, False)):
        schedules = run.of_type("aws:scheduler/schedule:Schedule")
        assert schedules
        for s in schedules:
            target = s.inputs["target"]
            assert target["retryPolicy"] == {"maximumRetryAttempts": 2, "maximumEventAgeInSeconds": 3600}
            assert target["deadLetterConfig"]["arn"].endswith("schedule-dlq-1a2b3c")
            assert target["roleArn"].endswith("scheduler-role-1a2b3c")
            ecs = target["ecsParameters"]
            assert ecs["networkConfiguration"]["assignPublicIp"] is False
            assert ecs["networkConfiguration"]["subnets"]
            if spot:
                assert ecs["capacityProviderStrategies"] == [
                    {"capacityProvider": "FARGATE_SPOT", "base": 0, "weight": 1}
                ]
                assert "launchType" not in ecs
            else:
                assert ecs["launchType"] == "FARGATE" and "capacityProviderStrategies" not in ecs


def test_alarms_on_dead_letters_and_failed_tasks(dev: ProgramRun) -> None:
    # The jobs' own alarms (components.operations) are tests/components/test_operations.py's.
    alarms = [a for a in dev.of_type("aws:cloudwatch/metricAlarm:MetricAlarm") if "-operations-" not in a.name]
    assert len(alarms) == 4  # the schedule, status-events, arrival and audit change-log dead-letter queues
    topic_arn = "arn:aws:sns:eu-west-1:123456789012:docuflow-dev-topic-1a2b3c"
    for alarm in alarms:
        assert alarm.inputs["metricName"] == "ApproximateNumberOfMessagesVisible"
        assert alarm.inputs["threshold"] == 0 and alarm.inputs["alarmActions"] == [topic_arn]
    rule = json.loads(dev.named("docuflow-dev-failed-tasks").inputs["eventPattern"])
    assert rule["detail-type"] == ["ECS Task State Change"]
    assert rule["detail"]["lastStatus"] == ["STOPPED"]
    assert {"containers": {"exitCode": [{"anything-but": [0, 1, 143]}]}} in rule["detail"]["$or"]
    assert len(rule["detail"]["taskDefinitionArn"]) == len(tasks())  # every job, scheduled or by hand
    target = dev.named("docuflow-dev-failed-tasks-alert").inputs
    assert target["arn"] == topic_arn and "Exit codes:" in target["inputTransformer"]["inputTemplate"]
    topic = dev.one("aws:sns/topic:Topic").inputs
    assert topic["kmsMasterKeyId"].startswith("arn:aws:kms:")
    sub = dev.one("aws:sns/topicSubscription:TopicSubscription").inputs
    assert (sub["protocol"], sub["endpoint"]) == ("email", "docuflow-dev-alerts@example.com")


def test_job_environment_rejects_anything_but_job_env_vars() -> None:
    values = dict.fromkeys(JOB_ENV_VARS, "x")
    assert [e["name"] for e in job_containers.job_environment(values)] == list(JOB_ENV_VARS)
    with pytest.raises(ValueError, match="extra"):
        job_containers.job_environment({**values, "DB_PASSWORD": "hunter2"})
    with pytest.raises(ValueError, match="missing"):
        job_containers.job_environment({})


# --- outputs ---------------------------------------------------------------------------------
@pulumi.runtime.test
def test_stack_outputs(dev: ProgramRun) -> pulumi.Output[None]:
    out = dev.outputs
    names = [
        "tableName",
        "tableArn",
        "tableStreamArn",
        "statusIndexName",
        "rawBucketName",
        "processedBucketName",
        "reportsBucketName",
        "clusterArn",
        "ingestTaskDefinitionArn",
        "reconcileTaskDefinitionArn",
        "scheduleNames",
        "statusEventsQueueUrl",
        "arrivalsQueueUrl",
        "scheduleDeadLetterQueueUrl",
    ]

    def check(values: list[object]) -> None:
        got = dict(zip(names, values, strict=True))
        assert got["tableName"] == layout.table_name("dev")
        assert got["tableArn"] == f"arn:aws:dynamodb:eu-west-1:123456789012:table/{layout.table_name('dev')}"
        assert str(got["tableStreamArn"]).startswith(f"{got['tableArn']}/stream/")
        assert got["statusIndexName"] == layout.status_index_name("dev")
        assert [got[f"{p}BucketName"] for p in ("raw", "processed", "reports")] == [
            layout.bucket_name("dev", p) for p in ("raw", "processed", "reports")
        ]
        assert got["clusterArn"] == "arn:aws:ecs:eu-west-1:123456789012:cluster/docuflow-dev-jobs"
        assert str(got["ingestTaskDefinitionArn"]).endswith("task-definition/docuflow-dev-ingest:1")
        assert str(got["reconcileTaskDefinitionArn"]).endswith("task-definition/docuflow-dev-reconcile:1")
        assert got["scheduleNames"] == ["docuflow-dev-ingest", "docuflow-dev-reconcile", "docuflow-dev-drill"]
        assert got["arrivalsQueueUrl"] == f"https://sqs.eu-west-1.amazonaws.com/123456789012/{queue_spec('dev').name}"
        assert str(got["statusEventsQueueUrl"]).startswith("https://sqs.eu-west-1.amazonaws.com/123456789012/")
        assert str(got["scheduleDeadLetterQueueUrl"]).startswith("https://sqs.")

    assert set(names) <= set(out)
    return pulumi.Output.all(*(out[n] for n in names)).apply(check)


@pytest.mark.parametrize(("engine", "granted"), [("textract", True), ("local", False), ("off", False)])
def test_ocr_engine_reaches_the_ingest_container_and_gates_textract(engine: str, granted: bool) -> None:
    c = job_containers.container_definition(
        job="ingest",
        log_group="g",
        region="eu-west-1",
        environment=dict.fromkeys(JOB_ENV_VARS, "x"),
        stack=TaskStack(image="i", table_arn="", ocr_engine=engine),
    )
    assert c["environment"][-1] == {"name": ENV_OCR_ENGINE, "value": engine}
    reconcile = job_containers.container_definition(
        job="reconcile",
        log_group="g",
        region="eu-west-1",
        environment=dict.fromkeys(JOB_ENV_VARS, "x"),
        stack=TaskStack(image="i", table_arn="arn:aws:dynamodb:eu-west-1:1:table/t", ocr_engine=engine),
    )
    assert ENV_OCR_ENGINE not in {e["name"] for e in reconcile["environment"]}


def test_dev_ingest_task_role_may_call_textract_expense_analysis(dev: ProgramRun) -> None:
    docs = dict(policy_documents(dev))
    ingest = [doc for name, doc in docs.items() if "ingest-task-policy" in name]
    reconcile = [doc for name, doc in docs.items() if "reconcile-task-policy" in name]
    assert len(ingest) == 1 and len(reconcile) == 1
    textract = [s for s in ingest[0]["Statement"] if any(a.startswith("textract:") for a in as_list(s["Action"]))]
    assert [(sorted(as_list(s["Action"])), s["Resource"]) for s in textract] == [(sorted(TEXTRACT_EXPENSE), "*")]
    assert not any(a.startswith("textract:") for s in reconcile[0]["Statement"] for a in as_list(s["Action"]))


# --- the job registry: the stack runs what it declares ------------------------------------------------
def _statement_ids(policy: dict) -> list[str]:
    return sorted(s["Sid"] for s in policy["Statement"])


def _nightly_repair(config: dict[str, str]) -> bool:
    return config.get("docuflow:nightlyRepair", "true") == "true"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_task_definitions_roles_sizes_and_schedules_are_the_registrys(stack: str, request) -> None:
    run: ProgramRun = request.getfixturevalue(stack)
    config = stack_config(stack)
    settings = StackSettings.from_mapping(config)
    families = {
        t.inputs["family"].removeprefix(f"docuflow-{stack}-"): t
        for t in run.of_type("aws:ecs/taskDefinition:TaskDefinition")
    }
    assert set(families) == set(tasks())  # no task definition the registry does not declare, none missing
    engine = config.get("docuflow:reconcileEngine", "polars")
    for name, (_, task) in tasks().items():
        (container,) = json.loads(families[name].inputs["containerDefinitions"])
        command = container["command"]
        drain = int(command[command.index("--max-minutes") + 1]) if "--max-minutes" in command else None
        assert command == job_containers.job_command(name, engine, drain), name
        size = settings.tasks.task_sizes.get(name, task.size)  # the stack's docuflow:taskSizes, else the registry's
        made = families[name].inputs
        assert (made["cpu"], made["memory"]) == (str(size.cpu), str(size.memory)), name
        attached = json.loads(run.named(f"docuflow-{stack}-{name}-task-policy").inputs["policy"])
        # The registry's builder with none of the optional resources: its core statements.
        core = task_policy(task.policy)
        assert set(_statement_ids(core)) <= set(_statement_ids(attached)), name
    schedules = {s.inputs["name"].removeprefix(f"docuflow-{stack}-"): s for s in run.of_type(SCHEDULE)}
    started = {"reconcile": not _nightly_repair(config), "repair": _nightly_repair(config)}
    expected = {
        task.schedule.name: (name, task.schedule)
        for name, (_, task) in tasks().items()
        if task.schedule is not None and started.get(name, True)
    }
    assert set(schedules) == set(expected)
    for schedule_name, (name, declared) in expected.items():
        inputs = schedules[schedule_name].inputs
        assert inputs["scheduleExpression"] == settings.scheduling.schedules.get(declared.name, declared.default)
        ecs = inputs["target"]["ecsParameters"]
        assert ecs["taskDefinitionArn"].endswith(f"docuflow-{stack}-{name}:1")
        count = int(config.get("docuflow:ingestTasks", 1)) if name == "ingest" else 1
        assert ecs["taskCount"] == count


def test_a_new_registry_entry_gets_its_task_definition_role_and_log_group(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.jobs.runtime.example_job import ENTRY

    monkeypatch.setattr(registry, "JOBS", (*registry.JOBS, ENTRY))  # its one registry line
    recorded = run_as_main({**stack_config("dev"), "docuflow:stage": "hello"})
    (td,) = [r for r in recorded if r.typ == "aws:ecs/taskDefinition:TaskDefinition" and r.name.endswith("-hello")]
    (container,) = json.loads(td.inputs["containerDefinitions"])
    assert container["command"] == ["hello", "greet"]
    assert (td.inputs["cpu"], td.inputs["memory"]) == ("256", "512")
    (policy,) = [r for r in recorded if r.name == "docuflow-hello-hello-task-policy"]
    assert {s["Sid"] for s in json.loads(policy.inputs["policy"])["Statement"]} == {
        s["Sid"] for s in task_policy(legal_hold_task_policy)["Statement"]
    } | {"PublishRunMetrics"}
    assert any(r.inputs.get("name") == "/docuflow/hello/hello" for r in recorded if r.typ.endswith("LogGroup"))


def test_the_scheduled_drain_is_bounded_by_drain_minutes() -> None:
    def command(minutes: int | None) -> list[str]:
        environment = dict.fromkeys(JOB_ENV_VARS, "x")
        c = job_containers.container_definition(
            job="ingest",
            log_group="g",
            region="eu-west-1",
            environment=environment,
            stack=TaskStack(image="i", table_arn="", drain_minutes=minutes),
        )
        return list(c["command"])

    assert command(150) == ["ingest", "drain", "--max-minutes", "150"]
    assert command(None) == ["ingest", "drain"]  # no bound: until the queue is empty
