r"""Alerts: the KMS-encrypted SNS topic the alarms and the EventBridge rules publish to, the two
helpers every dead-letter queue shares (an encrypted queue, an alarm on its depth), and the one
way an EventBridge rule puts an event on the topic (`alert_target`).

A stack either creates its own topic (optionally with an email subscriber) or reuses an existing
topic ARN from config, in which case nothing is created here.

An event reaches the topic only reshaped, as a message a person reads on a phone (issue 34): an
EventBridge input transformer reads the fields that matter from the event (`AlertMessage.paths`)
into a few lines of text: the stack, the job, what happened and what it means, where to look
(the task's logs, the run summaries and reports, the AWS command) and the runbook entry in
docs/operations.md. The raw event JSON is never mailed.

The template is plain text, its lines joined by real newlines, not a quoted JSON string:
EventBridge fills a template's placeholders as text and passes a quoted string on with its quotes
and escapes as they are (its input-transformation guide: `"instance <instance> is in <state>"`
becomes `"instance i-0123456789 is in RUNNING"`, quotes included), so a JSON string with `\n`
reached an SNS email subscriber as one quoted line of literal `\n`s. `delivered` renders what
the subscriber reads, for a test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document
from jobs.contract import layout
from jobs.errors import ExitCode

RUNBOOK = "docs/operations.md"
# EventBridge's InputPathsMap keys, and the placeholders a template may use beyond them.
_PATH_KEY = re.compile(r"^[A-Za-z0-9]+$")
_PLACEHOLDER = re.compile(r"<([^<>\s]+)>")
_PREDEFINED = ("aws.events.rule-arn", "aws.events.rule-name", "aws.events.event.ingestion-time")
# What each non-zero exit of a job means (jobs.errors.ExitCode, docs/operations.md "Exit codes"),
# listed in the failed-task message: a transformer copies the number, it cannot translate it.
EXIT_MEANINGS: dict[ExitCode, str] = {
    ExitCode.FINDINGS: "the night judged bad (findings, failed ratio, drill targets: alarmed, not sent here)",
    ExitCode.BAD_INPUT: "bad input or settings",
    ExitCode.UNAVAILABLE: "transient: AWS unreachable, throttled or denying, a query failed, an export not ready",
    ExitCode.NOT_SETTLED: "not settled, run it again",
    ExitCode.INTERNAL: "a bug: read the traceback in the log",
    ExitCode.SIGINT: "interrupted",
    ExitCode.SIGTERM: "stopped (Spot reclaim or a stop), work handed back: not sent here, the next night recovers",
}

# Exits that need no person, so no failed-task alert (components.batch_jobs.failed_task_pattern):
# 0; 1, a night judged bad, which its own alarm reports (new findings, the failed ratio, the drill's
# targets); 143, a stop (a Spot reclaim, a deployment) after the job handed its work back, which
# the next night recovers (a night stopped every time has no heartbeat, and that alarm fires).
QUIET_EXITS = (int(ExitCode.SUCCESS), int(ExitCode.FINDINGS), int(ExitCode.SIGTERM))


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


@dataclass(frozen=True)
class AlertMessage:
    """An event as the text a person reads: `paths` names the event's fields (`{"state":
    "$.detail.state"}`), `lines` the text with `<name>` placeholders for them. A line may be an
    Output (a bucket name known once it exists).
    """

    paths: Mapping[str, str]
    lines: Sequence[pulumi.Input[str]]

    def template(self) -> pulumi.Output[str]:
        """The input template: the lines as plain text, so SNS delivers them as lines."""
        return pulumi.Output.all(*self.lines).apply(lambda lines: render_template(self.paths, list(lines)))


def render_template(paths: Mapping[str, str], lines: Sequence[str]) -> str:
    """The lines as plain text, one a line, refused when a placeholder names no path (EventBridge
    would send it as it is), a path's name is one EventBridge refuses, or the text would read as
    JSON (a first character `{`, `[` or `"`: EventBridge would pass it on as JSON, quotes and all).
    """
    bad = sorted(k for k in paths if not _PATH_KEY.match(k))
    if bad:
        raise ValueError(f"input path names must be letters and digits: {bad}")
    text = "\n".join(lines)
    unknown = sorted(set(_PLACEHOLDER.findall(text)) - set(paths) - set(_PREDEFINED))
    if unknown:
        raise ValueError(f"placeholders without an input path: {unknown}")
    if text.lstrip()[:1] in {"{", "[", '"'}:
        raise ValueError("an alert's text must not start like JSON: it is sent as plain lines")
    return text


def _at_path(event: Mapping[str, Any], path: str) -> Any:
    """The value at a JSON path of the form the transformers use ($.a.b, $.a[0].b); None if absent."""
    value: Any = event
    for part in re.findall(r"[^.\[\]$]+|\[\d+\]", path):
        if part.startswith("["):
            index = int(part[1:-1])
            value = value[index] if isinstance(value, list) and index < len(value) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            return None
    return value


def delivered(paths: Mapping[str, str], template: str, event: Mapping[str, Any], rule_name: str = "rule") -> str:
    """What an SNS email subscriber reads for `event`: the template's placeholders filled as
    EventBridge fills a text template (a string's value without quotes, a number as written, a
    path the event lacks creates no variable: empty).
    """
    values = {name: _at_path(event, path) for name, path in paths.items()}
    values |= {"aws.events.rule-name": rule_name, "aws.events.rule-arn": f"arn:aws:events:::rule/{rule_name}"}
    values["aws.events.event.ingestion-time"] = event.get("time", "")

    def fill(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return "" if value is None else value if isinstance(value, str) else json.dumps(value)

    return _PLACEHOLDER.sub(fill, template)


def alert_target(
    parent: pulumi.Resource,
    name: str,
    rule: aws.cloudwatch.EventRule,
    topic_arn: pulumi.Input[str],
    message: AlertMessage,
) -> aws.cloudwatch.EventTarget:
    """`rule`'s events on the alert topic, reshaped into `message` (the one way a rule alerts)."""
    return aws.cloudwatch.EventTarget(
        name,
        rule=rule.name,
        arn=topic_arn,
        input_transformer=aws.cloudwatch.EventTargetInputTransformerArgs(
            input_paths=dict(message.paths), input_template=message.template()
        ),
        opts=child(parent),
    )


def runbook_line(anchor: str) -> str:
    return f"Runbook: {RUNBOOK}#{anchor}"


def failed_task_alert(stage: str, reports_bucket_arn: pulumi.Input[str]) -> AlertMessage:
    """A job task that stopped with a non-zero exit or never started (components.batch_jobs'
    failed-task rule): which job (the task's family), its exit code beside the map of what each
    code means, ECS's reason, and where its logs, run summaries and reports are.
    """
    legend = "; ".join(f"{int(code)} {meaning}" for code, meaning in EXIT_MEANINGS.items())
    bucket = pulumi.Output.from_input(reports_bucket_arn).apply(lambda arn: arn.split(":::")[-1])
    return AlertMessage(
        paths={
            "job": "$.detail.group",
            "exit": "$.detail.containers[0].exitCode",
            "stop": "$.detail.stopCode",
            "reason": "$.detail.stoppedReason",
            "task": "$.detail.taskArn",
            "time": "$.time",
        },
        lines=[
            f"DocuFlow {stage}: a job task stopped badly at <time>.",
            "Job: <job>. Exit code: <exit> (none: it never started).",
            "ECS: <stop>, <reason>",
            f"Exit codes: {legend}.",
            f"Logs: log group /{layout.APP}/{stage}/JOB, stream JOB/job/ and the task's id (JOB: the family "
            f"above without {layout.stage_prefix(stage)}-). Task: <task>",
            bucket.apply(
                lambda b: f"Run summaries: s3://{b}/{layout.RUNS_PREFIX}, reports: s3://{b}/{layout.RECONCILIATION_PREFIX}"
            ),
            runbook_line("job-task-failed"),
        ],
    )
