"""The job image the task definitions run, by digest: in a configured registry/repository, or in
the stack's own ECR repository, whose lifecycle keeps the deployed image and every release.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child


@dataclass(frozen=True)
class JobImage:
    """The image by digest: in `repository` (a configured registry/repository), or (None) the
    stack's own ECR repository, which keeps the newest `keep_count` images and every one tagged
    with a release prefix. `tag`: in the stack's own repository, the tag `digest` is pushed under
    (kept by the lifecycle policy whatever else it expires, and checked to name `digest` at `up`).
    """

    digest: str
    repository: str | None = None
    keep_count: int = 30
    release_tag_prefixes: Sequence[str] = ()
    tag: str | None = None


def job_image(
    parent: pulumi.Resource,
    name: str,
    repository_name: str,
    image: JobImage,
    kms_key_arn: pulumi.Input[str],
    tags: Mapping[str, str],
) -> tuple[pulumi.Output[str], pulumi.Input[str] | None, pulumi.Output[str] | None]:
    """The pinned image, the repository's ARN (None outside ECR) and the stack's repository URL."""
    if image.repository:
        uri = f"{image.repository}@{image.digest}"
        return pulumi.Output.from_input(uri), policies.ecr_repository_arn(uri), None
    repository = aws.ecr.Repository(
        f"{name}-repository",
        name=repository_name,
        image_tag_mutability="IMMUTABLE",
        image_scanning_configuration=aws.ecr.RepositoryImageScanningConfigurationArgs(scan_on_push=True),
        encryption_configurations=[
            aws.ecr.RepositoryEncryptionConfigurationArgs(encryption_type="KMS", kms_key=kms_key_arn)
        ],
        tags=dict(tags),
        opts=child(parent),
    )
    lifecycle = policies.ecr_lifecycle_policy(image.keep_count, image.release_tag_prefixes, deployed_tag=image.tag)
    aws.ecr.LifecyclePolicy(
        f"{name}-repository-lifecycle",
        repository=repository.name,
        policy=json.dumps(lifecycle),
        opts=child(parent),
    )
    pinned = repository.repository_url.apply(lambda url: f"{url}@{image.digest}")
    tag = image.tag
    if tag is not None and not pulumi.runtime.is_dry_run():
        # At `up` only: a preview makes no registry call (docs/deploy.md). The task
        # definitions wait for the check, so a digest the tag does not name is never deployed.
        listed = aws.ecr.get_images_output(repository_name=repository.name, opts=pulumi.InvokeOptions(parent=parent))

        def checked(got: list[Any]) -> str:
            # Each a GetImagesImageIdResult: a dict by its Python names (an untagged image has no tag).
            check_tagged_digest([(i.get("image_tag"), i["image_digest"]) for i in got[1]], tag, image.digest)
            return str(got[0])

        pinned = pulumi.Output.all(pinned, listed.image_ids).apply(checked)
    return pinned, repository.arn, repository.repository_url


def check_tagged_digest(images: Sequence[tuple[str | None, str]], tag: str, digest: str) -> None:
    """Refuse a deploy whose imageDigest is not the image its imageTag names in the stack's
    repository (ValueError, which fails `up` before a task definition takes it). An empty
    repository passes: the stack's first `up` runs before the first push (docs/deploy.md).
    """
    if not images:
        return
    named = {d for t, d in images if t == tag}
    if not named:
        raise ValueError(f"docuflow:imageTag {tag!r} names no image in the stack's repository: push it first")
    if digest not in named:
        raise ValueError(
            f"docuflow:imageTag {tag!r} is {', '.join(sorted(named))}, not docuflow:imageDigest {digest}: "
            "set the digest the push printed"
        )
