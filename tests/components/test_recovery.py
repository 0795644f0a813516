"""Backups, the second region and the drill, from every stack's program recorded under the mocks.

prod (EU: eu-west-1 with eu-central-1) and prod-us (US: us-east-1 with us-west-2) name a second
region; dev runs in one. Each test reads the stack's own settings, so it checks what the stack
asked for rather than one stack's numbers.
"""

from __future__ import annotations

import json

import pytest

from components.job_containers import job_command
from components.settings import StackSettings, StackSettingsError, residency_of
from jobs.contract import layout
from jobs.contract.metrics import namespace
from jobs.recovery.policy import drill_task_policy
from tests.components.program import ACCOUNT, ProgramRun, Recorded, as_list, program_run, stack_config, task_policy

PLAN = "aws:backup/plan:Plan"
VAULT = "aws:backup/vault:Vault"
LOCK = "aws:backup/vaultLockConfiguration:VaultLockConfiguration"
REPLICATION = "aws:s3/bucketReplicationConfig:BucketReplicationConfig"
SECOND_REGION_STACKS = ("prod", "prod-us")


def _settings(run: ProgramRun) -> StackSettings:
    return StackSettings.from_mapping(stack_config(run.stack))


def _key(run: ProgramRun, key_arn: str) -> Recorded:
    """The recorded key whose (mocked) ARN this is."""
    # The mocks give every key of a region one ARN: the reports' signing key is not a data key.
    data_keys = [k for k in run.of_type("aws:kms/key:Key") if k.inputs.get("keyUsage") != "SIGN_VERIFY"]
    (key,) = [k for k in data_keys if k.outputs["arn"] == key_arn]
    return key


def _key_region(run: ProgramRun, key_arn: str) -> str:
    return run.region_of(_key(run, key_arn))


def _vaults(run: ProgramRun) -> dict[str, Recorded]:
    """Vault per region."""
    return {run.region_of(v): v for v in run.of_type(VAULT)}


# --- AWS Backup -----------------------------------------------------------------------------------
def test_backup_plan_keeps_daily_and_monthly_backups_and_copies_them_to_the_second_region(
    every_stack: ProgramRun,
) -> None:
    settings = _settings(every_stack)
    (plan,) = every_stack.of_type(PLAN)
    rules = {r["ruleName"]: r for r in plan.inputs["rules"]}
    assert set(rules) == {"daily", "monthly"}
    expected = {
        "daily": (settings.recovery.backup_daily_schedule, settings.recovery.backup_daily_retention_days),
        "monthly": (settings.recovery.backup_monthly_schedule, settings.recovery.backup_monthly_retention_days),
    }
    vaults = _vaults(every_stack)
    home = vaults[settings.region].inputs["name"]
    for name, (schedule, days) in expected.items():
        rule = rules[name]
        assert (
            rule["schedule"] == schedule and rule["scheduleExpressionTimezone"] == settings.scheduling.schedule_timezone
        )
        assert rule["lifecycle"] == {"deleteAfter": days}
        assert rule["targetVaultName"] == home
        if settings.recovery.replica_region is None:
            assert "copyActions" not in rule
            continue
        (copy,) = rule["copyActions"]
        copy_vault = vaults[settings.recovery.replica_region].inputs["name"]
        assert (
            copy["destinationVaultArn"]
            == f"arn:aws:backup:{settings.recovery.replica_region}:{ACCOUNT}:backup-vault:{copy_vault}"
        )
        assert copy["lifecycle"] == {"deleteAfter": days}  # a copy lives exactly as long as its source
    assert (settings.recovery.backup_daily_retention_days, settings.recovery.backup_monthly_retention_days) == (30, 365)


