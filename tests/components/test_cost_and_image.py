"""A budget that holds: the stack's cost budget alerts the alarm topic, which lets Budgets
publish; the job repository keeps the images a stack may run; task definitions pin a digest.
"""

from __future__ import annotations

import json
import re

import pytest

from components.policies import RELEASE_IMAGES_KEPT
from components.settings import StackSettings, StackSettingsError
from tests.components.program import ProgramRun, stack_config

DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def _budgets(run: ProgramRun) -> dict[str, dict]:
    return {b.inputs["name"]: b.inputs for b in run.of_type("aws:budgets/budget:Budget")}


def test_every_stack_has_a_monthly_cost_budget_alerting_the_topic(every_stack: ProgramRun) -> None:
    config = stack_config(every_stack.stack)
    budget = _budgets(every_stack)[f"docuflow-{every_stack.stack}-monthly-cost"]
    assert (budget["budgetType"], budget["timeUnit"], budget["limitUnit"]) == ("COST", "MONTHLY", "USD")
    assert budget["limitAmount"] == f"{float(config['docuflow:monthlyBudgetUsd']):.2f}"
    assert budget["costFilters"] == [{"name": "TagKeyValue", "values": [f"user:stage${every_stack.stack}"]}]
    kinds = sorted((n["notificationType"], n["threshold"]) for n in budget["notifications"])
    assert kinds == [("ACTUAL", 80), ("ACTUAL", 100), ("FORECASTED", 100)]
    # The stack's alarm topic: the configured one, else the one the stack made.
    made = [r.outputs["arn"] for r in every_stack.of_type("aws:sns/topic:Topic")]
    topics = {t for n in budget["notifications"] for t in n["subscriberSnsTopicArns"]}
    assert topics == {config.get("docuflow:alarmTopicArn") or made[0]}


def test_budgets_may_publish_to_the_stacks_encrypted_topic(dev: ProgramRun) -> None:
    policy = json.loads(dev.one("aws:sns/topicPolicy:TopicPolicy").inputs["policy"])
    (publish,) = [s for s in policy["Statement"] if "sns:Publish" in s["Action"]]
    assert "budgets.amazonaws.com" in publish["Principal"]["Service"]
    # The topic is KMS-encrypted: a publisher needs the key too.
    key = json.loads(dev.named("docuflow-dev-key").inputs["policy"])
    (encrypt,) = [s for s in key["Statement"] if s["Sid"] == "AlarmsAndRulesPublishToEncryptedTopic"]
    assert "budgets.amazonaws.com" in encrypt["Principal"]["Service"]


def test_task_definitions_name_the_image_by_digest_on_every_stack(every_stack: ProgramRun) -> None:
    digest = stack_config(every_stack.stack)["docuflow:imageDigest"]
    for td in every_stack.of_type("aws:ecs/taskDefinition:TaskDefinition"):
        (container,) = json.loads(td.inputs["containerDefinitions"])
        assert DIGEST.search(container["image"]) and container["image"].endswith(f"@{digest}"), td.name


def test_the_job_repository_keeps_releases_and_the_newest_images(dev: ProgramRun) -> None:
    lifecycle = dev.one("aws:ecr/lifecyclePolicy:LifecyclePolicy").inputs
    assert lifecycle["repository"] == "docuflow-dev-jobs"
    deployed, releases, others = json.loads(lifecycle["policy"])["rules"]
    assert deployed["selection"]["tagPatternList"] == [stack_config("dev")["docuflow:imageTag"]]  # its own, first
    # Release images are selected first, so the count rule never expires one (ECR's priority).
    assert releases["rulePriority"] < others["rulePriority"]
    assert releases["selection"] == {
        "tagStatus": "tagged",
        "tagPrefixList": ["20"],
        "countType": "imageCountMoreThan",
        "countNumber": RELEASE_IMAGES_KEPT,
    }
    assert others["selection"] == {"tagStatus": "any", "countType": "imageCountMoreThan", "countNumber": 30}
    # The image dev runs is a release: its tag has the prefix the first rule keeps.
    assert stack_config("dev")["docuflow:imageTag"].startswith("20")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"docuflow:imageDigest": "sha256:abc"}, "docuflow:imageDigest"),
        ({"docuflow:imageDigest": None}, "docuflow:imageDigest"),
        ({"docuflow:imageTag": "ci-1234"}, "not a release tag"),
        ({"docuflow:imageUri": f"r.example/jobs@sha256:{'0' * 64}", "docuflow:imageTag": None}, "another digest"),
        ({"docuflow:monthlyBudgetUsd": "0"}, "docuflow:monthlyBudgetUsd"),
        ({"docuflow:monthlyBudgetUsd": "12.345"}, "docuflow:monthlyBudgetUsd"),
    ],
)
def test_image_and_budget_settings_are_checked(changes: dict[str, str | None], message: str) -> None:
    values = {**stack_config("dev"), **changes}
    with pytest.raises(StackSettingsError, match=message):
        StackSettings.from_mapping({k: v for k, v in values.items() if v is not None})


