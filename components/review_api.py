"""ReviewApi: the role the review API runs as (the review actions and the presigned result.json URL).

The functions behind it are jobs.review.ReviewDesk and jobs.documents.url.result_url, which an API
(a Lambda function behind the frontend's authenticated API, by default) calls for one document at
a time; the API itself is not part of this stack. Its policy is components.policies.review_api_policy,
exactly the calls those functions make (tests/components/test_iam_matches_calls.py records them
on the local stack), and it receives the job settings they read (the table, the processed bucket,
the claim's lease and the URLs' life, from the stack settings).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document


@dataclass
class ReviewApiArgs:
    account_id: pulumi.Input[str]
    table_arn: pulumi.Input[str]
    processed_bucket_arn: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    # jobs.settings.JobSettings.env(): what the API's functions read (an Output: the queue URL).
    environment: pulumi.Input[Mapping[str, str]]
    # Who assumes the role: the API's compute (Lambda by default; ecs-tasks.amazonaws.com for a service).
    service: str = "lambda.amazonaws.com"
    tags: dict[str, str] = field(default_factory=dict)


class ReviewApi(pulumi.ComponentResource):
    role_arn: pulumi.Output[str]
    role_name: pulumi.Output[str]
    environment: pulumi.Output[Mapping[str, str]]

    def __init__(self, name: str, args: ReviewApiArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:review_api:ReviewApi", name, None, opts)
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=json_document(
                policies.assume_role_policy, service=args.service, account_id=args.account_id
            ),
            tags=args.tags,
            opts=child(self),
        )
        aws.iam.RolePolicy(
            f"{name}-policy",
            role=role.id,
            policy=json_document(
                policies.review_api_policy,
                table_arn=args.table_arn,
                processed_bucket_arn=args.processed_bucket_arn,
                key_arn=args.kms_key_arn,
            ),
            opts=child(self),
        )
        self.role_arn = role.arn
        self.role_name = role.name
        self.environment = pulumi.Output.from_input(args.environment)
        self.register_outputs({"role_arn": self.role_arn, "role_name": self.role_name, "environment": self.environment})
