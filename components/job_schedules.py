"""The job schedules: EventBridge Scheduler starts the registry's scheduled tasks on the cluster
(N ingest tasks that drain the one arrival queue together, later one reconcile or its repair, the
quarterly drill), with a role that may start, and pass the roles of, only those task definitions,
and a dead-letter queue of undeliverable starts.

What a stack schedules is typed data keyed by the registry's task names (JobSchedules): each
task's expression, whether it is started, how many tasks a start runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document
from components.alerts import encrypted_queue
from components.job_containers import scheduled_input
from jobs.runtime.registry import Schedule, TaskSpec


@dataclass(frozen=True)
class JobNetwork:
    """Where the tasks run: the VPC's subnets and security groups, and on what capacity."""

    subnet_ids: Sequence[str]
    security_group_ids: Sequence[str]
    assign_public_ip: bool = False
    # Spot is interruptible: a stopped shard is picked up by the next night's sweep, which is
    # idempotent, so the saving is worth it where the stack opts in.
    fargate_spot: bool = False

    @property
    def capacity_provider(self) -> str:
        return "FARGATE_SPOT" if self.fargate_spot else "FARGATE"


@dataclass(frozen=True)
class JobSchedules:
    """When the stack starts the registry's scheduled tasks, keyed by task name: its expression
    (else its Schedule's default), whether it is started (else its Schedule's `enabled`: of the
    tasks sharing a schedule, the stack starts exactly one), how many tasks a start runs (else one).
    """

    expressions: Mapping[str, str] = field(default_factory=dict)
    enabled: Mapping[str, bool] = field(default_factory=dict)
    task_counts: Mapping[str, int] = field(default_factory=dict)
    timezone: str = "UTC"
    retry_attempts: int = 2
    max_event_age_seconds: int = 3600

    def scheduled(self, tasks: Mapping[str, TaskSpec]) -> dict[str, Schedule]:
        """The tasks the stack starts, with their schedule; ValueError for a task name the
        registry does not schedule, or a schedule that would start none or two of its tasks.
        """
        declared = {name: task.schedule for name, task in tasks.items() if task.schedule is not None}
        unknown = {*self.expressions, *self.enabled, *self.task_counts} - set(declared)
        if unknown:
            raise ValueError(f"no scheduled task of the registry is named {sorted(unknown)}")
        started = {name: s for name, s in declared.items() if self.enabled.get(name, s.enabled)}
        for schedule in {s.name for s in declared.values()}:
            starting = sorted(name for name, s in started.items() if s.name == schedule)
            if len(starting) != 1:
                raise ValueError(f"the {schedule} schedule must start exactly one task, not {starting}")
        return started

    def expression(self, task: str, schedule: Schedule) -> str:
        return self.expressions.get(task, schedule.default)


@dataclass(frozen=True)
class Scheduled:
    """What the schedules start: the cluster and the tasks' definitions and roles."""

    cluster: aws.ecs.Cluster
    capacity: aws.ecs.ClusterCapacityProviders
    execution_role: aws.iam.Role
    task_roles: Mapping[str, aws.iam.Role]
    task_definitions: Mapping[str, aws.ecs.TaskDefinition]


@dataclass(frozen=True)
class ScheduleStack:
    """The stack's side of the schedules: where, with which key and tags, on which network."""

    parent: pulumi.Resource
    name: str
    prefix: str
    region: str
    account_id: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    network: JobNetwork
    schedules: JobSchedules
    tags: Mapping[str, str]


def create_schedules(
    stack: ScheduleStack, tasks: Mapping[str, TaskSpec], targets: Scheduled
) -> tuple[list[aws.scheduler.Schedule], aws.sqs.Queue]:
    """The schedules of `tasks`, their role and the dead-letter queue of undeliverable starts."""
    scheduled = stack.schedules.scheduled(tasks)
    dlq = encrypted_queue(stack.parent, f"{stack.name}-schedule-dlq", stack.kms_key_arn, dict(stack.tags))
    group = aws.scheduler.ScheduleGroup(
        f"{stack.name}-schedules", name=f"{stack.prefix}-jobs", tags=dict(stack.tags), opts=child(stack.parent)
    )
    role, role_policy = _scheduler_role(stack, targets, list(scheduled), dlq, group)
    target = partial(
        _schedule, stack, group=group, targets=targets, role=role, dlq=dlq, depends_on=[role_policy, targets.capacity]
    )
    schedules = [
        target(
            schedule.name,
            stack.schedules.expression(task, schedule),
            targets.task_definitions[task],
            stack.schedules.task_counts.get(task, 1),
        )
        for task, schedule in scheduled.items()
    ]
    return schedules, dlq


