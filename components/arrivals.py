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
        self._name = name
        self._args = args
        dlq, queue = self._queues()
        queue_policy = self._queue_policy(queue)
        self._notification(queue, queue_policy)
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

    def _queues(self) -> tuple[aws.sqs.Queue, aws.sqs.Queue]:
        """The dead-letter queue and the arrivals queue redriving to it, both shaped by the QueueSpec."""
        args, spec = self._args, self._args.spec
        dlq = encrypted_queue(
            self,
            f"{self._name}-dlq",
            args.kms_key_arn,
            args.tags,
            retention_seconds=spec.retention_seconds,
            name=spec.dead_letter_name,
        )
        queue = encrypted_queue(
            self,
            f"{self._name}-queue",
            args.kms_key_arn,
            args.tags,
            retention_seconds=spec.retention_seconds,
            name=spec.name,
            visibility_timeout_seconds=spec.visibility_timeout_seconds,
            receive_wait_time_seconds=spec.receive_wait_seconds,
            redrive_policy=dlq.arn.apply(spec.redrive_policy),
        )
        return dlq, queue

    def _queue_policy(self, queue: aws.sqs.Queue) -> aws.sqs.QueuePolicy:
        """Lets S3 send the raw bucket's events, and only that bucket's, to the queue."""
        args = self._args
        return aws.sqs.QueuePolicy(
            f"{self._name}-queue-policy",
            queue_url=queue.url,
            policy=json_document(
                policies.arrivals_queue_policy,
                queue_arn=queue.arn,
                bucket_arn=args.raw_bucket_arn,
                account_id=args.account_id,
            ),
            opts=child(self),
        )

    def _notification(self, queue: aws.sqs.Queue, queue_policy: aws.sqs.QueuePolicy) -> None:
        """The raw bucket's object creations under the spec's prefix, published to the queue."""
        spec = self._args.spec
        aws.s3.BucketNotification(
            f"{self._name}-notification",
            bucket=self._args.raw_bucket_name,
            queues=[
                aws.s3.BucketNotificationQueueArgs(
                    id="raw-arrivals",
                    queue_arn=queue.arn,
                    events=list(spec.events),
                    filter_prefix=spec.filter_prefix,
                )
            ],
            # S3 checks that it may send to the queue when the notification is put: policy first.
            opts=child(self, depends_on=[queue_policy]),
        )
