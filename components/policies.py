"""Pure policy builders: IAM role, trust, key, bucket and topic policies as plain dicts.

Every function takes concrete ARNs (already resolved from Outputs by the caller) and returns a
policy document, so least privilege is tested without Pulumi. No Allow statement uses a wildcard
action; `*` appears as a resource only for actions that have no resource type (ecr
GetAuthorizationToken) and in key policies, where it means "this key".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from jobs.contract import layout
from jobs.contract.iam import KMS_ENCRYPT, KMS_USE, Policy, Statement, document, objects, statement, use_data_key

# The key's administrators and, by delegation to the account, the IAM policies below. Listed
# explicitly rather than kms:* so the key policy passes the same no-wildcard-action check.
KMS_ACCOUNT_ACTIONS = (
    "kms:CancelKeyDeletion",
    "kms:CreateAlias",
    "kms:CreateGrant",
    "kms:Decrypt",
    "kms:DeleteAlias",
    "kms:DescribeKey",
    "kms:DisableKey",
    "kms:DisableKeyRotation",
    "kms:EnableKey",
    "kms:EnableKeyRotation",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:GetKeyPolicy",
    "kms:GetKeyRotationStatus",
    "kms:ListGrants",
    "kms:ListKeyPolicies",
    "kms:ListKeyRotations",
    "kms:ListResourceTags",
    "kms:PutKeyPolicy",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:RetireGrant",
    "kms:RevokeGrant",
    "kms:RotateKeyOnDemand",
    "kms:ScheduleKeyDeletion",
    "kms:TagResource",
    "kms:UntagResource",
    "kms:UpdateAlias",
    "kms:UpdateKeyDescription",
)
KMS_LOGS_ACTIONS = (
    "kms:Encrypt",
    "kms:Decrypt",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:DescribeKey",
)

_ECR_IMAGE = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com/(?P<repo>[a-z0-9._/-]+?)"
    r"(:[\w.-]+|@sha256:[0-9a-f]{64})$"
)


def assume_role_policy(service: str, account_id: str) -> Policy:
    """Trust `service`, only on behalf of this account (confused-deputy guard)."""
    return document(
        {
            "Sid": "TrustService",
            "Effect": "Allow",
            "Principal": {"Service": service},
            "Action": "sts:AssumeRole",
            "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
        }
    )


# The services that publish to the alarm topic: CloudWatch alarms, EventBridge rules (failed
# tasks) and AWS Budgets (the stack's cost budget).
ALERT_PUBLISHERS = ("cloudwatch.amazonaws.com", "events.amazonaws.com", "budgets.amazonaws.com")


# --- KMS -----------------------------------------------------------------------------------
def data_key_policy(
    account_id: str,
    region: str,
    notifying_bucket_arns: Sequence[str] = (),
    inventoried_bucket_arns: Sequence[str] = (),
    trail_arn: str | None = None,
) -> Policy:
    """The stack's data key: the account administers it; services that encrypt for us may use it.

    CloudWatch Logs encrypts log groups itself (scoped by encryption context to this account's
    groups); CloudWatch alarms and EventBridge publish to the KMS-encrypted alarm topic; S3 sends
    the notifications of `notifying_bucket_arns` to the KMS-encrypted arrival queue, which takes
    a data key (GenerateDataKey) and, for SQS, Decrypt, on behalf of those buckets only; and S3
    Inventory encrypts the reports of `inventoried_bucket_arns` with it (GenerateDataKey).
    """
    root = {"AWS": f"arn:aws:iam::{account_id}:root"}
    source = {"StringEquals": {"aws:SourceAccount": account_id}}
    statements = []
    if notifying_bucket_arns:
        statements.append(
            statement(
                "S3NotifiesEncryptedQueue",
                KMS_ENCRYPT,
                "*",
                principal={"Service": "s3.amazonaws.com"},
                condition={**source, "ArnLike": {"aws:SourceArn": list(notifying_bucket_arns)}},
            )
        )
    if inventoried_bucket_arns:
        statements.append(
            statement(
                "S3EncryptsInventoryReports",
                ["kms:GenerateDataKey"],
                "*",
                principal={"Service": "s3.amazonaws.com"},
                condition={**source, "ArnLike": {"aws:SourceArn": list(inventoried_bucket_arns)}},
            )
        )
    if trail_arn:
        statements += _cloudtrail_key_statements(account_id, trail_arn)
    return document(
        statement("AccountAdministersAndDelegates", KMS_ACCOUNT_ACTIONS, "*", principal=root),
        statement(
            "CloudWatchLogsEncryptsLogGroups",
            KMS_LOGS_ACTIONS,
            "*",
            principal={"Service": f"logs.{region}.amazonaws.com"},
            condition={
                "ArnLike": {"kms:EncryptionContext:aws:logs:arn": (f"arn:aws:logs:{region}:{account_id}:log-group:*")}
            },
        ),
        statement(
            "AlarmsAndRulesPublishToEncryptedTopic",
            KMS_ENCRYPT,
            "*",
            principal={"Service": list(ALERT_PUBLISHERS)},
            condition=source,
        ),
        *statements,
    )


def _cloudtrail_key_statements(account_id: str, trail_arn: str) -> list[Statement]:
    """CloudTrail encrypts one trail's log files (its encryption context) and checks the key."""
    trail = {"StringEquals": {"aws:SourceArn": trail_arn}}
    context = f"arn:aws:cloudtrail:*:{account_id}:trail/*"
    cloudtrail = {"Service": "cloudtrail.amazonaws.com"}
    return [
        statement(
            "CloudTrailEncryptsAccessLogs",
            ["kms:GenerateDataKey"],
            "*",
            principal=cloudtrail,
            condition={**trail, "StringLike": {"kms:EncryptionContext:aws:cloudtrail:arn": context}},
        ),
        statement("CloudTrailDescribesKey", ["kms:DescribeKey"], "*", principal=cloudtrail, condition=trail),
    ]


