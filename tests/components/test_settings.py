"""StackSettings: every stack file loads; a wrong value fails naming its config key."""

from __future__ import annotations

import json

import pulumi
import pytest
import yaml

from components.settings import StackSettings, StackSettingsError
from jobs.contract import RetentionPolicy
from tests.components.program import REPO_ROOT, program_run, stack_config, stack_files


def _dev(**changes: str | None) -> dict[str, str | None]:
    values: dict[str, str | None] = dict(stack_config("dev"))
    values.update(changes)
    return values


def test_stack_files_exist() -> None:
    assert {"dev", "prod"} <= set(stack_files())


@pytest.mark.parametrize("stack", stack_files())
def test_every_stack_file_loads(stack: str) -> None:
    settings = StackSettings.from_mapping(stack_config(stack))
    assert settings.stage == stack
    # One stack per residency: the US production stack lives in the US, the others in the EU.
    assert settings.region == ("us-east-1" if stack == "prod-us" else "eu-west-1")


def test_dev_stack_sets_every_key() -> None:
    """Pulumi.dev.yaml is the complete reference: every key the program reads is spelled there."""
    raw = yaml.safe_load((REPO_ROOT / "Pulumi.dev.yaml").read_text())["config"]
    missing = set(StackSettings.keys()) - set(raw)
    # Mutually exclusive with alarmEmail / imageTag, which dev sets; dev has no break-glass role
    # (nobody may overwrite or delete its reports) and runs in one region; prod shows both.
    assert missing == {
        "docuflow:alarmTopicArn",
        "docuflow:imageUri",
        "docuflow:breakGlassRoleArn",
        "docuflow:replicaRegion",
    }
    assert all(k.startswith(("docuflow:", "aws:")) for k in raw)


def test_project_file() -> None:
    project = yaml.safe_load((REPO_ROOT / "Pulumi.yaml").read_text())
    assert project["name"] == "docuflow"
    assert project["runtime"] == {
        "name": "python",
        "options": {"toolchain": "pip", "virtualenv": ".venv"},
    }


def test_derived_values() -> None:
    dev = StackSettings.from_mapping(stack_config("dev"))
    prod = StackSettings.from_mapping(stack_config("prod"))
    assert not dev.protect and prod.protect
    assert dev.scheduling.schedule_timezone == "Europe/Berlin"
    assert dev.scheduling.expression("ingest") == "cron(0 1 * * ? *)"
    assert dev.scheduling.expression("reconcile") == "cron(0 5 * * ? *)"
    assert dev.ingest.ingest_tasks == 4 and prod.ingest.ingest_tasks == 8
    assert dev.storage.lifecycle().rules()[0]["Transitions"] == [
        {"Days": 30, "StorageClass": "STANDARD_IA"},
        {"Days": 365, "StorageClass": "GLACIER_IR"},
    ]
    assert [b.purpose for b in dev.buckets()] == ["raw", "processed", "reports"]
    assert dev.resource_tags()["stage"] == "dev"


