"""The stack's own ECR repository never expires the image its task definitions run, and an `up`
refuses an imageDigest its imageTag does not name (under Pulumi mocks; the repository's images
are what the mocks answer ListImages with).
"""

from __future__ import annotations

import json

import pytest

from components.job_image import check_tagged_digest
from components.policies import RELEASE_IMAGES_KEPT, ecr_lifecycle_policy
from tests.components.program import MOCKS, program_run, run_program, stack_config

TAG = "2026.11.29-1"
DIGEST = "sha256:" + "b" * 64
OTHER = "sha256:" + "c" * 64


def test_the_deployed_tag_is_selected_first_and_never_counted_past() -> None:
    rules = ecr_lifecycle_policy(30, ["20"], deployed_tag="feature-x")["rules"]
    assert [r["rulePriority"] for r in rules] == [1, 2, 3]
    # Not a release tag, older than the 30 newest: still kept, as no lower rule may expire it.
    assert rules[0]["selection"] == {
        "tagStatus": "tagged",
        "tagPatternList": ["feature-x"],  # no wildcard: this tag exactly, not a prefix of others
        "countType": "imageCountMoreThan",
        "countNumber": 1,
    }
    assert rules[1]["selection"]["countNumber"] == RELEASE_IMAGES_KEPT
    assert rules[-1]["selection"]["tagStatus"] == "any"  # ECR: the `any` rule is the last
    assert [r["rulePriority"] for r in ecr_lifecycle_policy(30, ["20"])["rules"]] == [1, 2]


def test_the_stacks_repository_keeps_the_image_its_task_definitions_name() -> None:
    run = program_run("dev")
    (policy,) = run.of_type("aws:ecr/lifecyclePolicy:LifecyclePolicy")
    rules = json.loads(policy.inputs["policy"])["rules"]
    tag = stack_config("dev")["docuflow:imageTag"]
    assert rules[0]["selection"]["tagPatternList"] == [tag]
    digest = stack_config("dev")["docuflow:imageDigest"]
    images = {d["image"] for r in run.of_type("aws:ecs/taskDefinition:TaskDefinition") for d in _containers(r)}
    assert images and all(i.endswith(f"@{digest}") for i in images)


def _containers(rec) -> list[dict]:
    return json.loads(rec.inputs["containerDefinitions"])


@pytest.mark.parametrize(
    ("images", "says"),
    [
        ([], None),  # the first `up`, before the first push
        ([(TAG, DIGEST), ("2026.11.28-1", OTHER)], None),
        ([(TAG, OTHER)], f"is {OTHER}, not docuflow:imageDigest {DIGEST}"),
        ([("2026.11.28-1", DIGEST)], "names no image in the stack's repository"),
    ],
)
def test_the_digest_must_be_the_one_its_tag_names(images: list[tuple[str, str]], says: str | None) -> None:
    if says is None:
        check_tagged_digest(images, TAG, DIGEST)
    else:
        with pytest.raises(ValueError, match=says):
            check_tagged_digest(images, TAG, DIGEST)


def test_an_up_whose_tag_names_another_digest_fails_before_a_task_definition_takes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tag = stack_config("dev")["docuflow:imageTag"]
    monkeypatch.setattr(MOCKS, "images", [(tag, OTHER)])
    with pytest.raises(Exception, match="not docuflow:imageDigest"):
        run_program("dev")