# --- S3 ------------------------------------------------------------------------------------
def deny_insecure_transport(bucket_arn: str) -> Statement:
    # A Deny may be broad: s3:* here only ever removes access.
    return statement(
        "DenyInsecureTransport",
        ["s3:*"],
        [bucket_arn, objects(bucket_arn)],
        effect="Deny",
        principal="*",
        condition={"Bool": {"aws:SecureTransport": "false"}},
    )


def tls_only_bucket_policy(bucket_arn: str) -> Policy:
    return document(deny_insecure_transport(bucket_arn))


# What would change or remove a written report: deletes (a delete marker hides the current
# version even under Object Lock), retention changes and governance bypass, and the tags that
# choose the lifecycle expiry (`retention=standard|compliance`).
REPORT_TAMPERING = (
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
    "s3:PutObjectRetention",
    "s3:BypassGovernanceRetention",
    "s3:PutObjectTagging",
    "s3:DeleteObjectTagging",
)


def data_bucket_policy(
    bucket_arn: str, write_once_prefixes: Sequence[str] = (), break_glass_role_arn: str | None = None
) -> Policy:
    """TLS only; keys under `write_once_prefixes` are written once and then never changed.

    A PutObject that creates an object there must carry `If-None-Match` (S3's `s3:if-none-match`
    condition key, "Enforce conditional writes on Amazon S3 buckets"), so S3 refuses it when the
    key exists; `s3:ObjectCreationOperation` leaves the parts of a multipart upload alone (they
    cannot carry the header; its CompleteMultipartUpload must). Deletes, retention changes and
    retagging are denied too. Denies bind every principal, the job roles and administrators
    alike, except the break-glass role when one is configured.
    """
    statements = [deny_insecure_transport(bucket_arn)]
    if write_once_prefixes:
        reports = [objects(bucket_arn, prefix) for prefix in write_once_prefixes]
        everyone_but = {"ArnNotEquals": {"aws:PrincipalArn": break_glass_role_arn}} if break_glass_role_arn else {}
        statements += [
            statement(
                "DenyReportOverwrites",
                ["s3:PutObject"],
                reports,
                effect="Deny",
                principal="*",
                condition={
                    "Null": {"s3:if-none-match": "true"},
                    "Bool": {"s3:ObjectCreationOperation": "true"},
                    **everyone_but,
                },
            ),
            statement(
                "DenyReportTampering", REPORT_TAMPERING, reports, effect="Deny", principal="*", condition=everyone_but
            ),
        ]
    return document(*statements)


def access_log_bucket_policy(log_bucket_arn: str, source_bucket_arns: Sequence[str], account_id: str) -> Policy:
    """TLS only, and the S3 logging service may write logs for our buckets only."""
    return document(
        deny_insecure_transport(log_bucket_arn),
        statement(
            "S3ServerAccessLogsDelivery",
            ["s3:PutObject"],
            [objects(log_bucket_arn)],
            principal={"Service": "logging.s3.amazonaws.com"},
            condition={
                "ArnLike": {"aws:SourceArn": list(source_bucket_arns)},
                "StringEquals": {"aws:SourceAccount": account_id},
            },
        ),
    )