def test_the_table_is_selected_with_the_backup_role(every_stack: ProgramRun) -> None:
    (selection,) = every_stack.of_type("aws:backup/selection:Selection")
    (table,) = every_stack.of_type("aws:dynamodb/table:Table")
    assert selection.inputs["resources"] == [
        f"arn:aws:dynamodb:{_settings(every_stack).region}:{ACCOUNT}:table/{table.inputs['name']}"
    ]
    assert selection.inputs["iamRoleArn"].split("/")[-1].startswith(f"docuflow-{every_stack.stack}-backups-role")
    (role,) = [r for r in every_stack.of_type("aws:iam/role:Role") if r.name.endswith("-backups-role")]
    (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust["Principal"] == {"Service": "backup.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT}}


def test_every_vault_is_encrypted_with_its_own_key_and_locked_to_the_rules_retention(every_stack: ProgramRun) -> None:
    settings = _settings(every_stack)
    vaults = _vaults(every_stack)
    assert set(vaults) == {
        settings.region,
        *([settings.recovery.replica_region] if settings.recovery.replica_region else []),
    }
    data_key = every_stack.named(f"docuflow-{every_stack.stack}-key")
    locks = {lock.inputs["backupVaultName"]: lock for lock in every_stack.of_type(LOCK)}
    for region, vault in vaults.items():
        assert vault.inputs["name"] == layout.backup_vault_name(every_stack.stack, region)
        key_arn = vault.inputs["kmsKeyArn"]
        assert _key_region(every_stack, key_arn) == region  # a vault's key is in its region
        assert _key(every_stack, key_arn) is not data_key  # and is not the data key
        lock = locks[vault.inputs["name"]].inputs
        assert every_stack.region_of(locks[vault.inputs["name"]]) == region
        # Nothing shorter than the daily rule, nothing longer than the monthly one, can be kept.
        assert (lock["minRetentionDays"], lock["maxRetentionDays"]) == (
            settings.recovery.backup_daily_retention_days,
            settings.recovery.backup_monthly_retention_days,
        )
        # COMPLIANCE: immutable once the grace period ends; GOVERNANCE: no grace period at all.
        assert lock.get("changeableForDays") == (3 if settings.recovery.backup_vault_lock == "COMPLIANCE" else None)
        assert vault.protect is settings.protect
    assert {
        s.recovery.backup_vault_lock for s in map(StackSettings.from_mapping, map(stack_config, ("dev", "prod")))
    } == {
        "GOVERNANCE",
        "COMPLIANCE",
    }


def test_pitr_window_is_the_stack_setting(every_stack: ProgramRun) -> None:
    (table,) = every_stack.of_type("aws:dynamodb/table:Table")
    assert table.inputs["pointInTimeRecovery"] == {
        "enabled": True,
        "recoveryPeriodInDays": _settings(every_stack).recovery.pitr_recovery_days,
    }


# --- the second region ------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", SECOND_REGION_STACKS)
def test_raw_processed_and_reports_replicate_with_deletes_object_lock_and_the_replica_key(stack: str) -> None:
    run = program_run(stack)
    settings = _settings(run)
    replica = settings.recovery.replica_region
    assert replica is not None
    configs = {c.inputs["bucket"]: c for c in run.of_type(REPLICATION)}
    specs = {s.name: s for s in settings.buckets()}
    assert set(configs) == set(specs)  # raw, processed and reports
    buckets = {b.inputs["bucket"]: b for b in run.of_type("aws:s3/bucket:Bucket")}
    for name, config in configs.items():
        spec = specs[name]
        assert run.region_of(config) == settings.region  # configured on the source, at home
        (rule,) = config.inputs["rules"]
        assert rule["status"] == "Enabled" and rule["filter"] == {"prefix": spec.prefix}
        assert rule["deleteMarkerReplication"] == {"status": "Enabled"}
        assert rule["sourceSelectionCriteria"] == {"sseKmsEncryptedObjects": {"status": "Enabled"}}
        destination = rule["destination"]
        target = layout.replica_bucket_name(stack, spec.purpose, replica)
        assert destination["bucket"] == f"arn:aws:s3:::{target}"
        assert run.region_of(buckets[target]) == replica
        # Object Lock retention and legal holds replicate into a bucket with Object Lock: the
        # reports' replica has it from its creation, the data buckets' from a lock configuration.
        locks = {
            lock.inputs["bucket"]
            for lock in run.of_type("aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration")
        }
        locked = buckets[target].inputs.get("objectLockEnabled") is True or target in locks
        assert locked == spec.object_lock
        assert _key_region(run, destination["encryptionConfiguration"]["replicaKmsKeyId"]) == replica
        assert destination["replicationTime"] == {"status": "Enabled", "time": {"minutes": 15}}
        assert destination["metrics"] == {"status": "Enabled", "eventThreshold": {"minutes": 15}}
        role = config.inputs["role"]
        assert role.split("/")[-1].startswith(f"docuflow-{stack}-second-replication-role")


@pytest.mark.parametrize("stack", SECOND_REGION_STACKS)
def test_the_replication_role_reads_only_the_sources_and_writes_only_the_replicas(stack: str) -> None:
    run = program_run(stack)
    settings = _settings(run)
    (policy,) = [r for r in run.of_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("-replication-policy")]
    statements = {s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"]}
    sources = [f"arn:aws:s3:::{s.name}" for s in settings.buckets()]
    replicas = [
        f"arn:aws:s3:::{layout.replica_bucket_name(stack, s.purpose, settings.recovery.replica_region)}"
        for s in settings.buckets()
    ]
    assert statements["ReadReplicationConfiguration"]["Resource"] == sources
    assert statements["ReadSourceVersions"]["Resource"] == [f"{b}/*" for b in sources]
    assert set(statements["ReadSourceVersions"]["Action"]) >= {"s3:GetObjectRetention", "s3:GetObjectLegalHold"}
    assert statements["WriteReplicas"]["Resource"] == [f"{b}/*" for b in replicas]
    assert statements["WriteReplicas"]["Action"] == ["s3:ReplicateDelete", "s3:ReplicateObject", "s3:ReplicateTags"]
    decrypt, encrypt = statements["DecryptSources"], statements["EncryptReplicas"]
    assert decrypt["Action"] == ["kms:Decrypt"] and _key_region(run, decrypt["Resource"][0]) == settings.region
    assert _key_region(run, encrypt["Resource"][0]) == settings.recovery.replica_region
    assert decrypt["Condition"]["StringEquals"] == {"kms:ViaService": f"s3.{settings.region}.amazonaws.com"}
    assert encrypt["Condition"]["StringEquals"] == {
        "kms:ViaService": f"s3.{settings.recovery.replica_region}.amazonaws.com"
    }
    # Nothing else: no delete, no put, no other bucket.
    actions = {a for s in statements.values() for a in as_list(s["Action"])}
    assert not any(a in actions for a in ("s3:DeleteObject", "s3:PutObject", "s3:DeleteObjectVersion"))


def test_the_table_has_a_protected_replica_in_the_second_region_only_where_one_is_named(
    every_stack: ProgramRun,
) -> None:
    settings = _settings(every_stack)
    (table,) = every_stack.of_type("aws:dynamodb/table:Table")
    if settings.recovery.replica_region is None:
        assert "replicas" not in table.inputs
        return
    (replica,) = table.inputs["replicas"]
    assert replica["regionName"] == settings.recovery.replica_region
    assert replica["pointInTimeRecovery"] is True and replica["deletionProtectionEnabled"] is True
    assert _key_region(every_stack, replica["kmsKeyArn"]) == settings.recovery.replica_region
    # Global tables need the NEW_AND_OLD_IMAGES stream the table already has.
    assert table.inputs["streamViewType"] == "NEW_AND_OLD_IMAGES"


def test_one_stack_per_residency_keeps_regions_names_and_keys_apart() -> None:
    eu, us = program_run("prod"), program_run("prod-us")
    for run, jurisdiction in ((eu, "EU"), (us, "US")):
        settings = _settings(run)
        assert settings.recovery.residency == jurisdiction
        regions = {run.region_of(r) for r in run.custom if not r.typ.startswith("pulumi:providers")}
        assert regions == {settings.region, settings.recovery.replica_region}
        assert {residency_of(r) for r in regions} == {jurisdiction}
        # No ARN anywhere in the stack's inputs points outside its jurisdiction.
        text = json.dumps([r.inputs for r in run.resources])
        other = "us-" if jurisdiction == "EU" else "eu-"
        assert f":{other}" not in text and f".{other}" not in text

    # A bucket policy names its bucket; an S3 Inventory configuration's name is scoped to its
    # bucket (the contract's configuration id), a Glue table's to its stage's database: none is a
    # name of its own.
    scoped = ("aws:s3/bucketPolicy:BucketPolicy", "aws:s3/inventory:Inventory", "aws:glue/catalogTable:CatalogTable")

    def names(run: ProgramRun) -> set[str]:
        found: set[str] = set()
        for rec in run.custom:
            for field in ("bucket", "name", "family"):
                value = rec.inputs.get(field)
                if isinstance(value, str) and rec.typ not in scoped:
                    found.add(value)
        return found

    eu_names, us_names = names(eu), names(us)
    assert len(eu_names) > 20 and layout.replica_bucket_name("prod", "raw", "eu-central-1") in eu_names
    assert not eu_names & us_names  # tables, buckets, vaults, queues, task families, aliases
    # Each stack encrypts with keys of its own, in its own regions (aliases differ by stage too).
    for run in (eu, us):
        settings = _settings(run)
        for key in run.of_type("aws:kms/key:Key"):
            assert run.region_of(key) in (settings.region, settings.recovery.replica_region)


def test_a_second_region_outside_the_residency_or_equal_to_home_is_refused() -> None:
    base = {**stack_config("prod")}
    with pytest.raises(StackSettingsError, match="leaves the stack's residency EU"):
        StackSettings.from_mapping({**base, "docuflow:replicaRegion": "us-east-1"})
    with pytest.raises(StackSettingsError, match="must differ"):
        StackSettings.from_mapping({**base, "docuflow:replicaRegion": "eu-west-1"})
    with pytest.raises(StackSettingsError, match="is not in docuflow:residency US"):
        StackSettings.from_mapping({**base, "docuflow:residency": "US"})
    with pytest.raises(StackSettingsError, match="backupMonthlyRetentionDays must be at least"):
        StackSettings.from_mapping(
            {**base, "docuflow:backupMonthlyRetentionDays": "28", "docuflow:backupDailyRetentionDays": "30"}
        )
    with pytest.raises(StackSettingsError, match="docuflow:pitrRecoveryDays"):
        StackSettings.from_mapping({**base, "docuflow:pitrRecoveryDays": "36"})
    assert residency_of("us-gov-west-1") == "US-GOV" != residency_of("us-east-1")


def test_the_erased_data_horizon_is_the_longest_backup_retention(every_stack: ProgramRun) -> None:
    settings = _settings(every_stack)
    horizon = every_stack.outputs["erasedDataHorizonDays"]
    assert horizon == max(settings.recovery.pitr_recovery_days, settings.recovery.backup_monthly_retention_days) == 365


# --- the restore drill ----------------------------------------------------------------------------
def test_the_drill_runs_quarterly_as_its_own_task_and_alarms_when_it_fails(every_stack: ProgramRun) -> None:
    settings = _settings(every_stack)
    (schedule,) = [
        s for s in every_stack.of_type("aws:scheduler/schedule:Schedule") if s.inputs["name"].endswith("-drill")
    ]
    assert (
        schedule.inputs["scheduleExpression"] == settings.scheduling.expression("drill") == "cron(0 6 1 1,4,7,10 ? *)"
    )
    (taskdef,) = [
        t for t in every_stack.of_type("aws:ecs/taskDefinition:TaskDefinition") if t.inputs["family"].endswith("-drill")
    ]
    (container,) = json.loads(taskdef.inputs["containerDefinitions"])
    assert container["command"] == job_command("drill") == ["drill", "--drop-after"]
    assert schedule.inputs["target"]["ecsParameters"]["taskDefinitionArn"].endswith(f"{taskdef.inputs['family']}:1")
    # The failed-task rule watches every job's task definition, the drill's among them.
    (rule,) = [r for r in every_stack.of_type("aws:cloudwatch/eventRule:EventRule") if r.name.endswith("-failed-tasks")]
    watched = json.loads(rule.inputs["eventPattern"])["detail"]["taskDefinitionArn"]
    assert any(arn.endswith(f"{taskdef.inputs['family']}:1") for arn in watched)


def test_the_drill_role_is_the_pure_builders_and_never_writes_the_live_table(every_stack: ProgramRun) -> None:
    settings = _settings(every_stack)
    (recorded,) = [
        r
        for r in every_stack.of_type("aws:iam/rolePolicy:RolePolicy")
        if r.name == f"docuflow-{every_stack.stack}-drill-task-policy"
    ]
    attached = json.loads(recorded.inputs["policy"])
    region = settings.region
    table = f"arn:aws:dynamodb:{region}:{ACCOUNT}:table/{layout.table_name(settings.stage)}"
    names = {spec.purpose: f"arn:aws:s3:::{spec.name}" for spec in settings.buckets()}
    backup_role = f"arn:aws:iam::{ACCOUNT}:role/docuflow-{settings.stage}-backups-role-1a2b3c"
    audit = settings.audit_data().name
    assert attached == task_policy(
        drill_task_policy,
        table_arn=table,
        raw_bucket_arn=names["raw"],
        processed_bucket_arn=names["processed"],
        reports_bucket_arn=names["reports"],
        key_arn=f"arn:aws:kms:{region}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        region=region,
        account_id=ACCOUNT,
        backup_role_arn=backup_role,
        exports_bucket_arn=f"arn:aws:s3:::{audit}" if audit else None,
        metrics_namespace=namespace(settings.stage),  # the drill's RPO, RTO and verdict
    )
    writes = {
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:DeleteTable",
    }
    on_live = {a for s in attached["Statement"] if table in as_list(s["Resource"]) for a in as_list(s["Action"])}
    assert on_live and not on_live & writes