def test_defaults_when_optional_keys_are_absent() -> None:
    minimal = {
        "aws:region": "us-east-1",
        "docuflow:stage": "qa",
        "docuflow:subnetIds": '["subnet-0123456789abcdef0"]',
        "docuflow:securityGroupIds": '["sg-0123456789abcdef0"]',
        "docuflow:imageTag": "2026.12.01-1",
        "docuflow:imageDigest": "sha256:" + "ab" * 32,
        "docuflow:monthlyBudgetUsd": "250",
    }
    s = StackSettings.from_mapping(minimal)
    assert (s.storage.retention_days, s.storage.noncurrent_expiration_days, s.storage.abort_multipart_days) == (
        1827,
        90,
        7,
    )
    assert s.storage.retention() == RetentionPolicy()  # the contract's: the local stack's rules and TTLs
    assert (s.storage.object_lock_mode, s.storage.object_lock_days, s.tasks.log_retention_days) == (
        "GOVERNANCE",
        365,
        365,
    )
    assert s.scheduling.schedule_timezone == "UTC" and s.tasks.fargate_spot is False
    assert s.ingest.ocr_engine == "textract"  # AWS default: scans go to Amazon Textract


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("docuflow:ingestTasks", "0", "greater than or equal to 1"),
        ("docuflow:ingestTasks", "11", "less than or equal to 10"),  # RunTask starts at most 10
        ("docuflow:ingestTasks", "many", "valid integer"),
        ("docuflow:stage", "Prod_1", "pattern"),
        ("docuflow:scheduleTimezone", "Mars/Olympus_Mons", "IANA time zone"),
        ("docuflow:schedules", '{"ingest": "0 2 * * *"}', "cron"),
        ("docuflow:schedules", '{"ingest-hourly": "cron(0 * * * ? *)"}', "no schedule is named ['ingest-hourly']"),
        ("docuflow:taskSizes", '{"ingest-large": {"cpu": 4096, "memory": 8192}}', "no task is named ['ingest-large']"),
        ("docuflow:subnetIds", '["subnet-nope"]', "subnet id"),
        ("docuflow:subnetIds", "[]", "at least 1"),
        ("docuflow:securityGroupIds", '["default"]', "security group id"),
        ("docuflow:corsOrigins", '["http://evil.example"]', "https origin"),
        ("docuflow:logRetentionDays", "30", "a year or more"),
        ("docuflow:objectLockMode", "FOREVER", "GOVERNANCE"),
        ("docuflow:infrequentAccessAfterDays", "10", "greater than or equal to 30"),
        ("docuflow:imageUri", "not an image", "registry/repository"),
        ("docuflow:alarmEmail", "nobody", "pattern"),
        ("docuflow:fargateSpot", "perhaps", "boolean"),
        ("docuflow:bucketNames", '{"archive": "x"}', "unknown bucket purpose"),
        ("docuflow:ocrEngine", "tesseract", "'textract', 'local' or 'off'"),
        ("docuflow:breakGlassRoleArn", "arn:aws:iam::111122223333:user/admin", "pattern"),
        ("aws:region", "mars-1", "pattern"),
    ],
)
def test_wrong_value_names_the_key(key: str, value: str, fragment: str) -> None:
    with pytest.raises(StackSettingsError) as info:
        StackSettings.from_mapping(_dev(**{key: value}))
    message = str(info.value)
    assert f"{key}:" in message and fragment in message, message


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"docuflow:subnetIds": None}, "docuflow:subnetIds"),
        ({"docuflow:stage": None}, "docuflow:stage"),
        ({"docuflow:imageTag": None}, "docuflow:imageTag"),
        ({"docuflow:taskSizes": '{"ingest": {"cpu": 1024, "memory": 512}}'}, "docuflow:taskSizes.ingest"),
        ({"docuflow:taskSizes": '{"ingest": {"cpu": 1024}}'}, "docuflow:taskSizes.ingest.memory"),
        ({"docuflow:glacierAfterDays": "40"}, "docuflow:glacierAfterDays"),
        ({"docuflow:alarmTopicArn": "arn:aws:sns:eu-west-1:111122223333:t"}, "docuflow:alarmTopicArn"),
        ({"docuflow:ingesttasks": "2"}, "docuflow:ingesttasks"),
        ({"docuflow:shardCount": "2"}, "docuflow:shardCount"),  # the old sweep's key is gone
        # A table state must outlive the nights the chain may bring forward.
        ({"docuflow:tableStateRetentionDays": "7"}, "docuflow:tableStateRetentionDays"),
        ({"docuflow:reconcileReanchorDays": "36"}, "docuflow:reconcileReanchorDays"),  # PITR keeps 35
    ],
)
def test_missing_inconsistent_or_unknown_keys_are_named(changes: dict[str, str | None], key: str) -> None:
    with pytest.raises(StackSettingsError, match=key):
        StackSettings.from_mapping(_dev(**changes))