def audit_data_bucket_policy(audit_bucket_arn: str, inventoried_bucket_arns: Sequence[str], account_id: str) -> Policy:
    """TLS only, and S3 Inventory may deliver the reports of our buckets under inventory/ only."""
    return document(
        deny_insecure_transport(audit_bucket_arn),
        statement(
            "S3InventoryDelivery",
            ["s3:PutObject"],
            [objects(audit_bucket_arn, layout.INVENTORY_PREFIX)],
            principal={"Service": "s3.amazonaws.com"},
            condition={
                "ArnLike": {"aws:SourceArn": list(inventoried_bucket_arns)},
                "StringEquals": {"aws:SourceAccount": account_id},
            },
        ),
    )


def review_api_policy(*, table_arn: str, processed_bucket_arn: str, key_arn: str) -> Policy:
    """The review API (jobs.review, jobs.documents.url): act on one document at a time.

    Reads an item (GetItem) and a duplicate marker; writes the next version with the markers a
    correction moves (TransactWriteItems of Puts and Deletes). Reads result.json as the item knows
    it: GetObject If-Match, and when a writer that lost left bytes on top, the version with that
    ETag (ListBucketVersions on the key, GetObjectVersion); writes it back tagged with its
    retention, and under the legal hold of a held document (s3:PutObjectLegalHold); lists nothing
    else (ListBucket only so a missing key answers 404). Presigned GETs
    of result.json are signed with this role: the browser's GetObject is authorized as this
    role's, so the read grant covers them and nothing else in the bucket. No raw document, no
    report, no queue.
    """
    results = objects(processed_bucket_arn, layout.PROCESSED_PREFIX)
    return document(
        statement("ActOnItems", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"], [table_arn]),
        statement("ReadResults", ["s3:GetObject", "s3:GetObjectVersion"], [results]),
        statement("WriteResults", ["s3:PutObject", "s3:PutObjectTagging", "s3:PutObjectLegalHold"], [results]),
        statement("FindResults", ["s3:ListBucket", "s3:ListBucketVersions"], [processed_bucket_arn]),
        use_data_key(key_arn),
    )


def arrivals_queue_policy(queue_arn: str, bucket_arn: str, account_id: str) -> Policy:
    """Only the raw bucket, in this account, may send its event notifications to the queue."""
    return document(
        statement(
            "RawBucketNotifies",
            ["sqs:SendMessage"],
            [queue_arn],
            principal={"Service": "s3.amazonaws.com"},
            condition={"ArnEquals": {"aws:SourceArn": bucket_arn}, "StringEquals": {"aws:SourceAccount": account_id}},
        )
    )


def ecr_repository_arn(image_uri: str) -> str | None:
    """The repository ARN of an ECR image URI; None for images from other registries."""
    match = _ECR_IMAGE.match(image_uri)
    if not match:
        return None
    return f"arn:aws:ecr:{match['region']}:{match['account']}:repository/{match['repo']}"


# Release images a repository keeps: ECR allows no "keep" action, so a rule that expires release
# images beyond this count, ahead of the count rule, shelters them (an image one rule selects
# is never expired by a rule of lower priority). Years of releases at several a week.
RELEASE_IMAGES_KEPT = 1000


def ecr_lifecycle_policy(
    keep: int, release_tag_prefixes: Sequence[str], *, deployed_tag: str | None = None
) -> dict[str, Any]:
    """The job repository's lifecycle: the image the task definitions name (`deployed_tag`,
    whatever its kind or age), every release-tagged image (up to RELEASE_IMAGES_KEPT), then the
    newest `keep` images of any other kind (untagged, branch builds); older ones expire.
    """
    rules: list[dict[str, Any]] = []
    if deployed_tag is not None:
        # ECR cannot see task definitions, and no rule selects a digest: this one selects the
        # deployed tag exactly (a pattern without a wildcard; tags are immutable here, so one
        # image) and never counts past it, and an image a rule selects is never expired by a
        # lower-priority one: not by the 1,000 releases after it, nor by the count rule.
        rules.append(
            {
                "rulePriority": 1,
                "description": "keep the image the task definitions run",
                "selection": {
                    "tagStatus": "tagged",
                    "tagPatternList": [deployed_tag],
                    "countType": "imageCountMoreThan",
                    "countNumber": 1,
                },
                "action": {"type": "expire"},
            }
        )
    if release_tag_prefixes:
        rules.append(
            {
                "rulePriority": len(rules) + 1,
                "description": "keep release images (a stack deploys only these)",
                "selection": {
                    "tagStatus": "tagged",
                    "tagPrefixList": list(release_tag_prefixes),
                    "countType": "imageCountMoreThan",
                    "countNumber": RELEASE_IMAGES_KEPT,
                },
                "action": {"type": "expire"},
            }
        )
    rules.append(
        {
            "rulePriority": len(rules) + 1,
            "description": f"keep the newest {keep} other images",
            "selection": {"tagStatus": "any", "countType": "imageCountMoreThan", "countNumber": keep},
            "action": {"type": "expire"},
        }
    )
    return {"rules": rules}


def execution_role_policy(*, log_group_arns: Sequence[str], key_arn: str, repository_arn: str | None) -> Policy:
    """What ECS itself needs to start a job task: pull the image, write its log streams."""
    statements = [
        statement(
            "WriteJobLogs",
            ["logs:CreateLogStream", "logs:PutLogEvents"],
            [f"{arn}:log-stream:*" for arn in log_group_arns],
        ),
    ]
    if repository_arn is not None:
        statements += [
            # GetAuthorizationToken has no resource type: `*` is the only valid resource.
            statement("EcrLogin", ["ecr:GetAuthorizationToken"], "*"),
            statement(
                "PullJobImage",
                ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
                [repository_arn],
            ),
            statement("DecryptImageLayers", ["kms:Decrypt"], [key_arn]),
        ]
    return document(*statements)


def schedule_arn_pattern(region: str, account_id: str, group_name: str) -> str:
    """Every schedule of one schedule group (the KMS encryption context Scheduler decrypts with)."""
    return f"arn:aws:scheduler:{region}:{account_id}:schedule/{group_name}/*"


def scheduler_role_policy(
    *,
    cluster_arn: str,
    task_definition_arns: Sequence[str],
    pass_role_arns: Sequence[str],
    dead_letter_queue_arn: str,
    key_arn: str,
    schedule_arns: str,
) -> Policy:
    """EventBridge Scheduler starts the job tasks on our cluster and parks failures in its DLQ.

    The schedules are encrypted with the stack's key, and Scheduler decrypts a schedule's payload
    with this (execution) role when it fires: kms:Decrypt, only in the context of our schedules.
    The schedules start their tasks tagged (the stage budget must see their Fargate hours), and ECS
    authorizes tags on create as ecs:TagResource too: granted for RunTask's create action only, on
    the cluster's tasks.
    """
    return document(
        statement(
            "RunJobTasks",
            ["ecs:RunTask"],
            list(task_definition_arns),
            condition={"ArnEquals": {"ecs:cluster": cluster_arn}},
        ),
        statement(
            "TagStartedTasks",
            ["ecs:TagResource"],
            [cluster_arn.replace(":cluster/", ":task/", 1) + "/*"],
            condition={"StringEquals": {"ecs:CreateAction": "RunTask"}},
        ),
        statement(
            "PassJobRoles",
            ["iam:PassRole"],
            list(pass_role_arns),
            condition={"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}},
        ),
        statement("DeadLetter", ["sqs:SendMessage"], [dead_letter_queue_arn]),
        statement(
            "EncryptDeadLetters",
            KMS_ENCRYPT,
            [key_arn],
            condition={"ArnEquals": {"kms:EncryptionContext:aws:sqs:arn": dead_letter_queue_arn}},
        ),
        statement(
            "DecryptSchedules",
            ["kms:Decrypt"],
            [key_arn],
            condition={"ArnLike": {"kms:EncryptionContext:aws:scheduler:schedule:arn": schedule_arns}},
        ),
    )


# --- status events -------------------------------------------------------------------------
def pipe_role_policy(*, stream_arn: str, queue_arn: str, dead_letter_queue_arn: str, key_arn: str) -> Policy:
    """Read the table stream, deliver to the queue, park poison batches in the DLQ.

    The four stream actions are the ones AWS's EventBridge Pipes documentation lists for a
    DynamoDB stream source ("Event source permissions for Amazon EventBridge Pipes").
    """
    return document(
        statement(
            "ReadTableStream",
            ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
            [stream_arn],
        ),
        # ListStreams has no resource type in IAM: "*" is the only resource it accepts.
        statement("ListTableStreams", ["dynamodb:ListStreams"], "*"),
        statement("DeliverEvents", ["sqs:SendMessage"], [queue_arn, dead_letter_queue_arn]),
        statement("UseDataKey", KMS_USE, [key_arn]),
    )


# --- alerts --------------------------------------------------------------------------------
def alarm_topic_policy(topic_arn: str, account_id: str) -> Policy:
    return document(
        statement(
            "AlarmsAndRulesPublish",
            ["sns:Publish"],
            [topic_arn],
            principal={"Service": list(ALERT_PUBLISHERS)},
            condition={"StringEquals": {"aws:SourceAccount": account_id}},
        ),
    )
