"""BatchJobs: the ECS cluster, the job tasks (ingest, reconcile, repair on a nightly schedule, the
restore drill quarterly; the erasure, a document's owner actions and legal holds started by
hand), and their schedules, all as the job registry (jobs.registry) declares them: each task's
command and environment hooks, its role's policy builder, its size and its schedule, called or
looked up by the task's name, never resolved from a string.

EventBridge Scheduler starts N ingest tasks that drain the one arrival queue together (SQS spreads
the messages; a full `--backfill` sweep is a one-off task, docs/deploy.md) and, later, one
reconcile. Reconcile is an audit that cannot write the table; `reconcile --repair`
runs as its own task definition with its own role (the audit's reads plus the conditional puts
of its repairs), and the nightly schedule starts it unless the stack turns nightly repair off.
The GDPR erasure runs as its own task definition with its own role: with the owner's restore
(which removes delete markers, s3:DeleteObjectVersion to IAM) it is the only role that may delete
object versions; legal holds are an operator's task, apart from the owner's delete and restore.
A quarterly schedule runs the restore drill (`python -m jobs drill`) with a role that may create
and write drill tables only.
Each task role's policy is its job's builder (jobs/<package>/policy.py) over one TaskResources
resolved from the stack's Outputs; the execution role's is components.policies'. The containers
(components/job_containers.py) and the schedules (components/job_schedules.py) have their own
modules. Failed tasks and undeliverable schedule invocations alarm to the alert topic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies
from components._pulumi import child, json_document
from components.alerts import QUIET_EXITS, alert_target, failed_task_alert, queue_depth_alarm
from components.job_containers import SCRATCH_VOLUME, check_reconcile_engine, container_definition, registered_tasks
from components.job_image import JobImage, job_image
from components.job_schedules import JobNetwork, JobSchedules, Scheduled, ScheduleStack, create_schedules
from jobs.contract import layout
from jobs.contract.engines import OcrEngine, ReconcileEngine
from jobs.contract.erasure import DataHoldings
from jobs.contract.iam import CatalogArns, TaskResources
from jobs.contract.metrics import namespace
from jobs.contract.schema import TABLE_STATE_DAYS
from jobs.reconcile import job as reconcile_job
from jobs.runtime.registry import TaskSize, TaskSpec, TaskStack
from jobs.settings import ENV_CATCH_UP_DAYS, ENV_REANCHOR_DAYS, ENV_TABLE_STATE_DAYS

# The tasks that sign the reports they write with the stack's key (ReportSigningKey's signers).
RECONCILE_JOBS = tuple(task.name for task in reconcile_job.JOB.tasks)


@dataclass(frozen=True)
class JobResources:
    """What the tasks work on: the stack's Outputs their roles are granted and their containers named."""

    kms_key_arn: pulumi.Input[str]
    table_arn: pulumi.Input[str]
    index_arn: pulumi.Input[str]
    bucket_arns: Mapping[str, pulumi.Input[str]]  # the data buckets, the audit-data and audit-trail buckets
    arrivals_queue_arn: pulumi.Input[str]
    arrivals_dead_letter_queue_arn: pulumi.Input[str]
    alarm_topic_arn: pulumi.Input[str]  # alarms, and the reconcile's report notices
    # The AWS Backup role the drill's restores from a backup pass on (TableBackups.role_arn).
    backup_role_arn: pulumi.Input[str]
    # The audit catalog's grants (AuditCatalog.grants): with the "athena" reconcile engine only.
    catalog_grants: pulumi.Input[CatalogArns] | None = None
    # The report signing key's ARN (ReportSigningKey.key_arn), which the reconcile tasks sign with
    # and name: an ARN, since an alias can be moved to another key.
    report_signing_key_arn: pulumi.Input[str] | None = None


