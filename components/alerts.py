"""Alerts: the KMS-encrypted SNS topic the DLQ alarms and the failed-task rule publish to, and
the two helpers every dead-letter queue shares (an encrypted queue, an alarm on its depth).

A stack either creates its own topic (optionally with an email subscriber) or reuses an existing
topic ARN from config, in which case nothing is created here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document


@dataclass
class AlertsArgs:
    account_id: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    existing_topic_arn: str | None = None
    email: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


class Alerts(pulumi.ComponentResource):
    topic_arn: pulumi.Output[str]

    def __init__(self, name: str, args: AlertsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:alerts:Alerts", name, None, opts)
        if args.existing_topic_arn:
            self.topic_arn = pulumi.Output.from_input(args.existing_topic_arn)
        else:
            topic = aws.sns.Topic(
                f"{name}-topic",
                kms_master_key_id=args.kms_key_arn,
                tags=args.tags,
                opts=child(self),
            )
            aws.sns.TopicPolicy(
                f"{name}-topic-policy",
                arn=topic.arn,
                policy=json_document(policies.alarm_topic_policy, topic_arn=topic.arn, account_id=args.account_id),
                opts=child(self),
            )
            if args.email:
                aws.sns.TopicSubscription(
                    f"{name}-email",
                    topic=topic.arn,
                    protocol="email",
                    endpoint=args.email,
                    opts=child(self),
                )
            self.topic_arn = topic.arn
        self.register_outputs({"topic_arn": self.topic_arn})


def queue_depth_alarm(
    parent: pulumi.Resource,
    name: str,
    queue_name: pulumi.Input[str],
    topic_arn: pulumi.Input[str],
    what: str,
    tags: dict[str, str],
) -> aws.cloudwatch.MetricAlarm:
    """Alarm as soon as one message sits in a dead-letter queue: each is a lost job or event."""
    return aws.cloudwatch.MetricAlarm(
        name,
        alarm_description=f"DocuFlow: {what} dead-letter queue is not empty",
        namespace="AWS/SQS",
        metric_name="ApproximateNumberOfMessagesVisible",
        dimensions={"QueueName": queue_name},
        statistic="Maximum",
        period=300,
        evaluation_periods=1,
        threshold=0,
        comparison_operator="GreaterThanThreshold",
        treat_missing_data="notBreaching",
        alarm_actions=[topic_arn],
        ok_actions=[topic_arn],
        tags=tags,
        opts=child(parent),
    )


def encrypted_queue(
    parent: pulumi.Resource,
    resource_name: str,
    kms_key_arn: pulumi.Input[str],
    tags: dict[str, str],
    *,
    retention_seconds: int = 14 * 24 * 3600,
    redrive_to: aws.sqs.Queue | None = None,
    max_receive_count: int = 5,
    **queue_args: Any,
) -> aws.sqs.Queue:
    """An SQS queue encrypted with the data key, optionally redriving to a dead-letter queue.

    `queue_args` go to aws.sqs.Queue as they are (a fixed name, timeouts, a redrive policy
    rendered elsewhere, e.g. by the contract's QueueSpec).
    """
    redrive = (
        pulumi.Output.json_dumps({"deadLetterTargetArn": redrive_to.arn, "maxReceiveCount": max_receive_count})
        if redrive_to is not None
        else None
    )
    if redrive is not None:
        queue_args = {**queue_args, "redrive_policy": redrive}
    return aws.sqs.Queue(
        resource_name,
        kms_master_key_id=kms_key_arn,
        kms_data_key_reuse_period_seconds=300,
        message_retention_seconds=retention_seconds,
        **queue_args,
        tags=tags,
        opts=child(parent),
    )