def test_every_stack_has_a_budget_that_sees_textract(every_stack: ProgramRun) -> None:
    """Textract's charges carry no tag: the stage budget cannot see them, a service budget does."""
    config = stack_config(every_stack.stack)
    budgets = _budgets(every_stack)
    assert len(budgets) == 2
    textract = budgets[f"docuflow-{every_stack.stack}-textract-monthly-cost"]
    assert textract["costFilters"] == [{"name": "Service", "values": ["Amazon Textract"]}]
    amount = config.get("docuflow:textractBudgetUsd") or config["docuflow:monthlyBudgetUsd"]
    assert textract["limitAmount"] == f"{float(amount):.2f}"
    kinds = sorted((n["notificationType"], n["threshold"]) for n in textract["notifications"])
    assert kinds == [("ACTUAL", 80), ("ACTUAL", 100), ("FORECASTED", 100)]
    stage = budgets[f"docuflow-{every_stack.stack}-monthly-cost"]
    topics = {t for b in (stage, textract) for n in b["notifications"] for t in n["subscriberSnsTopicArns"]}
    assert len(topics) == 1  # both alert the stack's alarm topic


def test_scheduled_tasks_carry_the_stacks_tags_on_every_stack(every_stack: ProgramRun) -> None:
    """A task the scheduler starts is tagged from its task definition (stage among the tags) and
    with ECS's managed tags, so its Fargate hours reach the stage budget.
    """
    schedules = every_stack.of_type("aws:scheduler/schedule:Schedule")
    assert schedules
    families = {
        td.outputs.get("arn") or td.inputs["family"]: td
        for td in every_stack.of_type("aws:ecs/taskDefinition:TaskDefinition")
    }
    for schedule in schedules:
        ecs = schedule.inputs["target"]["ecsParameters"]
        assert ecs["propagateTags"] == "TASK_DEFINITION" and ecs["enableEcsManagedTags"] is True, schedule.name
        assert ecs["tags"]["stage"] == every_stack.stack, schedule.name
    for td in families.values():
        assert td.inputs["tags"]["stage"] == every_stack.stack, td.name


def test_a_budget_and_tag_settings_are_checked() -> None:
    with pytest.raises(StackSettingsError, match="docuflow:textractBudgetUsd"):
        StackSettings.from_mapping({**stack_config("dev"), "docuflow:textractBudgetUsd": "0"})
    unset = {k: v for k, v in stack_config("dev").items() if k != "docuflow:textractBudgetUsd"}
    assert (
        StackSettings.from_mapping(unset).operations.textract_budget
        == StackSettings.from_mapping(unset).operations.monthly_budget_usd
    )


def test_the_scheduler_may_tag_only_the_tasks_it_starts(every_stack: ProgramRun) -> None:
    """RunTask with tags is authorized as ecs:TagResource too (tag on create): without it every
    tagged scheduled start is refused. Granted on the cluster's tasks, for RunTask only.
    """
    (role,) = [p for p in every_stack.of_type("aws:iam/rolePolicy:RolePolicy") if "scheduler" in p.name]
    statements = json.loads(role.inputs["policy"])["Statement"]
    (tag,) = [s for s in statements if "ecs:TagResource" in s["Action"]]
    assert tag["Action"] == ["ecs:TagResource"]
    assert tag["Condition"] == {"StringEquals": {"ecs:CreateAction": "RunTask"}}
    (cluster,) = [c.outputs["arn"] for c in every_stack.of_type("aws:ecs/cluster:Cluster")]
    assert tag["Resource"] == [cluster.replace(":cluster/", ":task/") + "/*"]
