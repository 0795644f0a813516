"""SNS adapter: a short notice published to a topic (the night's reconcile report has landed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobs.observability import CallMetrics
from jobs.store._aws import translated

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient

SUBJECT_MAX = 100  # SNS refuses longer subjects (and e-mail shows them cut)


class Notices:
    def __init__(self, client: SNSClient, metrics: CallMetrics) -> None:
        self._client = client
        self._metrics = metrics

    def publish(self, topic_arn: str, subject: str, message: str) -> str:
        with self._metrics.call("sns.Publish"), translated("sns.Publish", resource=topic_arn):
            response = self._client.publish(TopicArn=topic_arn, Subject=subject[:SUBJECT_MAX], Message=message)
        return response["MessageId"]