def _scheduler_role(
    stack: ScheduleStack,
    targets: Scheduled,
    scheduled: Sequence[str],
    dlq: aws.sqs.Queue,
    group: aws.scheduler.ScheduleGroup,
) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
    """The scheduler's role and its policy, scoped to the `scheduled` tasks."""
    role = aws.iam.Role(
        f"{stack.name}-scheduler-role",
        assume_role_policy=json_document(
            policies.assume_role_policy, service="scheduler.amazonaws.com", account_id=stack.account_id
        ),
        tags=dict(stack.tags),
        opts=child(stack.parent),
    )
    region = stack.region
    role_policy = aws.iam.RolePolicy(
        f"{stack.name}-scheduler-policy",
        role=role.id,
        policy=json_document(
            policies.scheduler_role_policy,
            cluster_arn=targets.cluster.arn,
            task_definition_arns=[targets.task_definitions[task].arn for task in scheduled],
            pass_role_arns=[targets.execution_role.arn, *(targets.task_roles[task].arn for task in scheduled)],
            dead_letter_queue_arn=dlq.arn,
            key_arn=stack.kms_key_arn,
            schedule_arns=pulumi.Output.all(account=stack.account_id, group=group.name).apply(
                lambda v: policies.schedule_arn_pattern(region, v["account"], v["group"])
            ),
        ),
        opts=child(stack.parent),
    )
    return role, role_policy


def _ecs_parameters(
    stack: ScheduleStack, task_definition: aws.ecs.TaskDefinition, task_count: int
) -> aws.scheduler.ScheduleTargetEcsParametersArgs:
    network = stack.network
    placement: dict[str, Any] = (
        {
            "capacity_provider_strategies": [
                aws.scheduler.ScheduleTargetEcsParametersCapacityProviderStrategyArgs(
                    capacity_provider=network.capacity_provider, weight=1, base=0
                )
            ]
        }
        if network.fargate_spot
        else {"launch_type": "FARGATE"}
    )
    return aws.scheduler.ScheduleTargetEcsParametersArgs(
        task_definition_arn=task_definition.arn,
        task_count=task_count,
        platform_version="LATEST",
        # A task started by the scheduler carries no tags of its own: without these its
        # Fargate hours are untagged spend, which the stage's cost budget never sees.
        propagate_tags="TASK_DEFINITION",
        enable_ecs_managed_tags=True,
        tags=dict(stack.tags),
        network_configuration=aws.scheduler.ScheduleTargetEcsParametersNetworkConfigurationArgs(
            subnets=list(network.subnet_ids),
            security_groups=list(network.security_group_ids),
            assign_public_ip=network.assign_public_ip,
        ),
        **placement,
    )


def _schedule(
    stack: ScheduleStack,
    suffix: str,
    expression: str,
    task_definition: aws.ecs.TaskDefinition,
    task_count: int,
    *,
    group: aws.scheduler.ScheduleGroup,
    targets: Scheduled,
    role: aws.iam.Role,
    dlq: aws.sqs.Queue,
    depends_on: list[pulumi.Resource],
) -> aws.scheduler.Schedule:
    schedules = stack.schedules
    return aws.scheduler.Schedule(
        f"{stack.name}-{suffix}",
        name=f"{stack.prefix}-{suffix}",
        group_name=group.name,
        schedule_expression=expression,
        schedule_expression_timezone=schedules.timezone,
        # The payload (the target input) is encrypted with the stack's key, like every other
        # resource that stores data; the scheduler role may decrypt it (DecryptSchedules).
        kms_key_arn=stack.kms_key_arn,
        flexible_time_window=aws.scheduler.ScheduleFlexibleTimeWindowArgs(mode="OFF"),
        target=aws.scheduler.ScheduleTargetArgs(
            arn=targets.cluster.arn,
            role_arn=role.arn,
            # The scheduled time, as the job's DOCUFLOW_SCHEDULED_TIME (scheduled_input).
            input=scheduled_input(),
            ecs_parameters=_ecs_parameters(stack, task_definition, task_count),
            retry_policy=aws.scheduler.ScheduleTargetRetryPolicyArgs(
                maximum_retry_attempts=schedules.retry_attempts,
                maximum_event_age_in_seconds=schedules.max_event_age_seconds,
            ),
            dead_letter_config=aws.scheduler.ScheduleTargetDeadLetterConfigArgs(arn=dlq.arn),
        ),
        opts=child(stack.parent, depends_on=depends_on),
    )