@dataclass
class BatchJobsArgs:
    stage: str
    region: str
    account_id: pulumi.Input[str]
    resources: JobResources
    # JobSettings.env(): exactly JOB_ENV_VARS; an Output, as the queue URL is known only after it exists.
    job_environment: pulumi.Input[Mapping[str, str]]
    network: JobNetwork
    image: JobImage
    schedules: JobSchedules = field(default_factory=JobSchedules)
    # A task's size by its registry name, over the registry's own (a task not named keeps it).
    sizes: Mapping[str, TaskSize] = field(default_factory=dict)
    # The scheduled drain stops taking work after this many minutes (components.settings derives
    # it from the ingest and reconcile schedules); None: it runs until the queue is empty.
    drain_minutes: int | None = None
    log_retention_days: int = 365
    # Scans in the ingest: "textract" grants the AnalyzeExpense actions; "local"/"off" grant none.
    ocr_engine: OcrEngine = OcrEngine.TEXTRACT
    textract_max_pages: int = 0  # per night, every ingest task's together (jobs/ingest/pages.py); 0: no cap
    # Text-layer PDFs bound for review read by Textract too (components.settings: textractFallback).
    textract_fallback: bool = False
    # "athena": the reconcile and repair run with `reconcile athena`, and their roles get the audit
    # catalog's grants (JobResources.catalog_grants, required then).
    reconcile_engine: str = ReconcileEngine.POLARS
    # The nightly chain: re-anchor with a full export this many days after the last one; a state
    # older than catch-up days is re-anchored too (JobSettings' reconcile_* settings).
    reanchor_days: int = 30
    catch_up_days: int = 7
    table_state_days: int = TABLE_STATE_DAYS  # the states' expiry: how long a state keeps earlier files
    # What still holds an erased user's data, and how long: the erasure's receipt says so.
    holdings: DataHoldings = field(default_factory=DataHoldings)
    tags: dict[str, str] = field(default_factory=dict)


def check_args(args: BatchJobsArgs, tasks: Mapping[str, TaskSpec]) -> None:
    """Refuse arguments the tasks cannot run with (ValueError, before any resource exists)."""
    if args.ocr_engine not in set(OcrEngine):
        raise ValueError(f"ocr_engine must be one of {', '.join(OcrEngine)}, not {args.ocr_engine!r}")
    check_reconcile_engine(args.reconcile_engine)
    if (args.reconcile_engine == ReconcileEngine.ATHENA) != (args.resources.catalog_grants is not None):
        raise ValueError("the athena reconcile engine needs the audit catalog's grants, and only it")
    unknown = set(args.sizes) - set(tasks)
    if unknown:
        raise ValueError(f"no task of the registry is named {sorted(unknown)}")
    args.schedules.scheduled(tasks)


def task_resources(args: BatchJobsArgs) -> pulumi.Output[TaskResources]:
    """Everything a task role may be granted, resolved once; each task's builder picks its own."""
    resources, buckets = args.resources, args.resources.bucket_arns
    inputs: dict[str, Any] = {
        "table_arn": resources.table_arn,
        "index_arn": resources.index_arn,
        "raw_bucket_arn": buckets["raw"],
        "processed_bucket_arn": buckets["processed"],
        "reports_bucket_arn": buckets["reports"],
        "key_arn": resources.kms_key_arn,
        "arrivals_queue_arn": resources.arrivals_queue_arn,
        "arrivals_dead_letter_queue_arn": resources.arrivals_dead_letter_queue_arn,
        "audit_bucket_arn": buckets[layout.AUDIT_DATA],
        "region": args.region,
        "account_id": args.account_id,
        "backup_role_arn": resources.backup_role_arn,
        "metrics_namespace": namespace(args.stage),  # the runs' metrics (jobs.observability)
        "reports_topic_arn": resources.alarm_topic_arn,
        "textract": args.ocr_engine == OcrEngine.TEXTRACT,
        "catalog": resources.catalog_grants,
        # The polars nightly checks the change log (--audit-log): it reads it.
        "audit_log_bucket_arn": buckets.get(layout.AUDIT_LOG)
        if args.reconcile_engine == ReconcileEngine.POLARS
        else None,
        # The Athena engine's table exports are a drill's restore source too.
        "exports_bucket_arn": buckets.get(layout.AUDIT_DATA),
    }
    return pulumi.Output.all(**inputs).apply(lambda values: TaskResources(**values))


def _containers(values: dict[str, Any], *, job: str, args: BatchJobsArgs) -> str:
    """A task definition's containerDefinitions (its one job container) once its Outputs resolve."""
    stack = TaskStack(
        image=values["image"],
        table_arn=values["table_arn"],
        reconcile_engine=args.reconcile_engine,
        drain_minutes=args.drain_minutes,
        ocr_engine=args.ocr_engine,
        textract_max_pages=args.textract_max_pages,
        textract_fallback=args.textract_fallback,
        holdings=args.holdings,
        chain={
            ENV_REANCHOR_DAYS: args.reanchor_days,
            ENV_CATCH_UP_DAYS: args.catch_up_days,
            ENV_TABLE_STATE_DAYS: args.table_state_days,
        },
        signing_key_arn=values["signing_key_arn"],
        reports_topic_arn=values["reports_topic_arn"],
    )
    container = container_definition(
        job=job,
        log_group=values["log_group"],
        region=args.region,
        environment=values["environment"],
        stack=stack,
        schedule_timezone=args.schedules.timezone,
    )
    return json.dumps([container])


