"""StatusEvents: document status changes fanned out from the table stream to an SQS queue.

The DynamoDB stream is the lossless event source: every committed write appears on it exactly
in key order, so the jobs never dual-write events. An EventBridge Pipe filters the stream to
document items and delivers whole stream records (old and new image) to an encrypted queue;
records the pipe cannot deliver land in a dead-letter queue that alarms.

EventBridge patterns cannot compare two fields, so "the status changed" is approximated by
"a document item was inserted or modified and has a status"; consumers compare
dynamodb.OldImage.status with dynamodb.NewImage.status to drop same-status updates (lease
renewals, attempt counters).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document
from components.alerts import encrypted_queue, queue_depth_alarm
from jobs.contract import layout


@dataclass
class StatusEventsArgs:
    stream_arn: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    account_id: pulumi.Input[str]
    alarm_topic_arn: pulumi.Input[str]
    batch_size: int = 10
    maximum_retry_attempts: int = 10
    tags: dict[str, str] = field(default_factory=dict)


def status_event_pattern() -> dict[str, Any]:
    """The stream-record filter: inserts and updates of document items that carry a status."""
    return {
        "eventName": ["INSERT", "MODIFY"],
        "dynamodb": {
            "NewImage": {
                "entityType": {"S": [layout.ENTITY_DOCUMENT]},
                "status": {"S": [{"exists": True}]},
            }
        },
    }


class StatusEvents(pulumi.ComponentResource):
    queue_url: pulumi.Output[str]
    queue_arn: pulumi.Output[str]
    dead_letter_queue_url: pulumi.Output[str]
    pipe_arn: pulumi.Output[str]

    def __init__(self, name: str, args: StatusEventsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:status_events:StatusEvents", name, None, opts)
        self._name = name
        self._args = args
        dlq = encrypted_queue(self, f"{name}-dlq", args.kms_key_arn, args.tags)
        queue = encrypted_queue(self, f"{name}-queue", args.kms_key_arn, args.tags, redrive_to=dlq)
        role, role_policy = self._pipe_role(queue, dlq)
        pipe = self._pipe(queue, dlq, role, role_policy)
        queue_depth_alarm(self, f"{name}-dlq-alarm", dlq.name, args.alarm_topic_arn, "status events", args.tags)
        self.queue_url = queue.url
        self.queue_arn = queue.arn
        self.dead_letter_queue_url = dlq.url
        self.pipe_arn = pipe.arn
        self.register_outputs(
            {
                "queue_url": self.queue_url,
                "queue_arn": self.queue_arn,
                "dead_letter_queue_url": self.dead_letter_queue_url,
                "pipe_arn": self.pipe_arn,
            }
        )

    def _pipe_role(self, queue: aws.sqs.Queue, dlq: aws.sqs.Queue) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
        """The role the pipe assumes: read the stream, send to both queues, use the key."""
        args = self._args
        role = aws.iam.Role(
            f"{self._name}-pipe-role",
            assume_role_policy=json_document(
                policies.assume_role_policy,
                service="pipes.amazonaws.com",
                account_id=args.account_id,
            ),
            tags=args.tags,
            opts=child(self),
        )
        role_policy = aws.iam.RolePolicy(
            f"{self._name}-pipe-policy",
            role=role.id,
            policy=json_document(
                policies.pipe_role_policy,
                stream_arn=args.stream_arn,
                queue_arn=queue.arn,
                dead_letter_queue_arn=dlq.arn,
                key_arn=args.kms_key_arn,
            ),
            opts=child(self),
        )
        return role, role_policy

    def _pipe(
        self, queue: aws.sqs.Queue, dlq: aws.sqs.Queue, role: aws.iam.Role, role_policy: aws.iam.RolePolicy
    ) -> aws.pipes.Pipe:
        """The pipe from the table stream to the queue, filtered to document status records."""
        args = self._args
        return aws.pipes.Pipe(
            f"{self._name}-pipe",
            description="DocuFlow document status changes: table stream -> queue",
            role_arn=role.arn,
            source=args.stream_arn,
            source_parameters=self._stream_source(dlq),
            target=queue.arn,
            kms_key_identifier=args.kms_key_arn,
            tags=args.tags,
            # The pipe validates its role on create: the policy must exist first.
            opts=child(self, depends_on=[role_policy]),
        )

    def _stream_source(self, dlq: aws.sqs.Queue) -> aws.pipes.PipeSourceParametersArgs:
        """How the pipe reads the stream: batches, retries, bisection, its dead letters and its filter."""
        args = self._args
        return aws.pipes.PipeSourceParametersArgs(
            dynamodb_stream_parameters=aws.pipes.PipeSourceParametersDynamodbStreamParametersArgs(
                starting_position="LATEST",
                batch_size=args.batch_size,
                maximum_retry_attempts=args.maximum_retry_attempts,
                # Bisect a failing batch so one poison record does not hold its shard.
                on_partial_batch_item_failure="AUTOMATIC_BISECT",
                dead_letter_config=aws.pipes.PipeSourceParametersDynamodbStreamParametersDeadLetterConfigArgs(
                    arn=dlq.arn
                ),
            ),
            filter_criteria=aws.pipes.PipeSourceParametersFilterCriteriaArgs(
                filters=[
                    aws.pipes.PipeSourceParametersFilterCriteriaFilterArgs(pattern=json.dumps(status_event_pattern()))
                ]
            ),
        )
