"""Arrivals: the queue of raw/ uploads the nightly ingest drains, fed by the raw bucket's events.

S3 publishes `s3:ObjectCreated:*` for `raw/` to an SQS queue encrypted with the stack's key (the
key policy lets S3 use it for this bucket only, see policies.data_key_policy). A message that
keeps failing moves to a dead-letter queue after `max_receive_count` receives and alarms. Names,
visibility timeout, retention, long-poll wait and redrive come from the contract's QueueSpec,
which the local stack's bootstrap uses too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document
from components.alerts import encrypted_queue, queue_depth_alarm
from jobs.contract import QueueSpec


@dataclass
class ArrivalsArgs:
    spec: QueueSpec
    raw_bucket_name: pulumi.Input[str]
    raw_bucket_arn: pulumi.Input[str]
    account_id: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    alarm_topic_arn: pulumi.Input[str]
    tags: dict[str, str] = field(default_factory=dict)


class Arrivals(pulumi.ComponentResource):
    queue_url: pulumi.Output[str]
    queue_arn: pulumi.Output[str]
    dead_letter_queue_url: pulumi.Output[str]
    dead_letter_queue_arn: pulumi.Output[str]

    def __init__(self, name: str, args: ArrivalsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:arrivals:Arrivals", name, None, opts)
        spec = args.spec
        dlq = encrypted_queue(
            self,
            f"{name}-dlq",
            args.kms_key_arn,
            args.tags,
            retention_seconds=spec.retention_seconds,
            name=spec.dead_letter_name,
        )
        queue = encrypted_queue(
            self,
            f"{name}-queue",
            args.kms_key_arn,
            args.tags,
            retention_seconds=spec.retention_seconds,
            name=spec.name,
            visibility_timeout_seconds=spec.visibility_timeout_seconds,
            receive_wait_time_seconds=spec.receive_wait_seconds,
            redrive_policy=dlq.arn.apply(spec.redrive_policy),
        )
        queue_policy = aws.sqs.QueuePolicy(
            f"{name}-queue-policy",
            queue_url=queue.url,
            policy=json_document(
                policies.arrivals_queue_policy,
                queue_arn=queue.arn,
                bucket_arn=args.raw_bucket_arn,
                account_id=args.account_id,
            ),
            opts=child(self),
        )
        # S3 checks that it may send to the queue when the notification is put: policy first.
        aws.s3.BucketNotification(
            f"{name}-notification",
            bucket=args.raw_bucket_name,
            queues=[
                aws.s3.BucketNotificationQueueArgs(
                    id="raw-arrivals",
                    queue_arn=queue.arn,
                    events=list(spec.events),
                    filter_prefix=spec.filter_prefix,
                )
            ],
            opts=child(self, depends_on=[queue_policy]),
        )
        queue_depth_alarm(self, f"{name}-dlq-alarm", dlq.name, args.alarm_topic_arn, "arrival queue", args.tags)

        self.queue_url = queue.url
        self.queue_arn = queue.arn
        self.dead_letter_queue_url = dlq.url
        self.dead_letter_queue_arn = dlq.arn
        self.register_outputs(
            {
                "queue_url": self.queue_url,
                "queue_arn": self.queue_arn,
                "dead_letter_queue_url": self.dead_letter_queue_url,
                "dead_letter_queue_arn": self.dead_letter_queue_arn,
            }
        )
