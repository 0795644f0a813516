"""Policy-as-code over the whole recorded resource graph of every stack file.

Each rule walks every resource of its kind the program registered under the mocks; each first
asserts that it found the resources it is about, so no rule passes on an empty graph.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from policy_sentry.querying.actions import get_action_data

from components.settings import StackSettings
from jobs.contract import layout
from jobs.registry import tasks
from jobs.settings import (
    ENV_CATCH_UP_DAYS,
    ENV_HOLDINGS,
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
from tests.components.program import ProgramRun, Recorded, as_list, policy_documents, stack_config

T = {
    "table": "aws:dynamodb/table:Table",
    "bucket": "aws:s3/bucket:Bucket",
    "pab": "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    "ownership": "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
    "versioning": "aws:s3/bucketVersioning:BucketVersioning",
    "sse": "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "policy": "aws:s3/bucketPolicy:BucketPolicy",
    "logging": "aws:s3/bucketLogging:BucketLogging",
    "lifecycle": "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    "lock": "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration",
    "taskdef": "aws:ecs/taskDefinition:TaskDefinition",
    "cluster": "aws:ecs/cluster:Cluster",
    "key": "aws:kms/key:Key",
    "loggroup": "aws:cloudwatch/logGroup:LogGroup",
    "queue": "aws:sqs/queue:Queue",
    "topic": "aws:sns/topic:Topic",
    "role": "aws:iam/role:Role",
    "rolepolicy": "aws:iam/rolePolicy:RolePolicy",
    "vault": "aws:backup/vault:Vault",
}
SECRETISH = re.compile(r"SECRET|PASSWORD|PASSWD|TOKEN|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_KEY", re.I)


def _by_bucket(run: ProgramRun, kind: str) -> dict[str, list[Recorded]]:
    found: dict[str, list[Recorded]] = {}
    for rec in run.of_type(T[kind]):
        found.setdefault(rec.inputs["bucket"], []).append(rec)
    return found


def _settings(run: ProgramRun) -> StackSettings:
    return StackSettings.from_mapping(stack_config(run.stack))


def _second(run: ProgramRun) -> bool:
    return _settings(run).recovery.replica_region is not None


def _buckets(run: ProgramRun) -> list[str]:
    names = [b.inputs["bucket"] for b in run.of_type(T["bucket"])]
    # raw, processed, reports, access logs, the audit trail's two, the audit data (the nightly
    # reconcile's, either engine); and the replicas of the first four in the second region.
    assert len(names) == 7 + 4 * _second(run), names
    return names


def _log_buckets(run: ProgramRun) -> dict[str, str]:
    """The access-log bucket of each region."""
    logs = {run.region_of(b): b.inputs["bucket"] for b in run.of_type(T["bucket"]) if "access-logs" in b.name}
    assert len(logs) == 1 + _second(run), logs
    return logs


# --- DynamoDB ------------------------------------------------------------------------------
def test_dynamodb_pitr_deletion_protection_and_kms(every_stack: ProgramRun) -> None:
    tables = every_stack.of_type(T["table"])
    assert len(tables) == 1
    for table in tables:
        assert table.inputs["pointInTimeRecovery"]["enabled"] is True
        assert table.inputs["deletionProtectionEnabled"] is True
        sse = table.inputs["serverSideEncryption"]
        assert sse["enabled"] is True and sse["kmsKeyArn"].startswith("arn:aws:kms:")


# --- S3 ------------------------------------------------------------------------------------
def test_s3_public_access_fully_blocked(every_stack: ProgramRun) -> None:
    pabs = _by_bucket(every_stack, "pab")
    assert set(pabs) == set(_buckets(every_stack))
    for name, (pab,) in pabs.items():
        flags = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
        assert all(pab.inputs[f] is True for f in flags), name


def test_s3_bucket_owner_enforced(every_stack: ProgramRun) -> None:
    owners = _by_bucket(every_stack, "ownership")
    assert set(owners) == set(_buckets(every_stack))
    for (rec,) in owners.values():
        assert rec.inputs["rule"]["objectOwnership"] == "BucketOwnerEnforced"


def test_s3_tls_only_policy(every_stack: ProgramRun) -> None:
    bucket_policies = _by_bucket(every_stack, "policy")
    assert set(bucket_policies) == set(_buckets(every_stack))
    for name, (rec,) in bucket_policies.items():
        denies = [
            s
            for s in json.loads(rec.inputs["policy"])["Statement"]
            if s["Effect"] == "Deny" and s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"
        ]
        assert denies and denies[0]["Principal"] == "*", name
        assert set(denies[0]["Resource"]) == {f"arn:aws:s3:::{name}", f"arn:aws:s3:::{name}/*"}


def test_s3_reports_are_write_once_for_everyone_but_break_glass(every_stack: ProgramRun) -> None:
    settings = StackSettings.from_mapping(stack_config(every_stack.stack))
    (reports,) = [spec for spec in settings.buckets() if spec.write_once_prefixes]
    (policy,) = _by_bucket(every_stack, "policy")[reports.name]
    denies = {s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"] if s["Effect"] == "Deny"}
    objects = [f"arn:aws:s3:::{reports.name}/{p}*" for p in layout.WRITE_ONCE_REPORT_PREFIXES]
    overwrite, tamper = denies["DenyReportOverwrites"], denies["DenyReportTampering"]
    assert overwrite["Resource"] == objects == tamper["Resource"]
    assert overwrite["Principal"] == tamper["Principal"] == "*"
    assert overwrite["Condition"]["Null"] == {"s3:if-none-match": "true"}
    assert {"s3:DeleteObject", "s3:DeleteObjectVersion", "s3:BypassGovernanceRetention"} <= set(tamper["Action"])
    exempt = (
        {"ArnNotEquals": {"aws:PrincipalArn": settings.storage.break_glass_role_arn}}
        if settings.storage.break_glass_role_arn
        else {}
    )
    assert tamper.get("Condition", {}) == exempt
    assert every_stack.stack.startswith("prod") == bool(exempt)  # prod names a break-glass role, dev none


def test_s3_versioning(every_stack: ProgramRun) -> None:
    versioning = _by_bucket(every_stack, "versioning")
    assert set(versioning) == set(_buckets(every_stack))
    for (rec,) in versioning.values():
        assert rec.inputs["versioningConfiguration"]["status"] == "Enabled"


def test_s3_sse_kms_with_bucket_key_and_sse_s3_for_the_log_bucket(every_stack: ProgramRun) -> None:
    sse = _by_bucket(every_stack, "sse")
    assert set(sse) == set(_buckets(every_stack))
    log_buckets = set(_log_buckets(every_stack).values())
    for name, (rec,) in sse.items():
        (rule,) = rec.inputs["rules"]
        default = rule["applyServerSideEncryptionByDefault"]
        if name in log_buckets:
            assert default == {"sseAlgorithm": "AES256"}
        else:
            assert default["sseAlgorithm"] == "aws:kms"
            assert default["kmsMasterKeyId"].startswith("arn:aws:kms:")
            assert rule["bucketKeyEnabled"] is True


def test_s3_access_logging_to_the_log_bucket(every_stack: ProgramRun) -> None:
    logging = _by_bucket(every_stack, "logging")
    log_buckets = _log_buckets(every_stack)
    assert set(logging) == set(_buckets(every_stack)) - set(log_buckets.values())
    prefixes = set()
    for (rec,) in logging.values():
        # Each bucket logs to the log bucket of its own region (S3 delivers logs within a region).
        assert rec.inputs["targetBucket"] == log_buckets[every_stack.region_of(rec)]
        prefixes.add(rec.inputs["targetPrefix"])
    assert len(prefixes) == 6


def test_s3_one_lifecycle_with_abort_multipart_and_noncurrent_expiry(every_stack: ProgramRun) -> None:
    lifecycles = _by_bucket(every_stack, "lifecycle")
    assert set(lifecycles) == set(_buckets(every_stack))
    for name, recs in lifecycles.items():
        assert len(recs) == 1, f"{name} has {len(recs)} lifecycle owners"
        rules = recs[0].inputs["rules"]
        assert all(r["status"] == "Enabled" for r in rules)
        # Bucket-wide (an empty filter): a prefix-scoped abort leaves uploads elsewhere billed forever.
        aborts = [r for r in rules if "abortIncompleteMultipartUpload" in r]
        assert [(r["filter"], r["abortIncompleteMultipartUpload"]) for r in aborts] == [
            ({}, {"daysAfterInitiation": 7})
        ], name
        assert any(r.get("noncurrentVersionExpiration", {}).get("noncurrentDays") for r in rules)
        assert any(r.get("expiration", {}).get("days") for r in rules)


def test_s3_object_lock_on_reports_the_audit_trail_and_the_data_buckets(every_stack: ProgramRun) -> None:
    locks = _by_bucket(every_stack, "lock")
    # The reports bucket and its replica (Object Lock retention replicates only into a lock
    # bucket), and the audit trail's two buckets.
    reports = [b.inputs["bucket"] for b in every_stack.of_type(T["bucket"]) if b.name.endswith("-reports")]
    assert len(reports) == 1 + _second(every_stack)
    audit = [n for n in _buckets(every_stack) if n.endswith((layout.AUDIT_LOG, layout.ACCESS_TRAIL))]
    data = {n for n in locks if n not in {*reports, *audit}}
    # The data buckets (and their replicas) carry legal holds only: no default retention.
    assert len(audit) == 2 and len(data) == 2 * (1 + _second(every_stack))
    assert all("rule" not in locks[n][0].inputs for n in data)
    for name in (*reports, *audit):
        (bucket,) = [b for b in every_stack.of_type(T["bucket"]) if b.inputs["bucket"] == name]
        assert bucket.inputs["objectLockEnabled"] is True
        retention = locks[name][0].inputs["rule"]["defaultRetention"]
        assert retention["mode"] in ("GOVERNANCE", "COMPLIANCE") and retention["days"] >= 1


def test_s3_data_buckets_replicate_to_the_second_region_where_the_stack_names_one(every_stack: ProgramRun) -> None:
    settings = _settings(every_stack)
    configs = every_stack.of_type("aws:s3/bucketReplicationConfig:BucketReplicationConfig")
    if settings.recovery.replica_region is None:
        assert configs == []  # a one-region stack (dev): nothing to replicate to, by its own setting
        return
    assert {c.inputs["bucket"] for c in configs} == {spec.name for spec in settings.buckets()}
    for config in configs:
        (rule,) = config.inputs["rules"]
        assert rule["status"] == "Enabled" and rule["deleteMarkerReplication"] == {"status": "Enabled"}
        assert rule["destination"]["bucket"].endswith(f"-{settings.recovery.replica_region}")


# --- ECS -----------------------------------------------------------------------------------
def _containers(run: ProgramRun) -> list[dict[str, Any]]:
    defs = run.of_type(T["taskdef"])
    assert len(defs) == len(tasks())  # ingest, reconcile, repair, drill; erasure, documents, legal-hold
    return [c for d in defs for c in json.loads(d.inputs["containerDefinitions"])]


def test_containers_hardened(every_stack: ProgramRun) -> None:
    containers = _containers(every_stack)
    assert len(containers) == len(tasks())
    for c in containers:
        assert c["readonlyRootFilesystem"] is True
        assert c["privileged"] is False
        user = c["user"].split(":")[0]
        assert user.isdigit() and int(user) != 0, c["user"]
        assert c["logConfiguration"]["logDriver"] == "awslogs"
        assert c["linuxParameters"]["capabilities"]["drop"] == ["ALL"]
        assert {m["containerPath"] for m in c["mountPoints"]} == {"/tmp"}
        # Fargate's longest SIGTERM-to-SIGKILL: the jobs stop at a clean point, not mid-write.
        assert c["stopTimeout"] == 120


def test_no_secrets_in_container_environment(every_stack: ProgramRun) -> None:
    for c in _containers(every_stack):
        assert "secrets" not in c and "environmentFiles" not in c
        names = [e["name"] for e in c["environment"]]
        # The ingest alone also gets the OCR engine, the erasure the stack's data-holding figures,
        # the nightly reconcile and its repair the table's ARN (they export the table) and the
        # chain's days: non-secret settings.
        ocr = [ENV_OCR_ENGINE] if c["command"][:1] == ["ingest"] else []
        ocr += [ENV_TEXTRACT_MAX_PAGES] if ocr and ENV_TEXTRACT_MAX_PAGES in names else []
        ocr += ["DOCUFLOW_TEXTRACT_FALLBACK"] if ocr and "DOCUFLOW_TEXTRACT_FALLBACK" in names else []
        zone = ["DOCUFLOW_SCHEDULE_TIMEZONE"]  # every job's nights are the schedule zone's dates
        holdings = [ENV_HOLDINGS] if c["command"][:1] == ["erase"] else []
        chain = (
            [
                ENV_TABLE_ARN,
                ENV_REANCHOR_DAYS,
                ENV_CATCH_UP_DAYS,
                ENV_TABLE_STATE_DAYS,
                ENV_REPORT_SIGNING_KEY,
                ENV_IMAGE_DIGEST,
                ENV_REPORTS_TOPIC_ARN,
            ]
            if c["command"][:1] == ["reconcile"]
            else []
        )
        assert names == list(JOB_ENV_VARS) + zone + ocr + holdings + chain
        for e in c["environment"]:
            assert not SECRETISH.search(e["name"]) and not SECRETISH.search(e["value"]), e


def test_container_insights(every_stack: ProgramRun) -> None:
    (cluster,) = every_stack.of_type(T["cluster"])
    assert {"name": "containerInsights", "value": "enabled"} in cluster.inputs["settings"]


# --- IAM -----------------------------------------------------------------------------------
@cache
def _has_resource_type(action: str) -> bool:
    """True when IAM lets `action` be scoped to a resource ARN (policy_sentry's database)."""
    service, _, name = action.partition(":")
    rows = get_action_data(service, name).get(service, [])
    assert rows, f"{action} is not in the IAM database"
    return any(row["resource_arn_format"] != "*" for row in rows)


def test_iam_no_wildcard_actions(every_stack: ProgramRun) -> None:
    docs = policy_documents(every_stack)
    assert len(docs) >= 15
    for where, doc in docs:
        for stmt in doc["Statement"]:
            if stmt["Effect"] != "Allow":
                continue  # a broad Deny (s3:* without TLS) only ever removes access
            for action in as_list(stmt["Action"]):
                assert "*" not in action, f"{where}: {action}"


def test_iam_no_wildcard_resources_where_one_can_be_named(every_stack: ProgramRun) -> None:
    role_policies = every_stack.of_type(T["rolepolicy"])
    # A task role per job, the execution, scheduler, pipe, backup and review API roles, S3
    # replication's, and the audit trail's Pipe and delivery stream.
    assert len(role_policies) == len(tasks()) + 5 + _second(every_stack) + 2
    for rec in role_policies:
        for stmt in json.loads(rec.inputs["policy"])["Statement"]:
            if "*" in as_list(stmt["Resource"]):
                scoped = [a for a in as_list(stmt["Action"]) if _has_resource_type(a)]
                assert scoped == [], f"{rec.name}: {scoped} on '*'"
            assert all(r.startswith("arn:aws:") or r == "*" for r in as_list(stmt["Resource"]))


def test_resource_policies_name_their_principals(every_stack: ProgramRun) -> None:
    for where, doc in policy_documents(every_stack):
        for stmt in doc["Statement"]:
            if stmt["Effect"] == "Allow" and "Principal" in stmt:
                assert stmt["Principal"] != "*" and stmt["Principal"] != {"AWS": "*"}, where


def test_scheduler_starts_and_passes_only_what_it_schedules(every_stack: ProgramRun) -> None:
    roles = [r.name for r in every_stack.of_type(T["role"])]
    (scheduler,) = [r for r in every_stack.of_type(T["rolepolicy"]) if r.name.endswith("scheduler-policy")]
    stmts = json.loads(scheduler.inputs["policy"])["Statement"]
    passed = {r for s in stmts if "iam:PassRole" in s["Action"] for r in as_list(s["Resource"])}
    # Every stack repairs nightly: the repair task is scheduled, the read-only audit is run by
    # hand; and the restore drill runs quarterly.
    scheduled = {
        n
        for n in roles
        if n.endswith(("-execution-role", "-ingest-task-role", "-repair-task-role", "-drill-task-role"))
    }
    assert len(scheduled) == 4
    assert {arn.rsplit("/", 1)[1].removesuffix("-1a2b3c") for arn in passed} == scheduled
    run = {r for s in stmts if "ecs:RunTask" in s["Action"] for r in as_list(s["Resource"])}
    assert {arn.split("task-definition/")[1] for arn in run} == {
        f"docuflow-{every_stack.stack}-{job}:1" for job in ("ingest", "repair", "drill")
    }


# --- KMS and logs ----------------------------------------------------------------------------
def test_kms_rotation(every_stack: ProgramRun) -> None:
    # The data key and the backup vault's, in each region (the reports' signing key is
    # asymmetric: KMS rotates no such key).
    keys = [k for k in every_stack.of_type(T["key"]) if k.inputs.get("keyUsage") != "SIGN_VERIFY"]
    assert len(keys) == 2 * (1 + _second(every_stack))
    assert all(k.inputs["enableKeyRotation"] is True for k in keys)


def test_log_retention_and_kms(every_stack: ProgramRun) -> None:
    groups = every_stack.of_type(T["loggroup"])
    assert len(groups) == len(tasks()) + 1  # and the change log's delivery errors
    for g in groups:
        assert g.inputs["retentionInDays"] >= 365
        assert g.inputs["kmsKeyId"].startswith("arn:aws:kms:")


def test_schedules_encrypted_with_the_data_key(every_stack: ProgramRun) -> None:
    (table,) = every_stack.of_type(T["table"])
    key_arn = table.inputs["serverSideEncryption"]["kmsKeyArn"]  # the stack's one data key
    schedules = every_stack.of_type("aws:scheduler/schedule:Schedule")
    assert len(schedules) >= 2
    for rec in schedules:
        assert rec.inputs["kmsKeyArn"] == key_arn, rec.name
    # Scheduler decrypts a payload with the schedule's role, so that role must be able to.
    (policy,) = [r for r in every_stack.of_type(T["rolepolicy"]) if r.name.endswith("scheduler-policy")]
    decrypts = [
        s
        for s in json.loads(policy.inputs["policy"])["Statement"]
        if "kms:Decrypt" in as_list(s["Action"])
        and "kms:EncryptionContext:aws:scheduler:schedule:arn" in s.get("Condition", {}).get("ArnLike", {})
    ]
    assert [as_list(d["Resource"]) for d in decrypts] == [[key_arn]]


def test_queues_and_topics_encrypted_with_the_data_key(every_stack: ProgramRun) -> None:
    encrypted = every_stack.of_type(T["queue"]) + every_stack.of_type(T["topic"])
    assert len(encrypted) >= 3
    for rec in encrypted:
        assert rec.inputs["kmsMasterKeyId"].startswith("arn:aws:kms:"), rec.name


# --- component structure -----------------------------------------------------------------------
def test_every_resource_belongs_to_a_docuflow_component(every_stack: ProgramRun) -> None:
    assert len(every_stack.custom) > 50
    for rec in every_stack.custom:
        parent_type = rec.parent.split("::")[-2].split("$")[-1]
        assert parent_type.startswith("docuflow:"), (rec.name, rec.parent)
        parent_name = rec.parent.rsplit("::", 1)[1]
        assert rec.name.startswith(f"{parent_name}-"), (rec.name, parent_name)
    components = [r for r in every_stack.resources if not r.custom]
    assert all(r.typ.startswith("docuflow:") and r.typ.count(":") == 2 for r in components)
    urns = [r.urn for r in every_stack.resources]
    assert len(set(urns)) == len(urns) and all(urns)


def test_protect_stateful_resources_outside_dev(every_stack: ProgramRun) -> None:
    stateful = [r for r in every_stack.custom if r.typ in (T["table"], T["bucket"], T["key"], T["vault"])]
    # Table, four buckets and the data key; the audit trail's two buckets; the audit-data bucket;
    # a backup vault and its key; and in the second region four replica buckets, their key, and
    # the copies' vault and key; the reports' signing key.
    assert len(stateful) == 6 + 2 + 1 + 2 + 1 + 7 * _second(every_stack)
    expected = every_stack.stack != "dev"
    assert all(r.protect is expected for r in stateful), [(r.name, r.protect) for r in stateful]


def test_only_the_erasure_and_the_owners_restore_may_delete_object_versions(every_stack: ProgramRun) -> None:
    granted = {
        rec.name
        for rec in every_stack.of_type(T["rolepolicy"])
        for stmt in json.loads(rec.inputs["policy"])["Statement"]
        if stmt["Effect"] == "Allow" and "s3:DeleteObjectVersion" in as_list(stmt["Action"])
    }
    assert granted == {f"docuflow-{every_stack.stack}-{job}-task-policy" for job in ("erasure", "documents")}


def test_no_task_role_may_write_an_acknowledgement_or_a_pack(every_stack: ProgramRun) -> None:
    """An acknowledgement is a person's acceptance of the reconcile's findings: the job whose
    findings are accepted may not write one (nor a month's write-once pack), while it still
    writes its own night's report and reads every acknowledgement. (The reconcile and repair
    roles had s3:PutObject on all of reconciliation/*).
    """
    from jobs.reconcile.chain.ledger import ACKNOWLEDGEMENTS_PREFIX
    from jobs.reports.pack import pack_key
    from tests.components.iam_model import Permission, allowed

    settings = StackSettings.from_mapping(stack_config(every_stack.stack))
    reports = f"arn:aws:s3:::{next(b.name for b in settings.buckets() if b.purpose == 'reports')}"
    ack = f"{reports}/{ACKNOWLEDGEMENTS_PREFIX}0123456789abcdef0123/20261130T050000.000Z/20261201T090000.000Z.json"
    old_ack = f"{reports}/{ACKNOWLEDGEMENTS_PREFIX}0123456789abcdef0123.json"
    pack = f"{reports}/{pack_key('2026-11')}"
    report = f"{reports}/{layout.reconciliation_prefix('2026-11-30', '20261130T050000Z-r1')}summary.json"
    roles = {rec.name: json.loads(rec.inputs["policy"]) for rec in every_stack.of_type(T["rolepolicy"])}
    writers = {name for name, p in roles.items() if allowed(p, Permission("s3:PutObject", report))}
    assert writers == {f"docuflow-{every_stack.stack}-{job}-task-policy" for job in ("reconcile", "repair")}
    for name, policy in roles.items():
        for key in (ack, old_ack, pack):
            assert not allowed(policy, Permission("s3:PutObject", key)), (name, key)
    for job in ("reconcile", "repair"):
        assert allowed(roles[f"docuflow-{every_stack.stack}-{job}-task-policy"], Permission("s3:GetObject", ack))