def test_the_program_fails_on_a_wrong_config_value_naming_the_key() -> None:
    namespace = program_run("dev").namespace
    pulumi.runtime.set_all_config(_dev(**{"docuflow:ingestTasks": "100"}))  # type: ignore[arg-type]
    try:
        with pytest.raises(StackSettingsError, match="docuflow:ingestTasks"):
            namespace["load_settings"]()
    finally:
        pulumi.runtime.set_all_config(stack_config("dev"))


def test_the_drain_bound_is_derived_from_the_two_schedules() -> None:
    # 02:00 → 05:00 Europe/Berlin is 2 hours on the spring-forward night: 120 less the margin.
    assert StackSettings.from_mapping(_dev()).scheduling.drain_minutes == 165
    later = _dev(**{"docuflow:schedules": '{"reconcile": "cron(0 7 * * ? *)"}', "docuflow:scheduleTimezone": "UTC"})
    assert StackSettings.from_mapping(later).scheduling.drain_minutes == 6 * 60 - 15


@pytest.mark.parametrize(
    "reconcile",
    ["cron(30 1 * * ? *)", "cron(0 1 * * ? *)"],  # 30 minutes after the ingest, or with it
)
def test_schedules_that_leave_the_drain_too_little_are_refused_naming_both(reconcile: str) -> None:
    with pytest.raises(StackSettingsError) as info:
        StackSettings.from_mapping(_dev(**{"docuflow:schedules": json.dumps({"reconcile": reconcile})}))
    message = str(info.value)
    assert f"docuflow:schedules ingest cron(0 1 * * ? *) and reconcile {reconcile}" in message, message
    assert "at least 30" in message


def test_a_schedule_the_bound_cannot_read_is_refused_naming_it() -> None:
    with pytest.raises(StackSettingsError, match=r"docuflow:schedules.*reconcile cron\(0 5 L \* \? \*\).*'L'"):
        StackSettings.from_mapping(_dev(**{"docuflow:schedules": '{"reconcile": "cron(0 5 L * ? *)"}'}))


def test_alarm_thresholds_are_settings() -> None:
    dev = StackSettings.from_mapping(_dev())
    assert (dev.operations.arrivals_max_age_seconds, dev.operations.replication_latency_alarm_seconds) == (
        26 * 3600,
        900,
    )
    with pytest.raises(StackSettingsError, match="docuflow:replicationLatencyAlarmSeconds"):
        StackSettings.from_mapping(_dev(**{"docuflow:replicationLatencyAlarmSeconds": "10"}))


def test_the_second_opinion_is_on_with_textract_and_can_be_turned_off() -> None:
    unset = _dev(**{"docuflow:textractFallback": None})
    assert StackSettings.from_mapping(unset).ingest.second_opinion  # ocrEngine textract: on by default
    assert not StackSettings.from_mapping(_dev(**{"docuflow:textractFallback": "false"})).ingest.second_opinion
    # It is Textract's opinion: a stack reading scans locally never asks it.
    local = _dev(**{"docuflow:textractFallback": "true", "docuflow:ocrEngine": "local"})
    assert not StackSettings.from_mapping(local).ingest.second_opinion


def test_a_stack_with_the_second_opinion_off_gives_the_ingest_no_fallback() -> None:
    from components.job_containers import container_definition
    from jobs.runtime.registry import TaskStack
    from jobs.settings import JobSettings

    off = StackSettings.from_mapping(_dev(**{"docuflow:textractFallback": "false"}))
    image = "repo@sha256:" + "0" * 64
    environment = JobSettings(stage="dev").env()
    for second_opinion, expected in ((off.ingest.second_opinion, None), (True, "true")):
        stack = TaskStack(image=image, table_arn="", textract_fallback=second_opinion)
        container = container_definition(
            job="ingest", log_group="g", region="eu-west-1", environment=environment, stack=stack
        )
        names = {e["name"]: e["value"] for e in container["environment"]}
        assert names.get("DOCUFLOW_TEXTRACT_FALLBACK") == expected