def failed_task_pattern(cluster_arn: str, task_definition_arns: Sequence[str]) -> dict[str, Any]:
    """A job task that needs a person: it stopped with an exit code outside alerts.QUIET_EXITS (bad
    input, AWS unreachable, a bug, SIGKILL's 137), or never started (image pull, capacity).
    """
    return {
        "source": ["aws.ecs"],
        "detail-type": ["ECS Task State Change"],
        "detail": {
            "clusterArn": [cluster_arn],
            "taskDefinitionArn": list(task_definition_arns),
            "lastStatus": ["STOPPED"],
            "$or": [
                {"containers": {"exitCode": [{"anything-but": list(QUIET_EXITS)}]}},
                {"stopCode": ["TaskFailedToStart"]},
            ],
        },
    }


def _camel(name: str) -> str:
    head, *rest = name.split("-")
    return head + "".join(part.title() for part in rest)


class BatchJobs(pulumi.ComponentResource):
    """The job runtime, built in the order AWS needs it: cluster, then the task definitions and
    their roles, then the schedules that start them, then the alarms that watch them.
    """

    cluster_arn: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    task_definition_arns: dict[str, pulumi.Output[str]]
    task_role_arns: dict[str, pulumi.Output[str]]
    execution_role_arn: pulumi.Output[str]
    repository_url: pulumi.Output[str] | None
    schedule_names: list[pulumi.Output[str]]
    dead_letter_queue_url: pulumi.Output[str]

    def __init__(self, name: str, args: BatchJobsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:batch_jobs:BatchJobs", name, None, opts)
        self._name = name
        self._args = args
        self._prefix = layout.stage_prefix(args.stage)
        self._tasks = registered_tasks()
        check_args(args, self._tasks)

        cluster, capacity = self._cluster()
        execution_role, task_roles, task_definitions = self._task_definitions()
        stack = ScheduleStack(
            parent=self,
            name=name,
            prefix=self._prefix,
            region=args.region,
            account_id=args.account_id,
            kms_key_arn=args.resources.kms_key_arn,
            network=args.network,
            schedules=args.schedules,
            tags=args.tags,
        )
        schedules, dlq = create_schedules(
            stack, self._tasks, Scheduled(cluster, capacity, execution_role, task_roles, task_definitions)
        )
        self._alarms(cluster, task_definitions, dlq)

        self.cluster_arn = cluster.arn
        self.cluster_name = cluster.name
        self.task_definition_arns = {job: td.arn for job, td in task_definitions.items()}
        self.task_role_arns = {job: r.arn for job, r in task_roles.items()}
        self.execution_role_arn = execution_role.arn
        self.schedule_names = [s.name for s in schedules]
        self.dead_letter_queue_url = dlq.url
        self.register_outputs(
            {
                "cluster_arn": self.cluster_arn,
                "task_definition_arns": self.task_definition_arns,
                "task_role_arns": self.task_role_arns,
                "execution_role_arn": self.execution_role_arn,
                "repository_url": self.repository_url,
                "schedule_names": self.schedule_names,
                "dead_letter_queue_url": self.dead_letter_queue_url,
            }
        )

    def task_definition_exports(self) -> dict[str, pulumi.Output[str]]:
        """Each task definition's ARN as a stack output, `<task>TaskDefinitionArn` (camelCase)."""
        return {f"{_camel(job)}TaskDefinitionArn": arn for job, arn in self.task_definition_arns.items()}

    # --- groups of children --------------------------------------------------------------
    def _cluster(self) -> tuple[aws.ecs.Cluster, aws.ecs.ClusterCapacityProviders]:
        """The cluster and its capacity providers (Fargate, optionally Spot by default)."""
        cluster = aws.ecs.Cluster(
            f"{self._name}-cluster",
            name=f"{self._prefix}-jobs",
            settings=[aws.ecs.ClusterSettingArgs(name="containerInsights", value="enabled")],
            tags=self._args.tags,
            opts=child(self),
        )
        capacity = aws.ecs.ClusterCapacityProviders(
            f"{self._name}-capacity",
            cluster_name=cluster.name,
            capacity_providers=["FARGATE", "FARGATE_SPOT"],
            default_capacity_provider_strategies=[
                aws.ecs.ClusterCapacityProvidersDefaultCapacityProviderStrategyArgs(
                    capacity_provider=self._args.network.capacity_provider, weight=1, base=0
                )
            ],
            opts=child(self),
        )
        return cluster, capacity

    def _task_definitions(
        self,
    ) -> tuple[aws.iam.Role, dict[str, aws.iam.Role], dict[str, aws.ecs.TaskDefinition]]:
        """One log group, task role and task definition per task; one execution role for all."""
        args, name = self._args, self._name
        image, repository_arn, self.repository_url = job_image(
            self, name, f"{self._prefix}-jobs", args.image, args.resources.kms_key_arn, args.tags
        )
        log_groups = {
            job: aws.cloudwatch.LogGroup(
                f"{name}-{job}-logs",
                name=f"/{layout.APP}/{args.stage}/{job}",
                retention_in_days=args.log_retention_days,
                kms_key_id=args.resources.kms_key_arn,
                tags=args.tags,
                opts=child(self),
            )
            for job in self._tasks
        }
        execution_role = self._role("execution", "ecs-tasks.amazonaws.com")
        aws.iam.RolePolicy(
            f"{name}-execution-policy",
            role=execution_role.id,
            policy=json_document(
                policies.execution_role_policy,
                log_group_arns=[g.arn for g in log_groups.values()],
                key_arn=args.resources.kms_key_arn,
                repository_arn=repository_arn,
            ),
            opts=child(self),
        )
        resources = task_resources(args)
        task_roles = {job: self._task_role(job, resources) for job in self._tasks}
        task_definitions = {
            job: self._task_definition(job, image, log_groups[job], execution_role, task_roles[job])
            for job in self._tasks
        }
        return execution_role, task_roles, task_definitions

    def _task_role(self, job: str, resources: pulumi.Output[TaskResources]) -> aws.iam.Role:
        """The task's role, with the policy its registry entry builds from the stack's resources."""
        builder = self._tasks[job].policy
        role = self._role(f"{job}-task", "ecs-tasks.amazonaws.com")
        aws.iam.RolePolicy(
            f"{self._name}-{job}-task-policy",
            role=role.id,
            policy=resources.apply(lambda r: json.dumps(builder(r))),
            opts=child(self),
        )
        return role

    def _task_definition(
        self,
        job: str,
        image: pulumi.Output[str],
        log_group: aws.cloudwatch.LogGroup,
        execution_role: aws.iam.Role,
        role: aws.iam.Role,
    ) -> aws.ecs.TaskDefinition:
        args = self._args
        size = args.sizes.get(job, self._tasks[job].size)
        containers = pulumi.Output.all(
            image=image,
            log_group=log_group.name,
            environment=args.job_environment,
            table_arn=args.resources.table_arn,
            reports_topic_arn=args.resources.alarm_topic_arn,
            signing_key_arn=args.resources.report_signing_key_arn,
        ).apply(partial(_containers, job=job, args=args))
        return aws.ecs.TaskDefinition(
            f"{self._name}-{job}",
            family=f"{self._prefix}-{job}",
            requires_compatibilities=["FARGATE"],
            network_mode="awsvpc",
            cpu=str(size.cpu),
            memory=str(size.memory),
            runtime_platform=aws.ecs.TaskDefinitionRuntimePlatformArgs(
                operating_system_family="LINUX", cpu_architecture="X86_64"
            ),
            execution_role_arn=execution_role.arn,
            task_role_arn=role.arn,
            volumes=[aws.ecs.TaskDefinitionVolumeArgs(name=SCRATCH_VOLUME)],
            container_definitions=containers,
            tags=args.tags,
            opts=child(self),
        )

    def _alarms(
        self,
        cluster: aws.ecs.Cluster,
        task_definitions: Mapping[str, aws.ecs.TaskDefinition],
        dlq: aws.sqs.Queue,
    ) -> None:
        """Undeliverable schedule starts and failed job tasks go to the alert topic."""
        args, name, topic = self._args, self._name, self._args.resources.alarm_topic_arn
        queue_depth_alarm(self, f"{name}-schedule-dlq-alarm", dlq.name, topic, "job schedule", args.tags)
        rule = aws.cloudwatch.EventRule(
            f"{name}-failed-tasks",
            description="DocuFlow job task stopped with a non-zero exit code or failed to start",
            event_pattern=json_document(
                failed_task_pattern,
                cluster_arn=cluster.arn,
                task_definition_arns=[td.arn for td in task_definitions.values()],
            ),
            tags=args.tags,
            opts=child(self),
        )
        # Reshaped for a phone: the job, what its exit code means, where its logs and reports are.
        message = failed_task_alert(args.stage, args.resources.bucket_arns["reports"])
        alert_target(self, f"{name}-failed-tasks-alert", rule, topic, message)

    def _role(self, purpose: str, service: str) -> aws.iam.Role:
        return aws.iam.Role(
            f"{self._name}-{purpose}-role",
            assume_role_policy=json_document(
                policies.assume_role_policy, service=service, account_id=self._args.account_id
            ),
            tags=self._args.tags,
            opts=child(self),
        )
